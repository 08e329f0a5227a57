// Every token of a response, explained: was it possible under the request's
// temperature, top-k, top-p and min-p, given what the response shows? Top-k
// is decided by the token's rank; top-p and min-p by bounds that the listed
// numbers and the mass outside them allow, in the order the engine applies
// its steps (engine/pipelines/pipeline_presets.cpp), so each verdict is kept,
// cut, or "cannot tell" with the reason. A full row (HF generate's logits)
// is replayed through the pipeline exactly. docs/responses.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/sampling_params.h"
#include "engine/core/stage.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/responses/response.h"
#include "engine/stages/pipeline.h"

namespace samplescope {

enum class TokenVerdict {
    Kept,        // the stage certainly kept the token
    Cut,         // the stage certainly cut it: the stated parameters exclude it
    CannotTell,  // the response does not decide it (the reason says why)
    NotReached,  // an earlier step cut it already
    Off,         // the parameter is off, or the step does not run
};
// "kept", "cut", "cannot_tell", "not_reached", "off".
const char* token_verdict_name(TokenVerdict verdict);

struct StageVerdict {
    Stage stage = Stage::TopK;
    TokenVerdict verdict = TokenVerdict::Off;
    std::string parameter;       // "top_p = 0.9"
    std::string quantity;        // what was compared: "rank", "mass before it", "q / max q"
    std::optional<double> lo;    // its bounds (equal when known exactly)
    std::optional<double> hi;    // absent when unbounded
    std::string reason;          // one line
};

struct TokenExplanation {
    std::size_t position = 0;
    std::optional<std::int64_t> id;
    std::string bytes;
    std::optional<double> value;          // the number the response shows for it
    std::int64_t rank_lo = 1;             // its rank in the shown distribution, 1 = the largest
    std::optional<std::int64_t> rank_hi;  // absent when unbounded
    std::size_t alternatives = 0;         // alternatives shown
    std::optional<double> rest_mass;      // the shown distribution's mass outside the list (normalised numbers)
    std::optional<double> entropy_lo;     // the shown distribution's entropy, in nats
    std::optional<double> entropy_hi;     // absent when unbounded (V unknown)
    bool exact = false;                   // decided on the whole row
    std::vector<StageVerdict> stages;     // in the pipeline's order
    TokenVerdict verdict = TokenVerdict::Kept;      // cut if any step cut it; cannot tell if any could not tell
    std::string summary;                  // one line
};

struct ExplainSettings {
    Pipeline pipeline;
    SamplingParams params;
    const LogprobModeInfo* mode = nullptr;   // what the response's numbers are (required)
    std::optional<std::size_t> vocab_size;   // bounds the rest's count and the ranks
    std::vector<std::int64_t> prompt_ids;    // a full row's repetition penalty reads them
    std::vector<std::string> unmodelled;     // request settings the top N cannot replay (a grammar, a logit bias)
};

struct ResponseExplanation {
    std::vector<TokenExplanation> tokens;
    std::size_t kept = 0;
    std::size_t excluded = 0;
    std::size_t undecidable = 0;
    // "12 tokens checked: 9 possible, 1 excluded (position 4), 2 cannot tell".
    std::string summary_line() const;
};

// Tolerance of the verdicts: a compared quantity within this of its threshold
// is "at the boundary" (the engines' comparisons and float32 rounding differ
// there), the same width as a trace's near_boundary (engine/stages/pipeline.h).
inline constexpr double kVerdictTolerance = 1e-6;

TokenExplanation explain_position(const Response& response, std::size_t position, const ExplainSettings& settings);
ResponseExplanation explain_response(const Response& response, const ExplainSettings& settings);

}  // namespace samplescope
