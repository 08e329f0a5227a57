// The temperature unit: l / T over the kept ids, with vLLM's raise of small
// temperatures, llama.cpp's T <= 0 and its dynamic temperature. Sources: kRules in engine/stages/pipeline.h.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "engine/base/input_error.h"
#include "engine/stages/row_state.h"
#include "engine/stages/stage_unit.h"

namespace samplescope {

namespace {

// llama.cpp's dynamic temperature (llama_sampler_temp_ext_apply): from the
// entropy H of the candidates' q, normalised by log n, T' = lo + (hi - lo) x
// (H / log n)^exponent with lo = max(0, T - range), hi = T + range. One
// candidate is left as it is. Returns T', which the caller applies as
// llama_sampler_temp_impl does (T' <= 0 keeps the maximum).
std::optional<double> dynamic_temperature(RowState& row, StageTrace& shown) {
    const IdList& kept = row.kept();
    if (kept.size() <= 1) return std::nullopt;
    const SamplingParams& p = row.params;
    const double lo = std::max(0.0, row.r(p.temperature - p.dynatemp_range));
    const double hi = row.r(p.temperature + p.dynatemp_range);
    const double max_entropy = row.r(-row.r(std::log(row.r(1.0 / static_cast<double>(kept.size())))));
    double entropy = 0.0;
    for (const double q : row.kept_probs()) {
        if (q > 0.0) entropy = row.r(entropy - row.r(q * row.r(std::log(q))));
    }
    const double normalised = row.r(entropy / max_entropy);
    const double t = row.r(lo + row.r(row.r(hi - lo) * row.r(std::pow(normalised, p.dynatemp_exponent))));
    shown.entropy = entropy;
    shown.max_entropy = max_entropy;
    shown.temperature_used = t;
    return t;
}

bool temperature(RowState& row, const PipelineStep& step, StepReport& report, StageTrace& shown) {
    double t = row.params.temperature;
    bool dynamic_used = false;
    if (step.rule == Rule::TemperatureLlamaCpp && uses_dynatemp(row.params) && !mirostat_chain(row.pipeline, row.params)) {
        const std::optional<double> dynamic = dynamic_temperature(row, shown);
        if (!dynamic) {
            report.note = "one candidate: dynamic temperature leaves it";
            return false;
        }
        t = *dynamic;
        dynamic_used = true;
        report.note = "dynamic temperature " + format_number(t);
    }
    if (step.rule == Rule::TemperatureLlamaCpp && t <= 0.0) {
        // llama_sampler_temp_impl: only the first maximal logit in array order
        // survives (the candidates are sorted by then, unstably).
        const IdList& kept = row.kept();
        const Values& logits = row.logits();
        const std::int32_t best = argmax_lowest_id(logits.data(), kept.data(), static_cast<std::int64_t>(kept.size()));
        std::size_t maxima = 0;
        for (const auto id : kept) maxima += logits[id] == logits[best] ? 1U : 0U;
        row.greedy_token = best;
        row.draw_after_greedy = true;
        report.tie_at_boundary = maxima > 1;
        if (report.note.empty()) report.note = "T <= 0 keeps the maximum; the draw still runs over it";
        row.set_kept({best});
        return true;
    }
    if (step.rule == Rule::TemperatureVllm && t > 0.0 && t < 1e-2) {
        // SamplingParams.__post_init__ raises every 0 < T < _MAX_TEMP before
        // its greedy test, so no positive temperature reaches greedy.
        t = row.r(1e-2);
        report.note = "temperature raised to 0.01";
    }
    if (t == 1.0) return dynamic_used;
    if (t == 0.0) {
        throw InputError("temperature",
                         "temperature 0 needs a greedy step before the temperature step in pipeline " + row.pipeline.name);
    }
    row.scale(t);
    return true;
}

constexpr std::array<Param, 3> kReads{Param::Temperature, Param::DynatempRange, Param::DynatempExponent};

// Only llama.cpp's temperature has a dynamic range.
bool rule_reads(Rule rule, Param param) {
    return (param != Param::DynatempRange && param != Param::DynatempExponent) || rule == Rule::TemperatureLlamaCpp;
}

}  // namespace

const StageUnit kTemperatureUnit{Stage::Temperature, kReads, listens_always, temperature, rule_reads};

}  // namespace samplescope
