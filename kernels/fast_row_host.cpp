#include "kernels/fast_row_host.h"

#include <algorithm>
#include <atomic>
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

// Each pass below is a template over the register width W (host_lanes.h):
// P = 16 / W registers make the sixteen lanes, lane j being element j % W of
// register j / W, so every width computes the same lanes in the same order.

// The refusal flags of a row, copied into `to` on the way when it is not null
// (the private copy the penalties write into).
template <int W>
SS_LANE_INLINE LogitCheck check_and_copy(const float* row, std::int64_t vocab, float* to) {
    using namespace lanes;
    using F = typename Native<W>::F;
    using I = typename Native<W>::I;
    constexpr int P = kLanes / W;
    I refused[P];
    I finite[P];
    for (int p = 0; p < P; ++p) refused[p] = finite[p] = I{};
    std::int64_t i = 0;
    for (; i + kLanes <= vocab; i += kLanes) {
        for (int p = 0; p < P; ++p) {
            const F x = load<F>(row + i + p * W);
            refused[p] |= x < kInf ? I{} : I{} - 1;
            finite[p] |= x > -kInf ? I{} - 1 : I{};
            if (to) std::memcpy(to + i + p * W, &x, sizeof x);
        }
    }
    bool any_refused = any(refused, P);
    bool any_finite = any(finite, P);
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
template <int W>
SS_LANE_INLINE RowScan scan_row(const float* v, std::int64_t vocab) {
    using namespace lanes;
    using F = typename Native<W>::F;
    using I = typename Native<W>::I;
    constexpr int P = kLanes / W;
    F lane_max[P];
    F lane_min[P];
    I first[P];
    I ids[P];
    I refused[P];
    I finite[P];
    for (int p = 0; p < P; ++p) {
        lane_max[p] = splat<F>(-kInf);
        lane_min[p] = splat<F>(kInf);
        first[p] = refused[p] = finite[p] = I{};
        std::int32_t start[W];
        for (int j = 0; j < W; ++j) start[j] = p * W + j;
        std::memcpy(&ids[p], start, sizeof start);
    }
    std::int64_t end = 0;
    for (; end + kLanes <= vocab; end += kLanes) {
        for (int p = 0; p < P; ++p) {
            const F x = load<F>(v + end + p * W);
            first[p] = x > lane_max[p] ? ids[p] : first[p];
            lane_max[p] = x > lane_max[p] ? x : lane_max[p];
            // -inf never lowers the minimum: it is read as +inf here.
            const F finite_or_inf = x == -kInf ? splat<F>(kInf) : x;
            lane_min[p] = finite_or_inf < lane_min[p] ? finite_or_inf : lane_min[p];
            refused[p] |= x < kInf ? I{} : I{} - 1;
            finite[p] |= x > -kInf ? I{} - 1 : I{};
            ids[p] += kLanes;
        }
    }
    float maxima[kLanes];
    float minima[kLanes];
    std::int32_t firsts[kLanes];
    std::memcpy(maxima, lane_max, sizeof maxima);
    std::memcpy(minima, lane_min, sizeof minima);
    std::memcpy(firsts, first, sizeof firsts);
    RowScan scan{};
    scan.max_logit = *std::max_element(maxima, maxima + kLanes);
    scan.min_logit = *std::min_element(minima, minima + kLanes);
    bool any_refused = any(refused, P);
    bool any_finite = any(finite, P);
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
    for (int j = 0; j < kLanes; ++j) {
        if (maxima[j] == scan.max_logit) argmax = std::min(argmax, firsts[j]);
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
template <int W>
SS_LANE_INLINE double normaliser(const float* v, std::int64_t vocab, float max_logit, const std::uint32_t* bounds,
                                 std::uint32_t* counts) {
    using namespace lanes;
    using F = typename Native<W>::F;
    using I = typename Native<W>::I;
    constexpr int P = kLanes / W;
    I at_or_above[kCoarseBounds][P];
    std::int32_t signed_bounds[kCoarseBounds] = {};
    for (int b = 0; b < kCoarseBounds; ++b) {
        for (int p = 0; p < P; ++p) at_or_above[b][p] = I{};
        if (bounds) signed_bounds[b] = signed_bound(bounds[b]);
    }
    std::uint32_t tail_counts[kCoarseBounds] = {};
    double partition = 0.0;
    for (std::int64_t start = 0; start < vocab; start += 1024) {
        const std::int64_t end = std::min(vocab, start + 1024);
        F sum[P];
        for (int p = 0; p < P; ++p) sum[p] = F{};
        std::int64_t k = start;
        if (!bounds) {
            for (; k + kLanes <= end; k += kLanes) {
                for (int p = 0; p < P; ++p) sum[p] += exp_nonpositive<F, I>(load<F>(v + k + p * W) - max_logit);
            }
        } else {
            for (; k + kLanes <= end; k += kLanes) {
                for (int p = 0; p < P; ++p) {
                    const F x = load<F>(v + k + p * W);
                    sum[p] += exp_nonpositive<F, I>(x - max_logit);
                    const I keys = signed_order_keys<F, I>(x);
                    for (int b = 0; b < kCoarseBounds; ++b) {
                        at_or_above[b][p] += keys >= signed_bounds[b] ? I{} + 1 : I{};
                    }
                }
            }
        }
        float lane_sum[kLanes];
        std::memcpy(lane_sum, sum, sizeof lane_sum);
        for (; k < end; ++k) {
            lane_sum[0] += exp_nonpositive_f32(v[k] - max_logit);
            if (!bounds) continue;
            for (int b = 0; b < kCoarseBounds; ++b) tail_counts[b] += order_key(v[k]) >= bounds[b] ? 1 : 0;
        }
        for (const float part : lane_sum) partition += static_cast<double>(part);
    }
    for (int b = 0; bounds && b < kCoarseBounds; ++b) {
        std::int32_t lanes_of[kLanes];
        std::memcpy(lanes_of, at_or_above[b], sizeof lanes_of);
        std::uint32_t total = tail_counts[b];
        for (const auto c : lanes_of) total += static_cast<std::uint32_t>(c);
        counts[b] = total;
    }
    return partition;
}

// The ids in [begin, end) whose order key lies in [lo32, hi32], in id order,
// written to `out`; returns how many.
template <int W>
SS_LANE_INLINE std::int64_t ids_in_range(const float* v, std::int64_t begin, std::int64_t end, std::uint32_t lo32,
                                         std::uint32_t hi32, std::int32_t* out) {
    using namespace lanes;
    using F = typename Native<W>::F;
    using I = typename Native<W>::I;
    constexpr int kBlock = 64;  // one test for whether 64 ids hold any
    constexpr int R = kBlock / W;
    const std::int32_t lo = signed_bound(lo32);
    const std::int32_t hi = signed_bound(hi32);
    std::int64_t n = 0;
    std::int64_t i = begin;
    for (; i + kBlock <= end; i += kBlock) {
        I inside[R];
        for (int r = 0; r < R; ++r) {
            const I keys = signed_order_keys<F, I>(load<F>(v + i + r * W));
            // 1 where lo <= key <= hi (hi >= lo, so key > hi implies key >= lo).
            inside[r] = (keys >= lo ? I{} + 1 : I{}) - (keys > hi ? I{} + 1 : I{});
        }
        if (!any(inside, R)) continue;
        std::int32_t flags[kBlock];
        std::memcpy(flags, inside, sizeof flags);
        for (int j = 0; j < kBlock; ++j) {
            if (flags[j]) out[n++] = static_cast<std::int32_t>(i + j);
        }
    }
    for (; i < end; ++i) {
        const std::uint32_t key = order_key(v[i]);
        if (key >= lo32 && key <= hi32) out[n++] = static_cast<std::int32_t>(i);
    }
    return n;
}

// One function per pass and target, and the choice among them.
#define SS_HOST_PASS(ret, name, params, args)                          \
    SS_TARGET_V4 ret name##_v4 params { return name<16> args; }        \
    SS_TARGET_V3 ret name##_v3 params { return name<8> args; }         \
    ret name##_generic params { return name<4> args; }                 \
    ret name##_best params {                                           \
        switch (lanes::host_width()) {                                 \
            case 16: return name##_v4 args;                            \
            case 8: return name##_v3 args;                             \
            default: return name##_generic args;                       \
        }                                                              \
    }

SS_HOST_PASS(LogitCheck, check_and_copy, (const float* row, std::int64_t vocab, float* to), (row, vocab, to))
SS_HOST_PASS(RowScan, scan_row, (const float* v, std::int64_t vocab), (v, vocab))
SS_HOST_PASS(double, normaliser,
             (const float* v, std::int64_t vocab, float max_logit, const std::uint32_t* bounds, std::uint32_t* counts),
             (v, vocab, max_logit, bounds, counts))
SS_HOST_PASS(std::int64_t, ids_in_range,
             (const float* v, std::int64_t begin, std::int64_t end, std::uint32_t lo32, std::uint32_t hi32,
              std::int32_t* out),
             (v, begin, end, lo32, hi32, out))
#undef SS_HOST_PASS

constexpr std::int64_t kRangeChunk = 4096;
constexpr std::size_t kCandidateBuffer = 16384;

}  // namespace

namespace lanes {

namespace {

int widest_supported() {
#if SS_HOST_DISPATCH
    __builtin_cpu_init();
    const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    return v4 ? 16 : (v3 ? 8 : 4);
#else
    return 4;
#endif
}

std::atomic<int>& chosen_width() {
    static std::atomic<int> width{widest_supported()};
    return width;
}

}  // namespace

int host_width() { return chosen_width().load(std::memory_order_relaxed); }

int set_host_width(int width) {
    const int widest = widest_supported();
    const int allowed = width >= 16 ? 16 : (width >= 8 ? 8 : 4);
    chosen_width() = allowed < widest ? allowed : widest;
    return host_width();
}

}  // namespace lanes

LogitCheck check_row_logits(const float* row, std::int64_t vocab) { return check_and_copy_best(row, vocab, nullptr); }

template <class F>
void FastRowSampler::for_each_in_range(std::uint32_t lo32, std::uint32_t hi32, F&& f) {
    ++row_reads_;
    range_ids_.resize(kRangeChunk);
    for (std::int64_t start = 0; start < vocab_; start += kRangeChunk) {
        const std::int64_t n = ids_in_range_best(row_, start, std::min(vocab_, start + kRangeChunk), lo32, hi32,
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
        select_levels_ = level + 1;
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
    branches_ = Branches{};
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
        const LogitCheck check = check_and_copy_best(row, vocab, penalised_.data());
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
    const RowScan scan = scan_row_best(v, vocab);
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
        normaliser_best(v, vocab, max_logit, coarse_used_ > 0 ? coarse_bounds_ : nullptr, coarse_counts_);
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
    if (p.uses_top_k(vocab)) {
        kept = select(kept.threshold, false, static_cast<double>(p.top_k));
        branches_.top_k_levels = select_levels_;
        branches_.top_k_materialised = kept.materialised;
    }
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
        branches_.top_p_walked = kept.materialised;
        kept = kept.materialised ? walk_materialised(p.top_p * total) : select(kept.threshold, true, p.top_p * total);
        if (!branches_.top_p_walked) {
            branches_.top_p_levels = select_levels_;
            branches_.top_p_materialised = kept.materialised;
        }
    }
    std::uint64_t threshold = kept.threshold;
    if (p.uses_min_p()) {
        const std::uint64_t bound = min_p_threshold(max_logit, p.temperature, p.min_p);
        branches_.min_p_raised = bound > threshold;
        threshold = std::max(threshold, bound);
    }
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
