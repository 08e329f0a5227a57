// The trace as JSON: the one format the CLI prints and the GUI exports.
// Seeds are decimal strings; doubles are written in shortest round-trip form;
// -inf logits (only present with `full`) are written as null.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/core/trace.h"

namespace samplescope {

struct TraceJsonOptions {
    bool full = false;  // every stage's V logits and its probabilities over the kept set
};

nlohmann::ordered_json trace_to_json(const SampleTrace& trace, const TraceJsonOptions& options = {});

}  // namespace samplescope
