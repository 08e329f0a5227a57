#include "kernels/fast_row_host.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "kernels/fast_select.h"
#include "kernels/philox.h"
#include "kernels/rank_key.h"

namespace samplescope::batch {

float FastRowSampler::weight(std::uint64_t key, bool by_mass) const {
    return by_mass ? mass_weight(rank_key_value(key), max_logit_, inverse_temperature_) : 1.0f;
}

void FastRowSampler::collect(std::uint64_t lo, std::uint64_t hi) {
    keys_.clear();
    // The logit half of the key rules most ids out before the id half is built.
    const auto lo32 = static_cast<std::uint32_t>(lo >> 32);
    const auto hi32 = static_cast<std::uint32_t>(hi >> 32);
    for (std::int64_t i = 0; i < vocab_; ++i) {
        const std::uint32_t value_key = order_key(row_[i]);
        if (value_key < lo32 || value_key > hi32) continue;
        const std::uint64_t key = rank_key(row_[i], static_cast<std::int32_t>(i));
        if (key >= lo && key <= hi) keys_.push_back(key);
    }
    // At most kCandidateCapacity keys: the undecided few, never the row.
    std::sort(keys_.begin(), keys_.end(), std::greater<>());
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
    for (int level = 0; level < kSelectLevels; ++level) {
        const int buckets = 1 << digit_width(level);
        std::fill(counts_.begin(), counts_.begin() + buckets, 0U);
        std::fill(masses_.begin(), masses_.begin() + buckets, 0.0);
        const auto lo32 = static_cast<std::uint32_t>(lo >> 32);
        const auto hi32 = static_cast<std::uint32_t>(hi >> 32);
        for (std::int64_t i = 0; i < vocab_; ++i) {
            const std::uint32_t value_key = order_key(row_[i]);
            if (value_key < lo32 || value_key > hi32) continue;
            const std::uint64_t key = rank_key(row_[i], static_cast<std::int32_t>(i));
            if (key < lo || key > hi) continue;
            const std::uint32_t digit = key_digit(key, level);
            ++counts_[digit];
            masses_[digit] += weight(key, by_mass);
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

    // Penalties: a private copy of the row only when a penalty touches it.
    const float* v = row;
    if (table.capacity > 0 && p.uses_penalties()) {
        penalised_.assign(row, row + vocab);
        std::int32_t overflow_id = -1;
        for (std::uint32_t s = 0; s < table.capacity; ++s) {
            const std::int32_t id = table.ids[s];
            if (id == kEmptySlot) continue;
            const double x = table.penalised[s];
            if ((std::isnan(x) || x == HUGE_VAL) && (overflow_id < 0 || id < overflow_id)) overflow_id = id;
            penalised_[id] = penalised_f32(x);
        }
        if (overflow_id >= 0) return fail(RowError::PenaltyOverflow, overflow_id);
        v = penalised_.data();
    }

    // Pass 1: the maximum and the smallest finite logit, in independent lanes so
    // the compiler vectorises the loop; then the first id holding the maximum.
    constexpr std::int64_t kLanes = 16;
    const float inf = std::numeric_limits<float>::infinity();
    float lane_max[kLanes];
    float lane_min[kLanes];
    std::fill(lane_max, lane_max + kLanes, -inf);
    std::fill(lane_min, lane_min + kLanes, inf);
    std::int64_t lane_end = 0;
    for (; lane_end + kLanes <= vocab; lane_end += kLanes) {
        for (std::int64_t j = 0; j < kLanes; ++j) {
            const float x = v[lane_end + j];
            lane_max[j] = x > lane_max[j] ? x : lane_max[j];
            lane_min[j] = (x < lane_min[j] && x != -inf) ? x : lane_min[j];
        }
    }
    float max_logit = *std::max_element(lane_max, lane_max + kLanes);
    float min_logit = *std::min_element(lane_min, lane_min + kLanes);
    for (std::int64_t t = lane_end; t < vocab; ++t) {
        max_logit = std::max(max_logit, v[t]);
        if (v[t] != -inf) min_logit = std::min(min_logit, v[t]);
    }
    if (max_logit == -inf) return fail(RowError::PenaltyEmptiedRow, -1);
    const auto argmax = static_cast<std::int32_t>(std::find(v, v + vocab, max_logit) - v);

    // Pass 2: the logprob's normaliser over all finite ids: f32 terms summed in
    // lanes over short blocks, the block sums in f64.
    double partition = 0.0;
    for (std::int64_t start = 0; start < vocab; start += 1024) {
        const std::int64_t end = std::min(vocab, start + 1024);
        float lane_sum[kLanes] = {};
        std::int64_t k = start;
        for (; k + kLanes <= end; k += kLanes) {
            for (std::int64_t j = 0; j < kLanes; ++j) lane_sum[j] += exp_nonpositive_f32(v[k + j] - max_logit);
        }
        for (; k < end; ++k) lane_sum[0] += exp_nonpositive_f32(v[k] - max_logit);
        for (const float part : lane_sum) partition += static_cast<double>(part);
    }
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
    if (p.uses_top_p()) {
        double total = 0.0;
        if (kept.materialised) {
            for (const auto key : keys_) total += weight(key, true);
        } else {
            for (std::int64_t i = 0; i < vocab; ++i) {
                const std::uint64_t key = rank_key(v[i], static_cast<std::int32_t>(i));
                if (key >= kept.threshold) total += weight(key, true);
            }
        }
        kept = kept.materialised ? walk_materialised(p.top_p * total) : select(kept.threshold, true, p.top_p * total);
    }
    std::uint64_t threshold = kept.threshold;
    if (p.uses_min_p()) threshold = std::max(threshold, min_p_threshold(max_logit, p.temperature, p.min_p));

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
            for (std::int64_t i = 0; i < vocab; ++i) race(rank_key(v[i], static_cast<std::int32_t>(i)));
        }
        result.token = token;
        result.kept_count = kept_count;
        result.logprob = logprob_of(token);
        result.draws_after = position + 1;
        results[j] = result;
    }
    if (mask) {
        for (std::int64_t i = 0; i < vocab; ++i) {
            if (rank_key(v[i], static_cast<std::int32_t>(i)) >= threshold) mask[i] = 1;  // -inf keys lie below any threshold
        }
    }
}

}  // namespace samplescope::batch
