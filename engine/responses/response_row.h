// One position of a response as a logits row for the stage-by-stage views,
// so the contract's plots and the engine presets apply to it: exact for a full
// row; for a top-N response the listed ids plus one "rest" pseudo-token that
// holds the mass of every other id, which is an approximation, and is labelled so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/sampling_params.h"
#include "engine/responses/explain.h"
#include "engine/responses/response.h"

namespace samplescope {

// The rest pseudo-token's label, everywhere it appears: short and without spaces (plots label
// their bars with it, and draw spaces in labels as visible marks).
inline constexpr const char* kRestLabel = "rest(approx.)";

struct ResponseRow {
    std::vector<double> logits;            // log probabilities (or the row's own numbers), one per entry
    std::vector<std::string> labels;       // each entry's text as bytes ("" where none); the rest: kRestLabel
    std::vector<std::int64_t> ids;         // each entry's engine id (-1 unknown or the rest)
    std::optional<std::size_t> token;      // the generated token's entry
    std::optional<std::size_t> rest;       // the rest pseudo-token's entry
    SamplingParams params;                 // the request's, less the steps the numbers already went through
    bool approximate = false;              // true for a top-N row
    std::string note;                      // one line: what the row is
};

// Throws InputError when the position shows too little to make a row (no
// number for the token and no alternatives).
ResponseRow response_row(const Response& response, std::size_t position, const ExplainSettings& settings);

}  // namespace samplescope
