#include "kernels/fast_row_host.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "kernels/fast_select.h"
#include "kernels/host_lanes.h"
#include "kernels/philox.h"
#include "kernels/rank_key.h"

namespace samplescope::batch {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int kCoarseBounds = FastRowSampler::kCoarseBounds;

// The first NaN or +inf id, read again only once a pass has seen one.
std::int32_t first_refused(const float* row, std::int64_t vocab) {
    for (std::int64_t i = 0; i < vocab; ++i) {
        if (!(row[i] < kInf)) return static_cast<std::int32_t>(i);
    }
    return -1;
}

// The refusal flags of a row, copied into `to` on the way when it is not null
// (the private copy the penalties write into).
SS_HOST_CLONES LogitCheck check_and_copy(const float* row, std::int64_t vocab, float* to) {
    using namespace lanes;
    I32 refused{};
    I32 finite{};
    std::int64_t i = 0;
    for (; i + kWidth <= vocab; i += kWidth) {
        const F32 x = load(row + i);
        refused |= x < kInf ? I32{} : I32{} - 1;
        finite |= x > -kInf ? I32{} - 1 : I32{};
        if (to) store(to + i, x);
    }
    bool any_refused = any(refused);
    bool any_finite = any(finite);
    for (; i < vocab; ++i) {
        any_refused = any_refused || !(row[i] < kInf);
        any_finite = any_finite || row[i] > -kInf;
        if (to) to[i] = row[i];
    }
    return {any_refused ? first_refused(row, vocab) : -1, any_finite};
}

struct RowScan {
    float max_logit;
    float min_logit;  // the smallest finite logit
    std::int32_t argmax;  // the lowest id holding the maximum
    LogitCheck check;
};

// Pass 1: the maximum and the smallest finite logit in sixteen lanes (lane j
// takes the ids i = j mod 16 below the last full group), each lane also
// remembering where its maximum first appeared; the lanes then fold in order
// and the few ids past the last group follow one by one.
SS_HOST_CLONES RowScan scan_row(const float* v, std::int64_t vocab) {
    using namespace lanes;
    F32 lane_max = splat(-kInf);
    F32 lane_min = splat(kInf);
    I32 first{};
    I32 ids = iota();
    I32 refused{};
    I32 finite{};
    std::int64_t end = 0;
    for (; end + kWidth <= vocab; end += kWidth, ids += kWidth) {
        const F32 x = load(v + end);
        first = x > lane_max ? ids : first;
        lane_max = x > lane_max ? x : lane_max;
        // -inf never lowers the minimum: it is read as +inf here.
        const F32 finite_or_inf = x == -kInf ? splat(kInf) : x;
        lane_min = finite_or_inf < lane_min ? finite_or_inf : lane_min;
        refused |= x < kInf ? I32{} : I32{} - 1;
        finite |= x > -kInf ? I32{} - 1 : I32{};
    }
    float maxima[kWidth];
    float minima[kWidth];
    store(maxima, lane_max);
    store(minima, lane_min);
    RowScan scan{};
    scan.max_logit = *std::max_element(maxima, maxima + kWidth);
    scan.min_logit = *std::min_element(minima, minima + kWidth);
    bool any_refused = any(refused);
    bool any_finite = any(finite);
    for (std::int64_t t = end; t < vocab; ++t) {
        scan.max_logit = std::max(scan.max_logit, v[t]);
        if (v[t] != -kInf) scan.min_logit = std::min(scan.min_logit, v[t]);
        any_refused = any_refused || !(v[t] < kInf);
        any_finite = any_finite || v[t] > -kInf;
    }
    scan.check = {any_refused ? first_refused(v, vocab) : -1, any_finite};
    // The first id equal to the maximum: the earliest among the lanes that
    // reached it, else the first such id past the last group.
    std::int32_t argmax = std::numeric_limits<std::int32_t>::max();
    for (int j = 0; j < kWidth; ++j) {
        if (maxima[j] == scan.max_logit) argmax = std::min(argmax, first[j]);
    }
    if (argmax == std::numeric_limits<std::int32_t>::max()) {
        argmax = static_cast<std::int32_t>(end);
        while (argmax < vocab && !(v[argmax] == scan.max_logit)) ++argmax;
    }
    scan.argmax = argmax;
    return scan;
}

// Pass 2: the logprob's normaliser over all finite ids: f32 terms summed in
// sixteen lanes over blocks of 1,024 ids, the block sums in f64. When top-k
// runs (`bounds` not null), the same pass counts the order keys at or above
// each of the kCoarseBounds bounds.
SS_HOST_CLONES double normaliser(const float* v, std::int64_t vocab, float max_logit, const std::uint32_t* bounds,
                                 std::uint32_t* counts) {
    using namespace lanes;
    I32 at_or_above[kCoarseBounds];
    for (auto& lane : at_or_above) lane = I32{};
    double partition = 0.0;
    for (std::int64_t start = 0; start < vocab; start += 1024) {
        const std::int64_t end = std::min(vocab, start + 1024);
        F32 sum{};
        std::int64_t k = start;
        if (!bounds) {
            for (; k + kWidth <= end; k += kWidth) sum += exp_nonpositive(load(v + k) - max_logit);
        } else {
            for (; k + kWidth <= end; k += kWidth) {
                const F32 x = load(v + k);
                sum += exp_nonpositive(x - max_logit);
                const U32 keys = order_keys(x);
                for (int b = 0; b < kCoarseBounds; ++b) at_or_above[b] += keys >= bounds[b] ? I32{} + 1 : I32{};
            }
        }
        float lane_sum[kWidth];
        store(lane_sum, sum);
        for (; k < end; ++k) {
            lane_sum[0] += exp_nonpositive_f32(v[k] - max_logit);
            if (!bounds) continue;
            for (int b = 0; b < kCoarseBounds; ++b) at_or_above[b][0] += order_key(v[k]) >= bounds[b] ? 1 : 0;
        }
        for (const float part : lane_sum) partition += static_cast<double>(part);
    }
    for (int b = 0; bounds && b < kCoarseBounds; ++b) {
        std::uint32_t total = 0;
        for (int j = 0; j < kWidth; ++j) total += static_cast<std::uint32_t>(at_or_above[b][j]);
        counts[b] = total;
    }
    return partition;
}

// The ids in [begin, end) whose order key lies in [lo32, hi32], in id order,
// written to `out`; returns how many.
SS_HOST_CLONES std::int64_t ids_in_range(const float* v, std::int64_t begin, std::int64_t end, std::uint32_t lo32,
                                         std::uint32_t hi32, std::int32_t* out) {
    using namespace lanes;
    constexpr int kGroups = 4;  // one test for whether 64 ids hold any
    // lo32 <= key <= hi32 as one unsigned comparison: key - lo32 <= hi32 - lo32.
    const std::uint32_t span = hi32 - lo32;
    std::int64_t n = 0;
    std::int64_t i = begin;
    for (; i + kGroups * kWidth <= end; i += kGroups * kWidth) {
        I32 inside[kGroups];
        I32 seen{};
        for (int g = 0; g < kGroups; ++g) {
            const U32 keys = order_keys(load(v + i + g * kWidth));
            inside[g] = (keys - lo32) <= span;
            seen |= inside[g];
        }
        if (!any(seen)) continue;
        for (int g = 0; g < kGroups; ++g) {
            for (int j = 0; j < kWidth; ++j) {
                if (inside[g][j]) out[n++] = static_cast<std::int32_t>(i + g * kWidth + j);
            }
        }
    }
    for (; i < end; ++i) {
        const std::uint32_t key = order_key(v[i]);
        if (key >= lo32 && key <= hi32) out[n++] = static_cast<std::int32_t>(i);
    }
    return n;
}

constexpr std::int64_t kRangeChunk = 4096;
constexpr std::size_t kCandidateBuffer = 16384;

}  // namespace

