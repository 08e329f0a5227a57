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

// The maximum of x[0..n), or -inf for n = 0, in four independent chains so the
// comparisons overlap instead of waiting on each other. The maximum of a set
// does not depend on the order it is taken in; the one case where a serial
// scan could return another value is +0 tied with -0 at the top, and then
// l - M and exp(l - M) are the same for every l. NaN is never chosen (the
// rows reaching here have been checked), as in a serial `x > m ? x : m`.
SS_HD inline double row_max(const double* x, std::int64_t n) {
    double m0 = -HUGE_VAL, m1 = -HUGE_VAL, m2 = -HUGE_VAL, m3 = -HUGE_VAL;
    std::int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        m0 = x[i] > m0 ? x[i] : m0;
        m1 = x[i + 1] > m1 ? x[i + 1] : m1;
        m2 = x[i + 2] > m2 ? x[i + 2] : m2;
        m3 = x[i + 3] > m3 ? x[i + 3] : m3;
    }
    for (; i < n; ++i) m0 = x[i] > m0 ? x[i] : m0;
    m0 = m1 > m0 ? m1 : m0;
    m2 = m3 > m2 ? m3 : m2;
    return m2 > m0 ? m2 : m0;
}

// The same over the ids listed (any order).
SS_HD inline double max_over_ids(const double* logits, const std::int32_t* ids, std::int64_t n) {
    double m0 = -HUGE_VAL, m1 = -HUGE_VAL;
    std::int64_t i = 0;
    for (; i + 2 <= n; i += 2) {
        m0 = logits[ids[i]] > m0 ? logits[ids[i]] : m0;
        m1 = logits[ids[i + 1]] > m1 ? logits[ids[i + 1]] : m1;
    }
    for (; i < n; ++i) m0 = logits[ids[i]] > m0 ? logits[ids[i]] : m0;
    return m1 > m0 ? m1 : m0;
}

// Whether every x[i] is finite, in one pass of four chains: x * 0 is 0 for a
// finite x and NaN for an infinite or NaN one, and a sum that met a NaN stays NaN.
SS_HD inline bool all_finite(const double* x, std::int64_t n) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    std::int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i] * 0.0;
        s1 += x[i + 1] * 0.0;
        s2 += x[i + 2] * 0.0;
        s3 += x[i + 3] * 0.0;
    }
    for (; i < n; ++i) s0 += x[i] * 0.0;
    return (s0 + s1) + (s2 + s3) == 0.0;
}

// The largest |x| of a row (0 for n = 0), in four chains as row_max.
SS_HD inline double row_max_abs(const double* x, std::int64_t n) {
    double m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0;
    std::int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        m0 = ::fabs(x[i]) > m0 ? ::fabs(x[i]) : m0;
        m1 = ::fabs(x[i + 1]) > m1 ? ::fabs(x[i + 1]) : m1;
        m2 = ::fabs(x[i + 2]) > m2 ? ::fabs(x[i + 2]) : m2;
        m3 = ::fabs(x[i + 3]) > m3 ? ::fabs(x[i + 3]) : m3;
    }
    for (; i < n; ++i) m0 = ::fabs(x[i]) > m0 ? ::fabs(x[i]) : m0;
    m0 = m1 > m0 ? m1 : m0;
    m2 = m3 > m2 ? m3 : m2;
    return m2 > m0 ? m2 : m0;
}

// The same over the ids listed.
SS_HD inline double max_abs_over_ids(const double* x, const std::int32_t* ids, std::int64_t n) {
    double m = 0.0;
    for (std::int64_t i = 0; i < n; ++i) m = ::fabs(x[ids[i]]) > m ? ::fabs(x[ids[i]]) : m;
    return m;
}

// Step 9 over `ids` (ascending): the maximum, then a plain sequential sum in
// ascending id order (the contract fixes the order; a tree sum changes bits).
SS_HD inline SoftmaxSums softmax_sums(const double* logits, const std::int32_t* ids, std::int64_t size) {
    SoftmaxSums sums{max_over_ids(logits, ids, size), 0.0};
    for (std::int64_t i = 0; i < size; ++i) sums.partition += softmax_numerator(logits[ids[i]], sums.max_logit);
    return sums;
}

// Step 9 into q[0..size), aligned with `ids` (ascending): the maximum, each
// numerator and the partition in one loop (softmax_sums' additions, in its
// order), then each quotient. Returns the sums.
SS_HD inline SoftmaxSums softmax_into(const double* logits, const std::int32_t* ids, std::int64_t size, double* q) {
    SoftmaxSums sums{max_over_ids(logits, ids, size), 0.0};
    for (std::int64_t i = 0; i < size; ++i) {
        q[i] = softmax_numerator(logits[ids[i]], sums.max_logit);
        sums.partition += q[i];
    }
    for (std::int64_t i = 0; i < size; ++i) q[i] /= sums.partition;
    return sums;
}

// The same over a whole row: -inf ids add exp(-inf) = +0, which leaves a
// sequential sum unchanged bit for bit, so this equals softmax_sums over the
// finite ids.
SS_HD inline SoftmaxSums row_softmax_sums(const double* logits, std::int64_t size) {
    SoftmaxSums sums{row_max(logits, size), 0.0};
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
