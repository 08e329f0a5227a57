// The temperature unit: l / T over the kept ids, with vLLM's raise of small
// temperatures, llama.cpp's T <= 0 and its dynamic temperature. Sources: kStageRules below.
#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/base/input_error.h"
#include "engine/core/gates.h"
#include "engine/stages/row_state.h"
#include "engine/stages/stage_unit.h"

namespace samplescope {

namespace {

// The dynamic range is on (llama.cpp's temperature rule alone reads it).
bool dynamic_on(const SamplingParams& p, std::size_t) { return gate_dynatemp(p.dynatemp_range); }

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
    if (step.rule == Rule::TemperatureLlamaCpp && dynamic_on(row.params, row.vocab) && !mirostat_chain(row.pipeline, row.params)) {
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

constexpr Param kReads[] = {Param::Temperature, Param::DynatempRange, Param::DynatempExponent};

// Only llama.cpp's temperature has a dynamic range.
bool rule_reads(Rule rule, Param param) {
    return (param != Param::DynatempRange && param != Param::DynatempExponent) || rule == Rule::TemperatureLlamaCpp;
}

constexpr StageUnit kUnit{kReads, listens_always, temperature, rule_reads};

bool gate(const SamplingParams& p, std::size_t) { return gate_temperature(p.temperature); }

constexpr ParamInfo kStageParams[] = {
    {.param = Param::Temperature, .key = "temperature", .label = "Temperature", .default_value = 1.0,
     .slider_min = 0.0, .slider_max = 3.0,
     .formula = "l / T before truncation. T = 0 is greedy (argmax, no draw). Off at 1.",
     .valid_range = ">= 0 and finite", .real = &SamplingParams::temperature, .min = 0.0, .contract = true,
     .role = ParamRole::Switch, .on = gate,
     .badge = [](const SamplingParams& p, std::size_t vocab) {
         return gate_greedy(p.temperature) ? ParamBadge{"greedy", true, {}} : switch_badge(gate(p, vocab), gate(p, vocab), {}, {});
     }},
    {.param = Param::DynatempRange, .key = "dynatemp_range", .label = "Dyn. temp range", .default_value = 0.0,
     .slider_min = 0.0, .slider_max = 2.0,
     .formula = "Dynamic temperature (llama.cpp): T' = lo + (hi - lo) x (H / log n)^exponent, lo = max(0, T - range), "
                "hi = T + range, H the entropy of q over the n candidates. Off at 0.",
     .valid_range = ">= 0 and finite", .real = &SamplingParams::dynatemp_range, .min = 0.0,
     .role = ParamRole::Switch, .on = dynamic_on, .summary = "dynamic T"},
    {.param = Param::DynatempExponent, .key = "dynatemp_exponent", .label = "Dyn. temp exponent",
     .default_value = 1.0, .slider_min = 0.0, .slider_max = 3.0,
     .formula = "The exponent of the normalised entropy in dynamic temperature. Default 1.",
     .valid_range = ">= 0 and finite", .real = &SamplingParams::dynatemp_exponent, .min = 0.0, .on = dynamic_on},
};

constexpr RuleInfo kStageRules[] = {
    {Rule::TemperatureDivide, Stage::Temperature, "divide", "l / T", "spec, sglang, hf, flashinfer-*",
     "Every logit divided by T.",
     "huggingface/transformers src/transformers/generation/logits_process.py TemperatureLogitsWarper; "
     "sgl-project/sglang python/sglang/srt/layers/sampler.py Sampler.forward",
     false},
    {Rule::TemperatureVllm, Stage::Temperature, "vllm", "l / T, T raised to 0.01", "vllm",
     "0 < T < 1e-2 is raised to 1e-2 (_MAX_TEMP); then l / T.",
     "vllm-project/vllm vllm/sampling_params.py SamplingParams.__post_init__ (_MAX_TEMP); "
     "vllm/v1/sample/sampler.py Sampler.sample",
     false},
    {Rule::TemperatureLlamaCpp, Stage::Temperature, "llamacpp", "l / T; T <= 0 keeps the max", "llamacpp",
     "T <= 0: only the first maximal logit stays (the draw still runs over it); else l / T. With a dynamic "
     "range d > 0 (and two or more candidates): T' = lo + (hi - lo) (H / log n)^exponent, lo = max(0, T - d), "
     "hi = T + d, H the entropy of the candidates' q.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_temp_ext_apply, llama_sampler_temp_impl", true},
};

std::string formula(const SamplingParams& p) {
    if (p.dynatemp_range > 0.0) {
        return "Dynamic: T' = lo + (hi - lo) x (H / log n)^e, lo = max(0, T - range), hi = T + range; T = " +
               format_number(p.temperature) + ", range = " + format_number(p.dynatemp_range) + ", e = " +
               format_number(p.dynatemp_exponent) +
               "; H the entropy of q over the n candidates (nats). Each logit is then divided by T'.";
    }
    return "l / T, T = " + format_number(p.temperature) + ".";
}

}  // namespace

extern const StageDescriptor stage_temperature_descriptor;
constinit const StageDescriptor stage_temperature_descriptor{
    .stage = Stage::Temperature,
    .name = "temperature",
    .title = "Temperature",
    .summary = "Every logit divided by T.",
    .contract = true,
    .changes_logits = true,
    .mark = PlotMark::DynamicTemperature,
    .params = kStageParams,
    .rules = kStageRules,
    .gate = gate,
    .off_reason = [](const SamplingParams&, std::size_t) {
        return off_because("temperature = 1", "off at 1", false);
    },
    .formula = formula,
    .unit = &kUnit,
};

}  // namespace samplescope
