// The contract's refusals for a row (section 3) and their one-line messages,
// written once for the reference, the presets and the batch engine. `where`
// prefixes the message (e.g. "row 3: ") where a batch names its row.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "engine/base/input_error.h"

namespace samplescope {

// The logit at `id`, when the contract refuses it as input (NaN or +inf).
// Inline: the checks call it on every logit of a row.
inline bool logit_refused(double x) { return std::isnan(x) || x == std::numeric_limits<double>::infinity(); }
InputError refused_logit_error(std::int64_t id, double x, const std::string& where = "");

// Throws InputError when the row cannot be sampled: V = 0, a NaN or +inf logit
// (naming the first such id), or every logit -inf.
void check_logits(std::span<const double> logits);

// A penalty made the logit of `id` +inf or NaN; `penalty` names it ("repetition_penalty").
InputError penalty_overflow_error(const std::string& penalty, std::int64_t id, double x, const std::string& where = "");
// The penalties pushed every logit to -inf; `penalty` names the field, `said`
// (when not empty) how the message names it ("a penalty" where it is unknown).
InputError penalty_emptied_error(const std::string& penalty, const std::string& where = "", const std::string& said = "");
// l / T overflowed at `id`; `largest` is the largest |l| T divides, which
// gives the smallest temperature these logits allow (unknown when negative).
InputError temperature_overflow_error(double temperature, std::int64_t id, double largest, const std::string& where = "");

}  // namespace samplescope
