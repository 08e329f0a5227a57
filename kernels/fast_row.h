// Fast mode's row routine, written once for the host twin and the GPU.
//
// fast_sample_row() is the control flow: the checks and their errors, the
// normaliser, greedy, the temperature's overflow check, top-k and top-p as one
// weighted radix selection (select_prefix), min-p's threshold, the Gumbel race
// and the kept mask. It is a template over an execution context that does the
// work over the row's elements:
//
//   host (kernels/fast_row_host.cpp)  the lanes of a vector, one row per worker
//   GPU  (kernels/fast_row_cuda.cuh)  the threads of one block per row
//
// Every call to the context is collective (on the GPU every thread of the
// block makes it) and returns the same value to every caller. What a context
// adds up is integer (counts, and masses in fixed point: MassUnits), so a
// bucket or a kept set never depends on the order of the additions; the
// choices of a level (choose_bucket) and the per-element rules
// (fast_select.h, rank_key.h, philox.h) are the functions below, so both
// contexts make the same choices from the same histograms.
//
// A context's contract:
//   FirstPass first_pass()               one read of the row: the refusals (on
//       the logits as they came), then over the penalised logits the maximum,
//       the first id holding it, the smallest finite logit and the normaliser.
//   std::int32_t overflow_id()           the lowest id a penalty made NaN or
//       +inf, or -1.
//   void set_weights(float max, float inverse_temperature)   for mass weights.
//   Histogram histogram(int level, lo, hi, bool by_mass)   counts (and masses)
//       of the keys in [lo, hi] by the level's digit.
//   BucketChoice choose(int top, int floor, bool by_mass, double target,
//       count_above, weight_above)       choose_bucket() on the histogram.
//   std::uint32_t count_at(int digit)    the histogram's count of a digit.
//   std::uint32_t collect(lo, hi)        the keys in [lo, hi] (at most
//       kCandidateCapacity), ranked, as key(0 .. n).
//   int walk(n, by_mass, start, target)  the first index whose running weight
//       from `start` reaches target (n - 1 when none does).
//   std::uint64_t key(int j)
//   void cover(lo)                       gathers the keys >= lo once, so later
//       calls over keys >= lo read them instead of the row.
//   std::uint64_t cover_top(lo, need)    the same for the keys >= a floor of
//       its choice at or above lo, on a level-0 digit's boundary, that at
//       least `need` keys reach when any floor does (else lo); returns it.
//   FastRace race(threshold, selection, p, position)   the Gumbel race over the
//       kept set.
//   std::uint64_t kept_weight(n)         the mass of key(0 .. n), in units.
//   void mark(threshold, selection)      the kept mask; mark_id(id) for one id.
//   float value(std::int32_t id)         the penalised logit of an id.
//   void write_result(int draw, const RowResult&)   writes one result.
//   FastBranches& branches()             which branches the row took.
#pragma once

#include <cstdint>

#include "engine/base/portable.h"
#include "kernels/fast_select.h"
#include "kernels/philox.h"
#include "kernels/rank_key.h"
#include "kernels/row_params.h"

