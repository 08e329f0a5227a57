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

struct BlockScan {
    float max_logit;
    float min_logit;      // the smallest finite logit
    std::int32_t first;   // the lowest index holding the maximum
    bool refused;         // a NaN or +inf
    bool any_finite;
};

// The first pass's scan of one block of at most kBlock ids: the maximum and
// the smallest finite logit in sixteen lanes (lane j takes the indices
// i = j mod 16 below the last full group), each lane also remembering where
// its maximum first appeared; the lanes then fold in order and the few
// indices past the last group follow one by one.
template <int W>
SS_LANE_INLINE BlockScan scan_block(const float* v, std::int64_t n) {
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
    for (; end + kLanes <= n; end += kLanes) {
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
    BlockScan scan{};
    scan.max_logit = *std::max_element(maxima, maxima + kLanes);
    scan.min_logit = *std::min_element(minima, minima + kLanes);
    scan.refused = any(refused, P);
    scan.any_finite = any(finite, P);
    for (std::int64_t t = end; t < n; ++t) {
        scan.max_logit = std::max(scan.max_logit, v[t]);
        if (v[t] != -kInf) scan.min_logit = std::min(scan.min_logit, v[t]);
        scan.refused = scan.refused || !(v[t] < kInf);
        scan.any_finite = scan.any_finite || v[t] > -kInf;
    }
    // The first index equal to the maximum: the earliest among the lanes that
    // reached it, else the first such index past the last group.
    std::int32_t at = std::numeric_limits<std::int32_t>::max();
    for (int j = 0; j < kLanes; ++j) {
        if (maxima[j] == scan.max_logit) at = std::min(at, firsts[j]);
    }
    if (at == std::numeric_limits<std::int32_t>::max()) {
        at = static_cast<std::int32_t>(end);
        while (at < n && !(v[at] == scan.max_logit)) ++at;
    }
    scan.first = at;
    return scan;
}

// The first pass's share of the normaliser over one block: f32 terms
// exp(l - max) summed in sixteen lanes, the lanes added in f64.
template <int W>
SS_LANE_INLINE double block_partition(const float* v, std::int64_t n, float max_logit) {
    using namespace lanes;
    using F = typename Native<W>::F;
    using I = typename Native<W>::I;
    constexpr int P = kLanes / W;
    F sum[P];
    for (int p = 0; p < P; ++p) sum[p] = F{};
    std::int64_t k = 0;
    for (; k + kLanes <= n; k += kLanes) {
        for (int p = 0; p < P; ++p) sum[p] += exp_nonpositive<F, I>(load<F>(v + k + p * W) - max_logit);
    }
    float lane_sum[kLanes];
    std::memcpy(lane_sum, sum, sizeof lane_sum);
    for (; k < n; ++k) lane_sum[0] += exp_nonpositive_f32(v[k] - max_logit);
    double partition = 0.0;
    for (const float part : lane_sum) partition += static_cast<double>(part);
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
        I in_range[R];
        for (int r = 0; r < R; ++r) {
            const I keys = signed_order_keys<F, I>(load<F>(v + i + r * W));
            // -1 where lo <= key <= hi (hi >= lo, so key > hi implies key >= lo).
            in_range[r] = (keys > hi ? I{} + 1 : I{}) - (keys >= lo ? I{} + 1 : I{});
        }
        if (!any(in_range, R)) continue;
        std::uint64_t inside = 0;  // bit j: id i + j lies in the range
        for (int r = 0; r < R; ++r) inside |= static_cast<std::uint64_t>(sign_bits<W>(in_range[r])) << (r * W);
        for (; inside != 0; inside &= inside - 1) out[n++] = static_cast<std::int32_t>(i + __builtin_ctzll(inside));
    }
    for (; i < end; ++i) {
        const std::uint32_t key = order_key(v[i]);
        if (key >= lo32 && key <= hi32) out[n++] = static_cast<std::int32_t>(i);
    }
    return n;
}

