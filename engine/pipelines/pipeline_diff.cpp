#include "engine/pipelines/pipeline_diff.h"

#include <algorithm>
#include <cmath>

#include "engine/pipelines/pipeline_runner.h"

namespace samplescope {

PipelineDiff diff_pipelines(const Pipeline& a, const Pipeline& b, const PipelineInput& input,
                            std::uint64_t skip_draws) {
    PipelineInput seeded = input;
    seeded.params.seed = seed_or_chosen(input.params.seed);
    PipelineDiff diff;
    diff.a = trace_pipeline_once(a, seeded, skip_draws);
    diff.b = trace_pipeline_once(b, seeded, skip_draws);

    const SampleTrace& ta = diff.a.trace;
    const SampleTrace& tb = diff.b.trace;
    const IdList& kept_a = ta.final_kept();
    const IdList& kept_b = tb.final_kept();
    std::set_difference(kept_a.begin(), kept_a.end(), kept_b.begin(), kept_b.end(), std::back_inserter(diff.only_a));
    std::set_difference(kept_b.begin(), kept_b.end(), kept_a.begin(), kept_a.end(), std::back_inserter(diff.only_b));

    IdList either;
    std::set_union(kept_a.begin(), kept_a.end(), kept_b.begin(), kept_b.end(), std::back_inserter(either));
    const StageTrace& final_a = ta.stage(Stage::Softmax);
    const StageTrace& final_b = tb.stage(Stage::Softmax);
    double distance = 0.0;  // summed in ascending id order, as every sum of the contract
    for (const auto id : either) {
        const TokenComparison row{id, final_a.prob_of(id), final_b.prob_of(id)};
        distance += std::fabs(row.prob_a - row.prob_b);
        diff.tokens.push_back(row);
    }
    diff.total_variation = 0.5 * distance;
    diff.same_token = ta.token == tb.token;
    return diff;
}

}  // namespace samplescope
