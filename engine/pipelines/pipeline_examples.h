// Small inputs on which two pipelines provably part: the seven of the engine
// study (docs/pipelines.md, "Examples") and the "order A / order B" pair of the
// sampling teaching page. The GUI's Examples menu and the tests read this list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/sampling_params.h"

namespace samplescope {

struct PipelineExample {
    std::string key;          // short id, e.g. "A" or "order"
    std::string title;        // menu text
    std::string description;  // what differs, one or two sentences
    std::vector<double> logits;
    std::vector<std::string> labels;  // empty: shown as tok_<id>
    SamplingParams params;            // seed set, so a run replays
    std::vector<std::int64_t> prompt_ids;
    std::vector<std::int64_t> output_ids;
    std::string pipeline_a;  // the two pipelines that disagree on it
    std::string pipeline_b;
};

const std::vector<PipelineExample>& pipeline_examples();

}  // namespace samplescope