LogitCheck check_row_logits(const float* row, std::int64_t vocab) { return check_and_copy(row, vocab, nullptr); }

template <class F>
void FastRowSampler::for_each_in_range(std::uint32_t lo32, std::uint32_t hi32, F&& f) {
    ++row_reads_;
    range_ids_.resize(kRangeChunk);
    for (std::int64_t start = 0; start < vocab_; start += kRangeChunk) {
        const std::int64_t n = ids_in_range(row_, start, std::min(vocab_, start + kRangeChunk), lo32, hi32,
                                            range_ids_.data());
        for (std::int64_t j = 0; j < n; ++j) f(range_ids_[static_cast<std::size_t>(j)]);
    }
}

float FastRowSampler::weight(std::uint64_t key, bool by_mass) const {
    return by_mass ? mass_weight(rank_key_value(key), max_logit_, inverse_temperature_) : 1.0f;
}

void FastRowSampler::collect(std::uint64_t lo, std::uint64_t hi) {
    keys_.clear();
    if (candidates_valid_ && lo >= candidates_floor_) {
        for (const auto key : candidates_) {
            if (key >= lo && key <= hi) keys_.push_back(key);
        }
    } else {
        // The logit half of the key rules most ids out before the id half is built.
        for_each_in_range(static_cast<std::uint32_t>(lo >> 32), static_cast<std::uint32_t>(hi >> 32),
                          [&](std::int32_t i) {
                              const std::uint64_t key = rank_key(row_[i], i);
                              if (key >= lo && key <= hi) keys_.push_back(key);
                          });
    }
    // At most kCandidateCapacity keys: the undecided few, never the row.
    std::sort(keys_.begin(), keys_.end(), std::greater<>());
}