namespace samplescope::batch {

// How many level-0 digits below the maximum's top-k gathers first (two
// binades): its first level is read from those keys when the k-th lies among
// them, as it does in most rows.
inline constexpr int kWindowDigits = 8;

// The lowest key top-k gathers first: kWindowDigits level-0 digits below
// the maximum's, and never below the lowest finite key.
SS_HD inline std::uint64_t window_floor_key(float max_logit) {
    const int top = static_cast<int>(order_key(max_logit) >> (32 - kDigitBits));
    const int lowest = static_cast<int>(lowest_finite_key() >> (64 - kDigitBits));
    const int floor = top - kWindowDigits > lowest ? top - kWindowDigits : lowest;
    return static_cast<std::uint64_t>(floor) << (64 - kDigitBits);
}

struct FirstPass {
    float max_logit = -HUGE_VALF;
    float min_logit = HUGE_VALF;  // the smallest finite logit
    std::int32_t argmax = -1;     // the lowest id holding the maximum
    double partition = 0.0;       // sum exp(l - max_logit) over the finite ids
    std::int32_t refused_id = -1; // the first NaN or +inf id of the logits as they came
    float refused_value = 0.0f;   // its logit
    bool any_finite = false;
};

// The normaliser of the ids seen so far, relative to their maximum, moved to a
// new maximum (online softmax: one read makes both).
SS_HD inline double rescale_partition(double sum, float from_max, float to_max) {
    if (from_max == to_max || sum == 0.0) return sum;
    return sum * ::exp(static_cast<double>(from_max) - static_cast<double>(to_max));
}

// Top-p's masses in fixed point: integer sums are the same in any order, so
// the bucket top-p chooses never depends on how the additions were scheduled.
// A weight lies in [0, 1]; with 2^(62 - ceil(log2 V)) units per 1 the row's
// total stays below 2^62. At V = 128,256 one unit is 2^-45 (about 3e-14).
struct MassUnits {
    double scale = 1.0;
    SS_HD explicit MassUnits(std::int64_t vocab) {
        int bits = 0;
        while ((std::int64_t{1} << bits) < vocab) ++bits;
        for (int i = 0; i < 62 - bits; ++i) scale *= 2.0;
    }
    SS_HD std::uint64_t of(float weight) const {
        return static_cast<std::uint64_t>(static_cast<double>(weight) * scale + 0.5);
    }
};

// A key's weight: 1 for top-k, its mass in units for top-p.
SS_HD inline std::uint64_t key_weight(std::uint64_t key, bool by_mass, float max_logit, float inverse_temperature,
                                      const MassUnits& units) {
    return by_mass ? units.of(mass_weight(rank_key_value(key), max_logit, inverse_temperature)) : 1;
}

struct Histogram {
    int top = -1;                  // the highest non-empty digit (-1: none)
    std::uint64_t total_weight = 0;  // counts or units over every bucket
};

struct BucketChoice {
    int digit = -1;
    std::uint64_t count_above = 0;   // keys in the buckets above it, and above the range
    std::uint64_t weight_above = 0;
    bool reached = false;            // the running weight reached the target
};

// The bucket where the running weight from the top reaches the target,
// looking at digits top .. floor. When it is never reached the lowest
// non-empty bucket is returned with reached = false.
SS_HD inline BucketChoice choose_bucket(const std::uint32_t* counts, const std::uint64_t* units, int top, int floor,
                                        bool by_mass, double target, std::uint64_t count_above,
                                        std::uint64_t weight_above) {
    BucketChoice choice;
    choice.count_above = count_above;
    choice.weight_above = weight_above;
    std::uint64_t running_count = count_above;
    std::uint64_t running_weight = weight_above;
    for (int d = top; d >= floor; --d) {
        if (counts[d] == 0) continue;
        choice.digit = d;
        choice.count_above = running_count;
        choice.weight_above = running_weight;
        running_count += counts[d];
        running_weight += by_mass ? units[d] : counts[d];
        if (static_cast<double>(running_weight) >= target) {
            choice.reached = true;
            break;
        }
    }
    return choice;
}

struct FastSelection {
    std::uint64_t threshold = 0;  // kept: rank key >= threshold
    bool materialised = false;    // the context's key(0 .. count) is the kept set, ranked
    std::uint32_t count = 0;
};

struct FastRace {
    std::int32_t token = -1;
    std::int32_t kept_count = 0;
};

// Which branches a row took, so tests can show they reach each one.
struct FastBranches {
    int top_k_levels = 0;             // radix levels top-k's select looked at (0: not run)
    bool top_k_materialised = false;  // top-k's kept set came out as a ranked list
    bool top_k_window = false;        // top-k's first level came from the keys near the maximum
    int top_p_levels = 0;
    bool top_p_materialised = false;
    bool top_p_walked = false;        // top-p walked top-k's materialised set instead
    bool min_p_raised = false;        // min-p's bound lay above the other stages' threshold
};

// The shortest rank-ordered prefix of the keys >= lower whose weight reaches
// the target (top-k: weight 1, target k; top-p: mass, target `fraction` of
// the keys' total, from level 0's histogram). `first` is the first pass's
// result when the selection starts from the whole row (top-k), else null.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class Ctx>
SS_HD FastSelection select_prefix(Ctx& c, std::uint64_t lower, bool by_mass, double target, bool fraction,
                                  const FirstPass* first, int& levels) {
    std::uint64_t lo = lower;
    std::uint64_t hi = ~0ULL;
    std::uint64_t count_above = 0;
    std::uint64_t weight_above = 0;
    for (int level = 0; level < kSelectLevels; ++level) {
        levels = level + 1;
        BucketChoice choice;
        if (level == 0 && first) {
            // Top-k's k-th key usually lies a few digits below the maximum:
            // the keys there are gathered (one read of the row) and counted.
            const std::uint64_t floor_key =
                c.cover_top(window_floor_key(first->max_logit), static_cast<std::uint64_t>(target));
            const Histogram h = c.histogram(0, floor_key, hi, false);
            choice = c.choose(h.top, static_cast<int>(floor_key >> (64 - kDigitBits)), false, target, 0, 0);
            c.branches().top_k_window = choice.reached;
        }
        if (!choice.reached) {
            const Histogram h = c.histogram(level, lo, hi, by_mass);
            if (level == 0 && fraction) target *= static_cast<double>(h.total_weight);
            choice = c.choose(h.top, 0, by_mass, target, count_above, weight_above);
        }
        const auto digit = static_cast<std::uint32_t>(choice.digit);
        const std::uint64_t bucket_lo = bucket_low(hi, level, digit);
        const std::uint64_t bucket_hi = bucket_high(hi, level, digit);
        const std::uint64_t new_lo = lo > bucket_lo ? lo : bucket_lo;
        const std::uint64_t new_hi = hi < bucket_hi ? hi : bucket_hi;
        count_above = choice.count_above;
        weight_above = choice.weight_above;
        const std::uint64_t in_bucket = c.count_at(choice.digit);
        if (count_above + in_bucket <= static_cast<std::uint64_t>(kCandidateCapacity)) {
            // Everything from this bucket up fits: the kept set comes out ranked.
            const std::uint32_t n = c.collect(new_lo, ~0ULL);
            const int at = c.walk(n, by_mass, 0, target);
            return {c.key(at), true, static_cast<std::uint32_t>(at + 1)};
        }
        // The keys from here up are all later steps read.
        c.cover(new_lo);
        if (in_bucket <= static_cast<std::uint64_t>(kCandidateCapacity)) {
            const std::uint32_t n = c.collect(new_lo, new_hi);
            const int at = c.walk(n, by_mass, weight_above, target);
            return {c.key(at), false, 0};
        }
        lo = new_lo;
        hi = new_hi;
    }
    return {lo, false, 0};  // not reached: the last level's buckets hold one key each
}

// One row of fast mode: `draws` results (positions draws_before + j).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class Ctx>
SS_HD void fast_sample_row(Ctx& c, std::int64_t vocab, const RowParams& p, std::int32_t draws) {
    RowResult result;
    result.draws_after = p.draws_before;
    const auto fail = [&](RowError error, std::int32_t id) {
        result.error = error;
        result.error_id = id;
        for (std::int32_t j = 0; j < draws; ++j) c.write_result(j, result);
    };
    const bool top_k = !p.greedy() && p.uses_top_k(vocab);
    const FirstPass first = c.first_pass();
    if (first.refused_id >= 0) {
        // The refused logit travels in the logprob, for the message of a
        // batch whose logits the host cannot read.
        result.logprob = static_cast<double>(first.refused_value);
        return fail(RowError::RefusedLogit, first.refused_id);
    }
    if (!first.any_finite) return fail(RowError::NoFiniteLogit, -1);
    const std::int32_t overflow = c.overflow_id();
    if (overflow >= 0) return fail(RowError::PenaltyOverflow, overflow);
    const float max_logit = first.max_logit;
    if (!(max_logit > -HUGE_VALF)) return fail(RowError::PenaltyEmptiedRow, -1);
    const double log_partition = ::log(first.partition);
    const auto logprob_of = [&](std::int32_t id) {
        return static_cast<double>(c.value(id)) - static_cast<double>(max_logit) - log_partition;
    };

    if (p.greedy()) {
        result.token = first.argmax;
        result.kept_count = 1;
        result.logprob = logprob_of(first.argmax);
        c.mark_id(first.argmax);
        for (std::int32_t j = 0; j < draws; ++j) c.write_result(j, result);
        return;
    }
    const double top = ::fabs(static_cast<double>(max_logit));
    const double bottom = ::fabs(static_cast<double>(first.min_logit));
    const double scaled = (top > bottom ? top : bottom) / p.temperature;
    if (!(scaled - scaled == 0.0)) {  // not finite
        return fail(RowError::TemperatureOverflow, top >= bottom ? first.argmax : -1);
    }
    c.set_weights(max_logit, static_cast<float>(1.0 / p.temperature));

    FastSelection kept{lowest_finite_key(), false, 0};
    FastBranches& branches = c.branches();
    if (top_k) {
        kept = select_prefix(c, kept.threshold, false, static_cast<double>(p.top_k), false, &first,
                             branches.top_k_levels);
        branches.top_k_materialised = kept.materialised;
    }
    if (p.uses_top_p()) {
        if (kept.materialised) {
            // Top-p over top-k's ranked set: its total, then the walk.
            branches.top_p_walked = true;
            const std::uint64_t total = c.kept_weight(kept.count);
            const int at = c.walk(kept.count, true, 0, p.top_p * static_cast<double>(total));
            kept = {c.key(at), true, static_cast<std::uint32_t>(at + 1)};
        } else {
            kept = select_prefix(c, kept.threshold, true, p.top_p, true, nullptr, branches.top_p_levels);
            branches.top_p_materialised = kept.materialised;
        }
    }
    std::uint64_t threshold = kept.threshold;
    if (p.uses_min_p()) {
        const std::uint64_t bound = min_p_threshold(max_logit, p.temperature, p.min_p);
        branches.min_p_raised = bound > threshold;
        threshold = bound > threshold ? bound : threshold;
    }
    if (!kept.materialised) c.cover(threshold);

    for (std::int32_t j = 0; j < draws; ++j) {
        const std::uint64_t position = p.draws_before + static_cast<std::uint64_t>(j);
        const FastRace race = c.race(threshold, kept, p, position);
        result.token = race.token;
        result.kept_count = race.kept_count;
        result.logprob = logprob_of(race.token);
        result.draws_after = position + 1;
        c.write_result(j, result);
    }
    c.mark(threshold, kept);
}

}  // namespace samplescope::batch
