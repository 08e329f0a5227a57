// Token text next to the ids of a trace's JSON, when labels are known (a
// vocabulary, or a logits file that carries them). Adds keys only; the trace's
// own keys stay as trace_to_json writes them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/trace.h"

namespace samplescope {

// Adds "token_text" (the sampled token's label) and "kept_text" (labels aligned
// with "kept"). Does nothing when `labels` is empty; an id without a label gets "".
void add_token_text(nlohmann::ordered_json& trace_json, const SampleTrace& trace, const std::vector<std::string>& labels);

}  // namespace samplescope
