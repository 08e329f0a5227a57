// One row's parameters as the kernels read them: plain data, the same on the
// host and the device, with every switched-off feature at its neutral value
// (temperature 1, top_k = V, top_p 1, min_p 0, penalties 1 / 0 / 0).
#pragma once

#include <cstdint>

#include "engine/core/gates.h"
#include "engine/base/portable.h"

namespace samplescope::batch {

struct RowParams {
    double temperature = 1.0;  // 0: greedy
    std::int64_t top_k = 0;    // neutral: V
    double top_p = 1.0;
    double min_p = 0.0;
    double repetition_penalty = 1.0;
    double presence_penalty = 0.0;
    double frequency_penalty = 0.0;
    std::uint64_t seed = 0;
    std::uint64_t draws_before = 0;

    // The gates: engine/core/gates.h, the same functions the reference's
    // uses_*() call, on the neutral encoding.
    SS_HD bool greedy() const { return gate_greedy(temperature); }
    SS_HD bool uses_repetition() const { return gate_repetition(repetition_penalty); }
    SS_HD bool uses_presence_frequency() const { return gate_presence_frequency(presence_penalty, frequency_penalty); }
    SS_HD bool uses_penalties() const { return uses_repetition() || uses_presence_frequency(); }
    SS_HD bool uses_temperature() const { return gate_temperature(temperature); }
    SS_HD bool uses_top_k(std::int64_t vocab) const { return gate_top_k(top_k, vocab); }
    SS_HD bool uses_top_p() const { return gate_top_p(top_p); }
    SS_HD bool uses_min_p() const { return gate_min_p(min_p); }
};

// Why a row could not be sampled. The first two are the contract's refusals of
// the logits themselves, found by the host twin in its first read of the row;
// the rest are found while computing.
enum class RowError : std::int32_t {
    None = 0,
    PenaltyOverflow = 1,      // a penalty made a logit +inf or NaN
    PenaltyEmptiedRow = 2,    // a penalty pushed every logit to -inf
    TemperatureOverflow = 3,  // l / T overflowed
    RefusedLogit = 4,         // the logit of error_id is NaN or +inf
    NoFiniteLogit = 5,        // every logit is -inf
};

// What a kernel writes for one row (and one draw).
struct RowResult {
    std::int32_t token = -1;
    std::int32_t kept_count = 0;
    double logprob = 0.0;
    std::uint64_t draws_after = 0;
    RowError error = RowError::None;
    std::int32_t error_id = -1;  // the id that triggered the error
};

}  // namespace samplescope::batch
