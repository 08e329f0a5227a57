// Speculative decoding as JSON (samplescope-cli speculate): each round's draft
// tokens, their acceptance probabilities, uniforms and verdicts, the residual
// or bonus distribution the last token was drawn from (its kept set), the
// emitted tokens; the acceptance counts against their expectation; a diff of
// two presets on one round; a preset's rules with their sources.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

#include "engine/generation/speculative.h"

namespace samplescope {

// `kept_shown`: how many ids of a kept set to list, best first (0: all).
nlohmann::ordered_json speculative_round_to_json(const SpeculativeRound& round, const LanguageModel& model,
                                                 std::size_t kept_shown);

// tested, accepted, rate, expected_rate, standard_error (of the rate), z.
nlohmann::ordered_json speculative_stats_to_json(const SpeculativeStats& stats);

nlohmann::ordered_json spec_round_diff_to_json(const SpecRoundDiff& diff, const SpecPreset& a, const SpecPreset& b,
                                               std::span<const double> uniforms);

// The preset's rule per aspect: name, summary, citation.
nlohmann::ordered_json spec_preset_to_json(const SpecPreset& preset);

}  // namespace samplescope
