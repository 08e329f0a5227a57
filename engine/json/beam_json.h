// Beam search as JSON (samplescope-cli beam): each step's beams, candidates
// (the beam each extends, the token's score, the summed and the
// length-penalised score, rank and fate), the kept beams, the finished
// hypotheses and why the search stopped; the final hypotheses; the rules.
#pragma once

#include <span>

#include <nlohmann/json.hpp>

#include "engine/generation/beam.h"

namespace samplescope {

nlohmann::ordered_json beam_step_to_json(const BeamStep& step, const LanguageModel& model);
nlohmann::ordered_json beam_hypotheses_to_json(std::span<const BeamHypothesis> hypotheses, const LanguageModel& model);
// The rules the search follows, aspect by aspect, with their sources.
nlohmann::ordered_json beam_rules_to_json(BeamRules rules);

}  // namespace samplescope
