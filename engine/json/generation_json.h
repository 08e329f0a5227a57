// A generation as JSON (samplescope-cli generate): the prompt's words, each
// token's step (compact: the token, its text, logprob, u, its probability and
// rank in the final distribution, the kept count and each stage's counts and
// thresholds; full: the trace exactly as `trace` prints it).
#pragma once

#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/generation/generation.h"

namespace samplescope {

// [{"text": "the", "id": 1234}, {"text": "xyzzy", "id": null, "unknown": true}, ...]
nlohmann::ordered_json prompt_to_json(std::span<const PromptWord> prompt);

// One generated token; `index` counts from 0. `labels` name the kept ids in a full trace.
nlohmann::ordered_json generation_step_to_json(const GenerationStep& step, std::size_t index, const Pipeline& pipeline,
                                               const std::vector<std::string>& labels, bool full);

// The token's probability in the step's final distribution (its mixture with
// an XTC coin) and its rank there by (probability desc, id asc), 1-based.
struct TokenStanding {
    double probability = 0.0;
    std::size_t rank = 0;
};
TokenStanding token_standing(const PipelineTrace& trace);
// The same for any id of the step (a word written in place of the drawn one):
// probability 0 and rank 0 when the id is outside the final kept set.
TokenStanding token_standing(const PipelineTrace& trace, std::int64_t token);

}  // namespace samplescope