void FastRowSampler::histogram_from_floor(std::uint32_t floor_digit) {
    // Level 0's digit is the order key's top 11 bits.
    const std::uint32_t floor32 = floor_digit << (32 - kDigitBits);
    std::uint32_t above = 0;
    for (int b = 0; b < coarse_used_; ++b) {
        if (coarse_bounds_[b] == floor32) above = coarse_counts_[b];
    }
    candidates_.clear();
    candidates_floor_ = static_cast<std::uint64_t>(floor32) << 32;
    candidates_valid_ = above <= kCandidateBuffer;
    for_each_in_range(floor32, std::numeric_limits<std::uint32_t>::max(), [&](std::int32_t i) {
        const std::uint64_t key = rank_key(row_[i], i);
        ++counts_[key_digit(key, 0)];
        if (candidates_valid_) candidates_.push_back(key);
    });
}

FastRowSampler::Selection FastRowSampler::walk_materialised(double target) {
    double acc = 0.0;
    for (std::size_t j = 0; j < keys_.size(); ++j) {
        acc += weight(keys_[j], true);
        if (acc >= target) {
            keys_.resize(j + 1);
            break;
        }
    }
    return {keys_.back(), true};
}

FastRowSampler::Selection FastRowSampler::select(std::uint64_t lower, bool by_mass, double target) {
    std::uint64_t lo = lower;
    std::uint64_t hi = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t above_count = 0;
    double above_weight = 0.0;
    counts_.resize(kDigitBuckets);
    masses_.resize(kDigitBuckets);
    // Top-k's first level needs only the buckets from the top down to the one
    // holding the k-th key: the first coarse bound whose count reaches k lies
    // at or below it, so the ids under that bound cannot change the choice.
    std::uint32_t floor_digit = 0;
    if (!by_mass && lower == lowest_finite_key()) {
        for (int b = 0; b < coarse_used_; ++b) {
            if (static_cast<double>(coarse_counts_[b]) >= target) {
                floor_digit = coarse_bounds_[b] >> (32 - kDigitBits);
                break;
            }
        }
    }
    candidates_valid_ = false;
    for (int level = 0; level < kSelectLevels; ++level) {
        const int buckets = 1 << digit_width(level);
        std::fill(counts_.begin(), counts_.begin() + buckets, 0U);
        std::fill(masses_.begin(), masses_.begin() + buckets, 0.0);
        const auto lo32 = static_cast<std::uint32_t>(lo >> 32);
        const auto hi32 = static_cast<std::uint32_t>(hi >> 32);
        const auto add = [&](std::uint64_t key) {
            if (key < lo || key > hi) return;
            const std::uint32_t digit = key_digit(key, level);
            ++counts_[digit];
            if (by_mass) masses_[digit] += weight(key, true);
        };
        if (level == 0 && floor_digit > 0) {
            histogram_from_floor(floor_digit);
        } else if (candidates_valid_ && lo >= candidates_floor_) {
            for (const auto key : candidates_) add(key);
        } else {
            for_each_in_range(lo32, hi32, [&](std::int32_t i) { add(rank_key(row_[i], i)); });
        }
        // Weight 1 sums to the count exactly.
        if (!by_mass) {
            for (int d = 0; d < buckets; ++d) masses_[d] = static_cast<double>(counts_[d]);
        }
        // The bucket where the running weight, from the top, reaches the target
        // (the lowest non-empty one when rounding leaves it short).
        int chosen = -1;
        double before_chosen = above_weight;
        double running = above_weight;
        std::uint64_t count_before = above_count;
        std::uint64_t running_count = above_count;
        for (int d = buckets - 1; d >= 0; --d) {
            if (counts_[d] == 0) continue;
            chosen = d;
            before_chosen = running;
            count_before = running_count;
            running += masses_[d];
            running_count += counts_[d];
            if (running >= target) break;
        }
        const auto digit = static_cast<std::uint32_t>(chosen);
        const std::uint64_t new_lo = std::max(lo, bucket_low(hi, level, digit));
        const std::uint64_t new_hi = std::min(hi, bucket_high(hi, level, digit));
        above_count = count_before;
        above_weight = before_chosen;
        const std::uint64_t in_bucket = counts_[digit];

        if (above_count + in_bucket <= static_cast<std::uint64_t>(kCandidateCapacity)) {
            // Everything from this bucket up fits: the kept set comes out materialised.
            collect(new_lo, std::numeric_limits<std::uint64_t>::max());
            double acc = 0.0;
            for (std::size_t j = 0; j < keys_.size(); ++j) {
                acc += weight(keys_[j], by_mass);
                if (acc >= target) {
                    keys_.resize(j + 1);
                    return {keys_[j], true};
                }
            }
            return {keys_.back(), true};
        }
        if (in_bucket <= static_cast<std::uint64_t>(kCandidateCapacity)) {
            collect(new_lo, new_hi);
            double acc = above_weight;
            for (const auto key : keys_) {
                acc += weight(key, by_mass);
                if (acc >= target) return {key, false};
            }
            return {keys_.back(), false};
        }
        lo = new_lo;
        hi = new_hi;
    }
    return {lo, false};  // not reached: the last level's buckets hold one key each
}

