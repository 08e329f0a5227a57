// The greedy unit: which temperature switches the draw off, per stack, and the
// argmax with ties to the lowest id. Sources: kRules in engine/stages/pipeline.h.
#include <array>

#include "engine/core/gates.h"
#include "engine/stages/row_state.h"
#include "engine/stages/stage_unit.h"

namespace samplescope {

namespace {

bool triggered(Rule rule, double t, StepReport& report) {
    switch (rule) {
        // vLLM tests T < _SAMPLING_EPS (1e-5) after raising 0 < T < 0.01 to
        // 0.01, so only T = 0 is greedy.
        case Rule::GreedyVllm: return t == 0.0;
        case Rule::GreedySglang:
            if (t < 1e-6) report.note = "T < 1e-6 is T = 1, top_k = 1; a batch of this row alone takes argmax";
            return t < 1e-6;
        case Rule::GreedyHf:
            if (t == 0.0) report.note = "T = 0 read as do_sample=False";
            return t == 0.0;
        default: return gate_greedy(t);
    }
}

bool greedy(RowState& row, const PipelineStep& step, StepReport& report, StageTrace& shown) {
    if (!triggered(step.rule, row.params.temperature, report)) return false;
    // The greedy stage shows the one token; the skipped stages after it keep
    // showing the set greedy chose from.
    const IdList& kept = row.kept();
    row.greedy_token = argmax_lowest_id(row.logits().data(), kept.data(), static_cast<std::int64_t>(kept.size()));
    shown.kept = std::make_shared<const IdList>(IdList{row.greedy_token});
    shown.probs = std::make_shared<const Values>(Values{1.0});
    return true;
}

constexpr std::array<Param, 1> kReads{Param::Temperature};

}  // namespace

const StageUnit kGreedyUnit{Stage::Greedy, kReads, listens_always, greedy};

}  // namespace samplescope
