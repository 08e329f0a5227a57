// Reductions over a row, written once for the reference (engine/pipelines/)
// and the batch engine's exact mode (kernels/exact_row.h), host and device:
// the softmax's maximum and partition in ascending id order, argmax with ties
// to the lowest id, the penalties' outcome test and the inverse-CDF walk with
// its fallback. Plain pointers and sizes, no allocation, so nvcc compiles them.
#pragma once

#include <cstdint>

#include "engine/core/element_math.h"
#include "engine/base/portable.h"

namespace samplescope {

struct SoftmaxSums {
    double max_logit;
    double partition;
};

SS_HD inline bool finite_value(double x) { return x - x == 0.0; }

// Step 9 over `ids` (ascending): the maximum, then a plain sequential sum in
// ascending id order (the contract fixes the order; a tree sum changes bits).
SS_HD inline SoftmaxSums softmax_sums(const double* logits, const std::int32_t* ids, std::int64_t size) {
    SoftmaxSums sums{-HUGE_VAL, 0.0};
    for (std::int64_t i = 0; i < size; ++i) {
        sums.max_logit = logits[ids[i]] > sums.max_logit ? logits[ids[i]] : sums.max_logit;
    }
    for (std::int64_t i = 0; i < size; ++i) sums.partition += softmax_numerator(logits[ids[i]], sums.max_logit);
    return sums;
}

// The same over a whole row: -inf ids add exp(-inf) = +0, which leaves a
// sequential sum unchanged bit for bit, so this equals softmax_sums over the
// finite ids.
SS_HD inline SoftmaxSums row_softmax_sums(const double* logits, std::int64_t size) {
    SoftmaxSums sums{-HUGE_VAL, 0.0};
    for (std::int64_t i = 0; i < size; ++i) sums.max_logit = logits[i] > sums.max_logit ? logits[i] : sums.max_logit;
    for (std::int64_t i = 0; i < size; ++i) sums.partition += softmax_numerator(logits[i], sums.max_logit);
    return sums;
}

// The best of `ids` by (logit desc, id asc): greedy's token.
SS_HD inline std::int32_t argmax_lowest_id(const double* logits, const std::int32_t* ids, std::int64_t size) {
    std::int32_t best = ids[0];
    for (std::int64_t i = 1; i < size; ++i) {
        if (ranks_before(logits[ids[i]], ids[i], logits[best], best)) best = ids[i];
    }
    return best;
}

// What a penalty left at one id: a logit to keep, one to drop (-inf), or one
// the contract refuses (+inf or NaN; section 3).
enum class PenaltyOutcome { Finite, Dropped, Refused };
SS_HD inline PenaltyOutcome penalty_outcome(double x) {
    if (x != x || x == HUGE_VAL) return PenaltyOutcome::Refused;
    return x == -HUGE_VAL ? PenaltyOutcome::Dropped : PenaltyOutcome::Finite;
}

// Step 11: the first of `ids` (ascending), whose running sum of q exceeds u;
// when rounding leaves u at or above the last sum, the largest id with q > 0
// (`fell_back` is then set). `prob(i)` is q of ids[i]; `cumulative`, when not
// null, receives every running sum (the walk then runs to the end).
template <class ProbAt>
SS_HD std::int32_t inverse_cdf_walk(const std::int32_t* ids, std::int64_t size, ProbAt prob, double u,
                                    double* cumulative, bool& fell_back) {
    double c = 0.0;
    std::int32_t chosen = -1;
    for (std::int64_t i = 0; i < size; ++i) {
        c += prob(i);
        if (cumulative) cumulative[i] = c;
        if (chosen < 0 && u < c) {
            chosen = ids[i];
            if (!cumulative) return chosen;
        }
    }
    if (chosen >= 0) return chosen;
    fell_back = true;
    for (std::int64_t i = size; i-- > 0;) {
        if (prob(i) > 0.0) return ids[i];
    }
    return ids[size - 1];
}

}  // namespace samplescope