void FastRowSampler::sample(const float* row, std::int64_t vocab, const RowParams& p, const HistoryTable& table,
                            std::uint8_t* mask, std::int32_t draws, RowResult* results) {
    RowResult result;
    result.draws_after = p.draws_before;
    const auto fail = [&](RowError error, std::int32_t id) {
        result.error = error;
        result.error_id = id;
        std::fill(results, results + draws, result);
    };
    const auto refuse = [&](const LogitCheck& check) {
        if (check.refused_id >= 0) return fail(RowError::RefusedLogit, check.refused_id);
        fail(RowError::NoFiniteLogit, -1);
    };

    // Penalties: a private copy of the row only when a penalty touches it; the
    // copy's pass checks the logits as they came.
    const float* v = row;
    const bool penalised = table.capacity > 0 && p.uses_penalties();
    if (penalised) {
        penalised_.resize(static_cast<std::size_t>(vocab));
        ++row_reads_;
        const LogitCheck check = check_and_copy(row, vocab, penalised_.data());
        if (!check.ok()) return refuse(check);
        std::int32_t overflow_id = -1;
        for (std::uint32_t s = 0; s < table.capacity; ++s) {
            const std::int32_t id = table.ids[s];
            if (id == kEmptySlot) continue;
            const double x = table.penalised[s];
            if ((std::isnan(x) || x == HUGE_VAL) && (overflow_id < 0 || id < overflow_id)) overflow_id = id;
            penalised_[static_cast<std::size_t>(id)] = penalised_f32(x);
        }
        if (overflow_id >= 0) return fail(RowError::PenaltyOverflow, overflow_id);
        v = penalised_.data();
    }

    // Pass 1: the maximum, the smallest finite logit, the first id holding the
    // maximum and (without penalties) the logits' check.
    ++row_reads_;
    const RowScan scan = scan_row(v, vocab);
    if (!penalised && !scan.check.ok()) return refuse(scan.check);
    const float max_logit = scan.max_logit;
    const float min_logit = scan.min_logit;
    if (max_logit == -kInf) return fail(RowError::PenaltyEmptiedRow, -1);
    const std::int32_t argmax = scan.argmax;

    // Pass 2: the normaliser; with top-k, also the counts of keys at or above
    // the level-0 buckets from the maximum's down.
    // Top-k's coarse bounds: the level-0 buckets from the maximum's down, one
    // at a time, then further apart (repeating the lowest finite one at the end).
    coarse_used_ = 0;
    if (!p.greedy() && p.uses_top_k(vocab)) {
        const auto lowest = static_cast<std::int64_t>(lowest_finite_key() >> (64 - kDigitBits));
        const auto top = static_cast<std::int64_t>(order_key(max_logit) >> (32 - kDigitBits));
        constexpr std::int64_t kSteps[kCoarseBounds] = {0, 1, 2, 3, 4, 6, 8, 12};
        for (const auto step : kSteps) {
            coarse_bounds_[coarse_used_++] = static_cast<std::uint32_t>(std::max(lowest, top - step)) << (32 - kDigitBits);
        }
    }
    ++row_reads_;
    const double partition =
        normaliser(v, vocab, max_logit, coarse_used_ > 0 ? coarse_bounds_ : nullptr, coarse_counts_);
    const double log_partition = std::log(partition);
    const auto logprob_of = [&](std::int32_t id) {
        return static_cast<double>(v[id]) - static_cast<double>(max_logit) - log_partition;
    };

    if (p.greedy()) {
        result.token = argmax;
        result.kept_count = 1;
        result.logprob = logprob_of(argmax);
        if (mask) mask[argmax] = 1;
        std::fill(results, results + draws, result);
        return;
    }
    const double largest = std::max(std::fabs(static_cast<double>(max_logit)), std::fabs(static_cast<double>(min_logit)));
    if (!std::isfinite(largest / p.temperature)) {
        const std::int32_t id = std::fabs(max_logit) >= std::fabs(min_logit) ? argmax : -1;
        return fail(RowError::TemperatureOverflow, id);
    }

    row_ = v;
    vocab_ = vocab;
    max_logit_ = max_logit;
    inverse_temperature_ = static_cast<float>(1.0 / p.temperature);

    Selection kept{lowest_finite_key(), false};
    if (p.uses_top_k(vocab)) kept = select(kept.threshold, false, static_cast<double>(p.top_k));
    coarse_used_ = 0;
    if (p.uses_top_p()) {
        double total = 0.0;
        if (kept.materialised) {
            for (const auto key : keys_) total += weight(key, true);
        } else {
            const std::uint64_t threshold = kept.threshold;
            for_each_in_range(static_cast<std::uint32_t>(threshold >> 32), std::numeric_limits<std::uint32_t>::max(),
                              [&](std::int32_t i) {
                                  const std::uint64_t key = rank_key(v[i], i);
                                  if (key >= threshold) total += weight(key, true);
                              });
        }
        kept = kept.materialised ? walk_materialised(p.top_p * total) : select(kept.threshold, true, p.top_p * total);
    }
    std::uint64_t threshold = kept.threshold;
    if (p.uses_min_p()) threshold = std::max(threshold, min_p_threshold(max_logit, p.temperature, p.min_p));
    const auto threshold32 = static_cast<std::uint32_t>(threshold >> 32);
    constexpr std::uint32_t kTop32 = std::numeric_limits<std::uint32_t>::max();

    // The draw: a Gumbel race over the kept set.
    std::int32_t kept_count = 0;
    for (std::int32_t j = 0; j < draws; ++j) {
        const std::uint64_t position = p.draws_before + static_cast<std::uint64_t>(j);
        double best = -HUGE_VAL;
        std::int32_t token = -1;
        kept_count = 0;
        const auto race = [&](std::uint64_t key) {
            if (key < threshold) return;
            ++kept_count;
            const std::int32_t id = rank_key_id(key);
            const double score = gumbel_score(rank_key_value(key), p.temperature, p.seed, position, id);
            if (score > best || (score == best && id < token)) {
                best = score;
                token = id;
            }
        };
        if (kept.materialised) {
            for (const auto key : keys_) race(key);
        } else {
            for_each_in_range(threshold32, kTop32, [&](std::int32_t i) { race(rank_key(v[i], i)); });
        }
        result.token = token;
        result.kept_count = kept_count;
        result.logprob = logprob_of(token);
        result.draws_after = position + 1;
        results[j] = result;
    }
    if (mask) {
        // -inf keys lie below any threshold.
        for_each_in_range(threshold32, kTop32, [&](std::int32_t i) {
            if (rank_key(v[i], i) >= threshold) mask[i] = 1;
        });
    }
}

}  // namespace samplescope::batch
