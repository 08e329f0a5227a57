// The temperature unit: l / T over the kept ids, with vLLM's raise of small
// temperatures and llama.cpp's T <= 0. Sources: kRules in engine/pipelines/pipeline.h.
#include <array>

#include "engine/base/input_error.h"
#include "engine/pipelines/row_state.h"
#include "engine/pipelines/stage_unit.h"

namespace samplescope {

namespace {

bool temperature(RowState& row, const PipelineStep& step, StepReport& report, StageTrace&) {
    double t = row.params.temperature;
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
        report.note = "T <= 0 keeps the maximum; the draw still runs over it";
        row.set_kept({best});
        return true;
    }
    if (step.rule == Rule::TemperatureVllm && t > 0.0 && t < 1e-2) {
        // SamplingParams.__post_init__ raises every 0 < T < _MAX_TEMP before
        // its greedy test, so no positive temperature reaches greedy.
        t = row.r(1e-2);
        report.note = "temperature raised to 0.01";
    }
    if (t == 1.0) return false;
    if (t == 0.0) {
        throw InputError("temperature",
                         "temperature 0 needs a greedy step before the temperature step in pipeline " + row.pipeline.name);
    }
    row.scale(t);
    return true;
}

constexpr std::array<Param, 1> kReads{Param::Temperature};

}  // namespace

const StageUnit kTemperatureUnit{Stage::Temperature, kReads, listens_always, temperature};

}  // namespace samplescope