// Top-p's weights of one block's ids whose order key lies in [lo32, hi32]:
// mass_weight() and MassUnits::of() lane by lane (the same f32 and f64
// operations, so the same units), for each id in the range its id (relative
// to the block) and units written out; returns how many.
template <int W>
SS_LANE_INLINE std::int64_t block_masses(const float* v, std::int64_t n, std::uint32_t lo32, std::uint32_t hi32,
                                         float max_logit, float inverse_temperature, double scale, std::int32_t* ids,
                                         std::uint64_t* units) {
    using namespace lanes;
    using F = typename Native<W>::F;
    using I = typename Native<W>::I;
    using D = typename Wide<W>::D;
    using L = typename Wide<W>::L;
    constexpr int P = kLanes / W;
    const std::int32_t lo = signed_bound(lo32);
    const std::int32_t hi = signed_bound(hi32);
    std::int64_t found = 0;
    std::int64_t k = 0;
    for (; k + kLanes <= n; k += kLanes) {
        I in_range[P];
        F x[P];
        for (int p = 0; p < P; ++p) {
            x[p] = load<F>(v + k + p * W);
            const I keys = signed_order_keys<F, I>(x[p]);
            in_range[p] = (keys > hi ? I{} + 1 : I{}) - (keys >= lo ? I{} + 1 : I{});
        }
        if (!any(in_range, P)) continue;
        for (int p = 0; p < P; ++p) {
            const F gap = x[p] - max_logit;
            const F weight = gap == 0.0f ? splat<F>(1.0f) : exp_nonpositive<F, I>(gap * inverse_temperature);
            const L u = __builtin_convertvector(__builtin_convertvector(weight, D) * scale + 0.5, L);
            std::uint64_t lane_units[W];
            std::memcpy(lane_units, &u, sizeof lane_units);
            for (std::uint32_t bits = sign_bits<W>(in_range[p]); bits != 0; bits &= bits - 1) {
                const int j = __builtin_ctz(bits);
                ids[found] = static_cast<std::int32_t>(k + p * W + j);
                units[found++] = lane_units[j];
            }
        }
    }
    for (; k < n; ++k) {
        const std::uint32_t key = order_key(v[k]);
        if (key < lo32 || key > hi32) continue;
        const float gap = v[k] - max_logit;
        const float weight = gap == 0.0f ? 1.0f : exp_nonpositive_f32(gap * inverse_temperature);
        ids[found] = static_cast<std::int32_t>(k);
        units[found++] = static_cast<std::uint64_t>(static_cast<double>(weight) * scale + 0.5);
    }
    return found;
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
SS_HOST_PASS(BlockScan, scan_block, (const float* v, std::int64_t n), (v, n))
SS_HOST_PASS(double, block_partition, (const float* v, std::int64_t n, float max_logit), (v, n, max_logit))
SS_HOST_PASS(std::int64_t, block_masses,
             (const float* v, std::int64_t n, std::uint32_t lo32, std::uint32_t hi32, float max_logit,
              float inverse_temperature, double scale, std::int32_t* ids, std::uint64_t* units),
             (v, n, lo32, hi32, max_logit, inverse_temperature, scale, ids, units))
SS_HOST_PASS(std::int64_t, ids_in_range,
             (const float* v, std::int64_t begin, std::int64_t end, std::uint32_t lo32, std::uint32_t hi32,
              std::int32_t* out),
             (v, begin, end, lo32, hi32, out))
#undef SS_HOST_PASS

// Ids per block of the row: the first pass's blocks stay in the L1 cache
// between its scan and its sums.
constexpr std::int64_t kBlock = 1024;

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

// The host's execution context for fast_sample_row() (kernels/fast_row.h):
// one worker, the row's full-row passes in vector code, in blocks of kBlock
// ids; a block holding a penalised id is copied and patched first, so the
// penalties cost no pass of their own.
class HostRowContext {
public:
    HostRowContext(FastRowSampler& s, const float* row, std::int64_t vocab, const HistoryTable& table,
                   bool penalised, std::int32_t overflow_id, std::uint8_t* mask, RowResult* results)
        : s_(s), row_(row), vocab_(vocab), table_(table), penalised_(penalised), overflow_id_(overflow_id), mask_(mask),
          results_(results), units_(vocab) {}

    FirstPass first_pass() {
        ++s_.row_reads_;
        FirstPass pass;
        // A penalty that overflowed refuses the row once the logits are found
        // valid: the pass then only checks them.
        const bool sampled = overflow_id_ < 0;
        bool refused = false;
        for_each_block([&](std::int64_t start, std::int64_t n, const float* block, const LogitCheck* raw) {
            if (refused) return;
            const BlockScan scan = scan_block_best(block, n);
            if (raw ? raw->refused_id >= 0 : scan.refused) {
                refused = true;
                return;
            }
            pass.any_finite = pass.any_finite || (raw ? raw->any_finite : scan.any_finite);
            if (!sampled) return;
            if (scan.max_logit > pass.max_logit) {
                pass.partition = rescale_partition(pass.partition, pass.max_logit, scan.max_logit);
                pass.max_logit = scan.max_logit;
                pass.argmax = static_cast<std::int32_t>(start) + scan.first;
            }
            pass.min_logit = std::min(pass.min_logit, scan.min_logit);
            if (pass.max_logit > -kInf) pass.partition += block_partition_best(block, n, pass.max_logit);
        });
        if (refused) {
            pass.refused_id = first_refused(row_, vocab_);
            pass.refused_value = row_[pass.refused_id];
        }
        return pass;
    }

    std::int32_t overflow_id() const { return overflow_id_; }

    void set_weights(float max_logit, float inverse_temperature) {
        max_logit_ = max_logit;
        inverse_temperature_ = inverse_temperature;
    }

    Histogram histogram(int level, std::uint64_t lo, std::uint64_t hi, bool by_mass) {
        const int buckets = 1 << digit_width(level);
        std::fill(s_.counts_.begin(), s_.counts_.begin() + buckets, 0U);
        std::fill(s_.units_.begin(), s_.units_.begin() + buckets, 0ULL);
        Histogram h;
        const auto add = [&](std::uint64_t key, std::uint64_t units) {
            const auto digit = static_cast<int>(key_digit(key, level));
            ++s_.counts_[static_cast<std::size_t>(digit)];
            s_.units_[static_cast<std::size_t>(digit)] += units;
            h.top = std::max(h.top, digit);
        };
        if (by_mass && !covered(lo)) {
            for_each_key_with_units(lo, hi, add);
        } else {
            for_each_key(lo, hi, [&](std::uint64_t key) { add(key, by_mass ? weight(key, true) : 0); });
        }
        for (int d = 0; d < buckets; ++d) h.total_weight += by_mass ? s_.units_[d] : s_.counts_[d];
        return h;
    }

    BucketChoice choose(int top, int floor, bool by_mass, double target, std::uint64_t count_above,
                        std::uint64_t weight_above) const {
        return choose_bucket(s_.counts_.data(), s_.units_.data(), top, floor, by_mass, target, count_above,
                             weight_above);
    }

    std::uint32_t count_at(int digit) const { return digit >= 0 ? s_.counts_[static_cast<std::size_t>(digit)] : 0U; }

    std::uint32_t collect(std::uint64_t lo, std::uint64_t hi) {
        s_.keys_.clear();
        for_each_key(lo, hi, [&](std::uint64_t key) { s_.keys_.push_back(key); });
        // At most kCandidateCapacity keys: the undecided few, never the row.
        std::sort(s_.keys_.begin(), s_.keys_.end(), std::greater<>());
        return static_cast<std::uint32_t>(s_.keys_.size());
    }

    int walk(std::uint32_t n, bool by_mass, std::uint64_t start, double target) const {
        std::uint64_t running = start;
        for (std::uint32_t j = 0; j < n; ++j) {
            running += weight(s_.keys_[j], by_mass);
            if (static_cast<double>(running) >= target) return static_cast<int>(j);
        }
        return static_cast<int>(n) - 1;
    }

    std::uint64_t key(int j) const { return s_.keys_[static_cast<std::size_t>(j)]; }

    std::uint64_t kept_weight(std::uint32_t n) const {
        std::uint64_t total = 0;
        for (std::uint32_t j = 0; j < n; ++j) total += weight(s_.keys_[j], true);
        return total;
    }

    void cover(std::uint64_t lo) {
        if (covered(lo)) return;
        std::vector<std::uint64_t>& gathered = s_.gathered_;
        gathered.clear();
        for_each_key(lo, ~0ULL, [&](std::uint64_t key) { gathered.push_back(key); });
        gathered_floor_ = lo;
        gathered_valid_ = true;
    }

    // Gathers the keys >= a floor at or above lo that at least `need` keys
    // reach: the floor rises while the row is read, whenever the keys held
    // would still number `need` above a higher digit, so the ids far below the
    // k-th largest stop being held (and, soon, being looked at).
    std::uint64_t cover_top(std::uint64_t lo, std::uint64_t need) {
        if (covered(lo)) return lo;
        std::vector<std::uint64_t>& gathered = s_.gathered_;
        std::uint32_t* counts = s_.counts_.data();
        std::fill(s_.counts_.begin(), s_.counts_.end(), 0U);
        gathered.clear();
        std::uint64_t floor = lo;
        const std::size_t slack = static_cast<std::size_t>(need) * 2 + 256;
        const auto raise = [&] {
            if (gathered.size() < slack) return;
            // The highest digit with at least `need` keys at or above it.
            std::uint64_t running = 0;
            int digit = kDigitBuckets - 1;
            for (; digit > 0; --digit) {
                running += counts[digit];
                if (running >= need) break;
            }
            const std::uint64_t raised = static_cast<std::uint64_t>(digit) << (64 - kDigitBits);
            if (raised <= floor) return;
            floor = raised;
            for (int d = static_cast<int>(key_digit(lo, 0)); d < digit; ++d) counts[d] = 0;
            std::size_t kept = 0;
            for (const std::uint64_t key : gathered) {
                if (key >= floor) gathered[kept++] = key;
            }
            gathered.resize(kept);
        };
        const auto gather = [&](std::uint64_t key) {
            if (key < floor) return;
            gathered.push_back(key);
            ++counts[key_digit(key, 0)];
        };
        // Before each block the floor may rise; the block is filtered at it.
        read_row(
            [&](std::int64_t start, std::int64_t n) {
                raise();
                return ids_in_range_best(row_ + start, 0, n, static_cast<std::uint32_t>(floor >> 32), ~0U,
                                         s_.range_ids_.data());
            },
            [&](std::uint64_t key, std::int64_t) { gather(key); }, gather);
        raise();
        gathered_floor_ = floor;
        gathered_valid_ = true;
        return floor;
    }

    FastRace race(std::uint64_t threshold, const FastSelection& kept, const RowParams& p, std::uint64_t position) {
        double best = -HUGE_VAL;
        FastRace race;
        const auto run = [&](std::uint64_t key) {
            if (key < threshold) return;
            ++race.kept_count;
            const std::int32_t id = rank_key_id(key);
            const double score = gumbel_score(rank_key_value(key), p.temperature, p.seed, position, id);
            if (score > best || (score == best && id < race.token)) {
                best = score;
                race.token = id;
            }
        };
        if (kept.materialised) {
            for (std::uint32_t j = 0; j < kept.count; ++j) run(s_.keys_[j]);
        } else {
            for_each_key(threshold, ~0ULL, run);
        }
        return race;
    }

    void mark(std::uint64_t threshold, const FastSelection& kept) {
        if (!mask_) return;
        if (kept.materialised) {
            for (std::uint32_t j = 0; j < kept.count; ++j) {
                if (s_.keys_[j] >= threshold) mask_[rank_key_id(s_.keys_[j])] = 1;
            }
        } else {
            for_each_key(threshold, ~0ULL, [&](std::uint64_t key) { mask_[rank_key_id(key)] = 1; });
        }
    }

    void mark_id(std::int32_t id) {
        if (mask_) mask_[id] = 1;
    }

    float value(std::int32_t id) const {
        if (penalised_) {
            const std::int64_t slot = history_find(table_, id);
            if (slot >= 0) return penalised_f32(table_.penalised[slot]);
        }
        return row_[id];
    }

    void write_result(int draw, const RowResult& result) { results_[draw] = result; }

    FastBranches& branches() { return s_.branches_; }

private:
    std::uint64_t weight(std::uint64_t key, bool by_mass) const {
        return key_weight(key, by_mass, max_logit_, inverse_temperature_, units_);
    }

    bool covered(std::uint64_t lo) const { return gathered_valid_ && lo >= gathered_floor_; }

    // f(start, n, block, raw) for each block of the row in id order, `block`
    // holding the penalised logits of ids start .. start + n; `raw` is the
    // check of the logits as they came when the block is a patched copy
    // (else the block is the row itself and its own scan checks it).
    template <class F>
    void for_each_block(F&& f) {
        for (std::int64_t start = 0, b = 0; start < vocab_; start += kBlock, ++b) {
            const std::int64_t n = std::min(kBlock, vocab_ - start);
            const std::uint32_t first = penalised_ ? s_.patch_start_[static_cast<std::size_t>(b)] : 0;
            const std::uint32_t last = penalised_ ? s_.patch_start_[static_cast<std::size_t>(b) + 1] : 0;
            if (first < last) {
                float* copy = s_.scratch_.data();
                const LogitCheck raw = check_and_copy_best(row_ + start, n, copy);
                for (std::uint32_t j = first; j < last; ++j) copy[s_.patches_[j].first - start] = s_.patches_[j].second;
                f(start, n, static_cast<const float*>(copy), &raw);
            } else {
                f(start, n, row_ + start, static_cast<const LogitCheck*>(nullptr));
            }
        }
    }

    // f(key) for every rank key in [lo, hi]: from the gathered keys when they
    // cover lo, else from one read of the row, in id order.
    template <class F>
    void for_each_key(std::uint64_t lo, std::uint64_t hi, F&& f) {
        if (covered(lo)) {
            for (const std::uint64_t key : s_.gathered_) {
                if (key >= lo && key <= hi) f(key);
            }
            return;
        }
        const auto lo32 = static_cast<std::uint32_t>(lo >> 32);
        const auto hi32 = static_cast<std::uint32_t>(hi >> 32);
        const auto take = [&](std::uint64_t key) {
            if (key >= lo && key <= hi) f(key);
        };
        read_row(
            [&](std::int64_t start, std::int64_t n) {
                return ids_in_range_best(row_ + start, 0, n, lo32, hi32, s_.range_ids_.data());
            },
            [&](std::uint64_t key, std::int64_t) { take(key); }, take);
    }

    // f(key, units) for every rank key in [lo, hi] with its top-p weight in
    // units, from one read of the row, the weights made in vector lanes.
    template <class F>
    void for_each_key_with_units(std::uint64_t lo, std::uint64_t hi, F&& f) {
        const auto lo32 = static_cast<std::uint32_t>(lo >> 32);
        const auto hi32 = static_cast<std::uint32_t>(hi >> 32);
        const std::uint64_t* units = s_.range_units_.data();
        read_row(
            [&](std::int64_t start, std::int64_t n) {
                return block_masses_best(row_ + start, n, lo32, hi32, max_logit_, inverse_temperature_, units_.scale,
                                         s_.range_ids_.data(), s_.range_units_.data());
            },
            [&](std::uint64_t key, std::int64_t j) {
                if (key >= lo && key <= hi) f(key, units[j]);
            },
            [&](std::uint64_t key) {
                if (key >= lo && key <= hi) f(key, weight(key, true));
            });
    }

    // One read of the row, block by block, as the logits came: find(start, n)
    // writes the block's candidates (indices into the block) to range_ids_
    // and returns how many; hit(key, j) takes the j-th unless its id is
    // penalised; each penalised id of the block is then offered to
    // patch(key), its key made from its penalised logit.
    template <class Find, class Hit, class Patch>
    void read_row(Find&& find, Hit&& hit, Patch&& patch) {
        ++s_.row_reads_;
        const std::int32_t* ids = s_.range_ids_.data();
        const std::uint64_t* patched = s_.patched_bits_.data();
        for (std::int64_t start = 0, b = 0; start < vocab_; start += kBlock, ++b) {
            const std::int64_t n = std::min(kBlock, vocab_ - start);
            const std::int64_t found = find(start, n);
            for (std::int64_t j = 0; j < found; ++j) {
                const auto id = static_cast<std::int32_t>(start + ids[j]);
                if (penalised_ && (patched[id >> 6] >> (id & 63) & 1U)) continue;
                hit(rank_key(row_[id], id), j);
            }
            if (!penalised_) continue;
            for (std::uint32_t j = s_.patch_start_[static_cast<std::size_t>(b)];
                 j < s_.patch_start_[static_cast<std::size_t>(b) + 1]; ++j) {
                patch(rank_key(s_.patches_[j].second, s_.patches_[j].first));
            }
        }
    }

    FastRowSampler& s_;
    const float* row_;
    std::int64_t vocab_;
    HistoryTable table_;
    bool penalised_;
    std::int32_t overflow_id_;
    std::uint8_t* mask_;
    RowResult* results_;
    MassUnits units_;
    float max_logit_ = 0.0f;
    float inverse_temperature_ = 1.0f;
    std::uint64_t gathered_floor_ = 0;
    bool gathered_valid_ = false;
};

void FastRowSampler::sample(const float* row, std::int64_t vocab, const RowParams& p, const HistoryTable& table,
                            std::uint8_t* mask, std::int32_t draws, RowResult* results) {
    branches_ = Branches{};
    counts_.resize(kDigitBuckets);
    units_.resize(kDigitBuckets);
    scratch_.resize(static_cast<std::size_t>(kBlock));
    range_ids_.resize(static_cast<std::size_t>(kBlock));
    range_units_.resize(static_cast<std::size_t>(kBlock));
    // The penalised ids grouped by block (a counting sort), a bit per id, and
    // the lowest id a penalty overflowed.
    std::int32_t overflow_id = -1;
    const bool penalised = table.capacity > 0 && p.uses_penalties();
    if (penalised) {
        const auto blocks = static_cast<std::size_t>((vocab + kBlock - 1) / kBlock);
        patch_start_.assign(blocks + 1, 0U);
        patches_.resize(table.capacity);
        patched_bits_.resize(static_cast<std::size_t>((vocab + 63) / 64));
        for (std::uint32_t s = 0; s < table.capacity; ++s) {
            if (table.ids[s] != kEmptySlot) ++patch_start_[static_cast<std::size_t>(table.ids[s] / kBlock) + 1];
        }
        for (std::size_t b = 0; b < blocks; ++b) patch_start_[b + 1] += patch_start_[b];
        std::vector<std::uint32_t>& next = patch_fill_;
        next.assign(patch_start_.begin(), patch_start_.end() - 1);
        for (std::uint32_t s = 0; s < table.capacity; ++s) {
            const std::int32_t id = table.ids[s];
            if (id == kEmptySlot) continue;
            const double x = table.penalised[s];
            if ((std::isnan(x) || x == HUGE_VAL) && (overflow_id < 0 || id < overflow_id)) overflow_id = id;
            patches_[next[static_cast<std::size_t>(id / kBlock)]++] = {id, penalised_f32(x)};
            patched_bits_[static_cast<std::size_t>(id >> 6)] |= std::uint64_t{1} << (id & 63);
        }
    }
    HostRowContext context(*this, row, vocab, table, penalised, overflow_id, mask, results);
    fast_sample_row(context, vocab, p, draws);
    if (penalised) {
        for (std::uint32_t s = 0; s < table.capacity; ++s) {
            if (table.ids[s] != kEmptySlot) patched_bits_[static_cast<std::size_t>(table.ids[s] >> 6)] = 0;
        }
    }
}

}  // namespace samplescope::batch
