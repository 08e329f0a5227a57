// The trace as JSON: the one format the CLI prints and the GUI exports.
// Seeds are decimal strings; doubles are written in shortest round-trip form;
// -inf logits (only present with `full`) are written as null.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/core/trace.h"

namespace samplescope {

struct TraceJsonOptions {
    bool full = false;  // every stage's V logits and its probabilities over the kept set
    // false: "stages" is left an empty array, in its place among the keys, for
    // a writer that builds each stage's object (trace_stage_to_json) only as it
    // writes it (write_json_streamed in engine/json/json_stream.h).
    bool stages = true;
    // false: the truncation stages' and the final softmax's kept ids and
    // probabilities are left out (their counts and thresholds stay): one
    // line per stage for a generation's tokens.
    bool kept_lists = true;
    // false: no "ignored_params" (a preset's trace writes it after keys of its own).
    bool ignored_params = true;
};

nlohmann::ordered_json trace_to_json(const SampleTrace& trace, const TraceJsonOptions& options = {});

// The object trace_to_json writes for trace.stages[index].
nlohmann::ordered_json trace_stage_to_json(const SampleTrace& trace, std::size_t index,
                                           const TraceJsonOptions& options = {});

}  // namespace samplescope
