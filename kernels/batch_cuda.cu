// The CUDA backend. Exact mode runs the shared row routine (exact_row.h), one
// block per row. Fast mode runs one block per row: the same passes as the host
// twin (fast_row_host.cpp) with block-wide reductions, shared-memory histograms
// for the radix levels, and CUB to order the few collected candidates. The
// per-element rules (penalties, keys, thresholds, Philox, Gumbel noise) are the
// shared __host__ __device__ functions. Every CUDA call's status is checked.
// run_cuda keeps its device buffers, pinned staging, stream and events from one
// batch to the next (DeviceContext) and waits once per batch, at the end.
#include <cuda_runtime.h>

#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda_backend.h"
#include "kernels/exact_row.h"
#include "kernels/fast_select.h"
#include "kernels/history_table.h"
#include "kernels/philox.h"
#include "kernels/rank_key.h"

namespace samplescope::batch {

namespace {

void check(cudaError_t status, const char* call) {
    if (status != cudaSuccess) throw std::runtime_error(std::string("CUDA call ") + call + " failed: " + cudaGetErrorString(status));
}
#define SS_CUDA_CHECK(call) check((call), #call)

// Device memory that frees itself, so a failing call leaks nothing (the
// bandwidth measurement; batches use DeviceContext's buffers).
template <class T>
class DeviceArray {
public:
    explicit DeviceArray(std::size_t count) : count_(count) {
        if (count_ > 0) SS_CUDA_CHECK(cudaMalloc(&data_, count_ * sizeof(T)));
    }
    ~DeviceArray() {
        if (data_) cudaFree(data_);
    }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    T* get() const { return data_; }
    void fill_bytes(int value) {
        if (count_ > 0) SS_CUDA_CHECK(cudaMemset(data_, value, count_ * sizeof(T)));
    }

private:
    T* data_ = nullptr;
    std::size_t count_ = 0;
};

struct DeviceBatch {
    const float* logits;
    std::int64_t vocab;
    const RowParams* params;
    const std::int64_t* prompt_offsets;
    const std::int32_t* prompt_ids;
    const std::int64_t* output_offsets;
    const std::int32_t* output_ids;
    const std::uint64_t* table_offsets;
    std::int32_t* table_ids;
    std::uint32_t* table_context;
    std::uint32_t* table_counts;
    double* table_penalised;
    std::uint8_t* mask;
    std::int32_t draws;
    RowResult* results;
};

__device__ HistoryTable row_table(const DeviceBatch& b, std::int64_t row) {
    const std::uint64_t begin = b.table_offsets[row];
    HistoryTable table;
    table.capacity = static_cast<std::uint32_t>(b.table_offsets[row + 1] - begin);
    table.ids = b.table_ids + begin;
    table.in_context = b.table_context + begin;
    table.output_count = b.table_counts + begin;
    table.penalised = b.table_penalised + begin;
    return table;
}

// ---- exact mode ---------------------------------------------------------------

constexpr int kExactThreads = 256;  // a power of two, as BlockLanes' trees need

// The block's barrier, for BlockLanes (host code never runs a block).
struct BlockBarrier {
    SS_HD void operator()() const {
#if defined(__CUDA_ARCH__)
        __syncthreads();
#endif
    }
};

// One block per row of rows [row_begin, row_begin + gridDim.x): the first
// thread builds the row's history table, then the block runs the shared row
// routine (exact_row.h), its full-row passes split across the threads.
__global__ void __launch_bounds__(kExactThreads) exact_kernel(DeviceBatch b, std::int64_t row_begin, double* ws_logits,
                                                              std::int32_t* ws_kept, std::int32_t* ws_order) {
    __shared__ double values[kExactThreads];
    __shared__ std::int64_t counts[kExactThreads];
    const BlockLanes<BlockBarrier> lanes{static_cast<int>(threadIdx.x), kExactThreads, values, counts, BlockBarrier{}};
    const std::int64_t local = blockIdx.x;
    const std::int64_t row = row_begin + local;
    const float* logits = b.logits + row * b.vocab;
    const RowParams p = b.params[row];
    HistoryTable table = row_table(b, row);
    if (table.capacity > 0 && lanes.leader()) {
        history_clear(table);
        const std::int64_t p0 = b.prompt_offsets[row];
        const std::int64_t o0 = b.output_offsets[row];
        history_add(table, b.prompt_ids + p0, b.prompt_offsets[row + 1] - p0, b.output_ids + o0,
                    b.output_offsets[row + 1] - o0);
        history_fill_penalised(table, logits, p);
    }
    lanes.sync();
    const ExactWorkspace ws{ws_logits + local * b.vocab, ws_kept + local * b.vocab, ws_order + local * b.vocab};
    exact_sample_row(lanes, logits, b.vocab, p, table, ws, b.mask ? b.mask + row * b.vocab : nullptr, b.draws,
                     b.results + row * b.draws);
}

// ---- fast mode ----------------------------------------------------------------

constexpr int kThreads = 256;
constexpr int kItemsPerThread = kCandidateCapacity / kThreads;  // 8
constexpr int kBucketsPerThread = kDigitBuckets / kThreads;     // 8

struct MaxEntry {
    float value;
    std::int32_t id;
    float min_finite;
};
struct MaxOp {
    __device__ MaxEntry operator()(const MaxEntry& a, const MaxEntry& b) const {
        MaxEntry out;
        const bool take_b = b.value > a.value || (b.value == a.value && b.id >= 0 && (a.id < 0 || b.id < a.id));
        out.value = take_b ? b.value : a.value;
        out.id = take_b ? b.id : a.id;
        out.min_finite = a.min_finite < b.min_finite ? a.min_finite : b.min_finite;
        return out;
    }
};
struct RaceEntry {
    double score;
    std::int32_t id;
};
struct RaceOp {
    __device__ RaceEntry operator()(const RaceEntry& a, const RaceEntry& b) const {
        const bool take_b = b.score > a.score || (b.score == a.score && b.id >= 0 && (a.id < 0 || b.id < a.id));
        return take_b ? b : a;
    }
};

using MaxReduce = cub::BlockReduce<MaxEntry, kThreads>;
using RaceReduce = cub::BlockReduce<RaceEntry, kThreads>;
using SumReduce = cub::BlockReduce<double, kThreads>;
using CountReduce = cub::BlockReduce<unsigned long long, kThreads>;
using WeightScan = cub::BlockScan<double, kThreads>;
using CountScan = cub::BlockScan<unsigned long long, kThreads>;
using KeySort = cub::BlockRadixSort<unsigned long long, kThreads, kItemsPerThread>;

struct FastShared {
    union {
        typename MaxReduce::TempStorage max_reduce;
        typename RaceReduce::TempStorage race_reduce;
        typename SumReduce::TempStorage sum_reduce;
        typename CountReduce::TempStorage count_reduce;
        struct {
            typename WeightScan::TempStorage weight;
            typename CountScan::TempStorage count;
        } scan;
    } reduce;
    union {
        struct {
            std::uint32_t counts[kDigitBuckets];
            unsigned long long masses[kDigitBuckets];  // fixed point: see MassUnits
        } histogram;
        typename KeySort::TempStorage sort;
    } work;
    unsigned long long keys[kCandidateCapacity];
    std::uint32_t key_count;
    int chosen;
    int lowest_nonempty;
    int crossing;
    unsigned long long above_count;
    double above_weight;
    int overflow_id;
    MaxEntry max;
    double total;
};

struct FastRow {
    const float* row;
    std::int64_t vocab;
    HistoryTable table;
    bool penalised;
    float max_logit;
    float inverse_temperature;

    __device__ float value(std::int64_t i) const {
        float x = row[i];
        if (penalised) {
            const std::int64_t slot = history_find(table, static_cast<std::int32_t>(i));
            if (slot >= 0) x = penalised_f32(table.penalised[slot]);
        }
        return x;
    }
    __device__ std::uint64_t key(std::int64_t i) const { return rank_key(value(i), static_cast<std::int32_t>(i)); }
    __device__ float weight(std::uint64_t k, bool by_mass) const {
        return by_mass ? mass_weight(rank_key_value(k), max_logit, inverse_temperature) : 1.0f;
    }
};

// Collects the keys in [lo, hi] into shared memory and sorts them descending.
__device__ void collect_sorted(FastShared& s, const FastRow& r, std::uint64_t lo, std::uint64_t hi) {
    if (threadIdx.x == 0) s.key_count = 0;
    __syncthreads();
    for (std::int64_t i = threadIdx.x; i < r.vocab; i += kThreads) {
        const std::uint64_t k = r.key(i);
        if (k >= lo && k <= hi) {
            const std::uint32_t at = atomicAdd(&s.key_count, 1U);
            if (at < kCandidateCapacity) s.keys[at] = k;
        }
    }
    __syncthreads();
    unsigned long long items[kItemsPerThread];
    for (int j = 0; j < kItemsPerThread; ++j) {
        const std::uint32_t at = threadIdx.x * kItemsPerThread + j;
        items[j] = at < s.key_count ? s.keys[at] : 0ULL;  // 0 is below every real key
    }
    __syncthreads();
    KeySort(s.work.sort).SortDescending(items);
    __syncthreads();
    for (int j = 0; j < kItemsPerThread; ++j) s.keys[threadIdx.x * kItemsPerThread + j] = items[j];
    __syncthreads();
}

// Walks the first `count` sorted keys from `start_weight`; returns the index of
// the first whose running weight reaches the target (count - 1 if none).
__device__ int walk_sorted(FastShared& s, const FastRow& r, std::uint32_t count, bool by_mass, double start_weight,
                           double target) {
    double local[kItemsPerThread];
    double thread_sum = 0.0;
    for (int j = 0; j < kItemsPerThread; ++j) {
        const std::uint32_t at = threadIdx.x * kItemsPerThread + j;
        local[j] = at < count ? static_cast<double>(r.weight(s.keys[at], by_mass)) : 0.0;
        thread_sum += local[j];
    }
    double before = 0.0;
    if (threadIdx.x == 0) s.crossing = static_cast<int>(count) - 1;
    __syncthreads();
    WeightScan(s.reduce.scan.weight).ExclusiveSum(thread_sum, before);
    double acc = start_weight + before;
    for (int j = 0; j < kItemsPerThread; ++j) {
        const std::uint32_t at = threadIdx.x * kItemsPerThread + j;
        acc += local[j];
        if (at < count && acc >= target) {
            atomicMin(&s.crossing, static_cast<int>(at));
            break;
        }
    }
    __syncthreads();
    const int crossing = s.crossing;
    __syncthreads();
    return crossing;
}

// Top-p's bucket masses in fixed point: integer atomics give the same sum in
// any order, so the bucket top-p chooses never depends on how the threads
// were scheduled (f32 atomicAdd did, so two runs of one batch could keep
// different sets at a boundary). A weight lies in [0, 1]; with 2^shift units
// per 1 and shift = 62 - ceil(log2 V), a bucket of up to V weights stays below
// 2^62. At V = 128,256 one unit is 2^-45 (about 3e-14).
struct MassUnits {
    int shift;
    __device__ explicit MassUnits(std::int64_t vocab) {
        int bits = 0;
        while ((1LL << bits) < vocab) ++bits;
        shift = 62 - bits;
    }
    __device__ unsigned long long of(float weight) const {
        return __double2ull_rn(::ldexp(static_cast<double>(weight), shift));
    }
    __device__ double mass(unsigned long long units) const { return ::ldexp(static_cast<double>(units), -shift); }
};

struct DeviceSelection {
    std::uint64_t threshold;
    bool materialised;
    std::uint32_t count;  // when materialised: keys[0 .. count) is the kept set
};

__device__ DeviceSelection select_prefix(FastShared& s, const FastRow& r, std::uint64_t lower, bool by_mass, double target) {
    std::uint64_t lo = lower;
    std::uint64_t hi = ~0ULL;
    unsigned long long above_count = 0;
    double above_weight = 0.0;
    const MassUnits units(r.vocab);
    for (int level = 0; level < kSelectLevels; ++level) {
        const int buckets = 1 << digit_width(level);
        for (int d = threadIdx.x; d < kDigitBuckets; d += kThreads) {
            s.work.histogram.counts[d] = 0;
            s.work.histogram.masses[d] = 0;
        }
        if (threadIdx.x == 0) {
            s.chosen = -1;
            s.lowest_nonempty = kDigitBuckets;
        }
        __syncthreads();
        for (std::int64_t i = threadIdx.x; i < r.vocab; i += kThreads) {
            const std::uint64_t k = r.key(i);
            if (k < lo || k > hi) continue;
            const std::uint32_t d = key_digit(k, level);
            atomicAdd(&s.work.histogram.counts[d], 1U);
            if (by_mass) atomicAdd(&s.work.histogram.masses[d], units.of(r.weight(k, true)));
        }
        __syncthreads();
        // Thread t holds buckets from the top: group g = kThreads - 1 - t.
        const int group_top = (kThreads - threadIdx.x) * kBucketsPerThread - 1;
        double group_weight = 0.0;
        unsigned long long group_count = 0;
        for (int j = 0; j < kBucketsPerThread; ++j) {
            const int d = group_top - j;
            if (d >= buckets) continue;
            group_count += s.work.histogram.counts[d];
            group_weight += by_mass ? units.mass(s.work.histogram.masses[d]) : s.work.histogram.counts[d];
        }
        double weight_before = 0.0;
        unsigned long long count_before = 0;
        WeightScan(s.reduce.scan.weight).ExclusiveSum(group_weight, weight_before);
        CountScan(s.reduce.scan.count).ExclusiveSum(group_count, count_before);
        double running = above_weight + weight_before;
        for (int j = 0; j < kBucketsPerThread; ++j) {
            const int d = group_top - j;
            if (d >= buckets || s.work.histogram.counts[d] == 0) continue;
            atomicMin(&s.lowest_nonempty, d);
            running += by_mass ? units.mass(s.work.histogram.masses[d]) : s.work.histogram.counts[d];
            if (running >= target) {
                atomicMax(&s.chosen, d);
                break;
            }
        }
        __syncthreads();
        if (threadIdx.x == 0 && s.chosen < 0) s.chosen = s.lowest_nonempty;
        __syncthreads();
        const int chosen = s.chosen;
        // The owner of the chosen bucket knows the weight of the buckets above it.
        const int owner_top = group_top;
        if (chosen <= owner_top && chosen > owner_top - kBucketsPerThread) {
            double w = above_weight + weight_before;
            unsigned long long c = above_count + count_before;
            for (int d = owner_top; d > chosen; --d) {
                if (d >= buckets) continue;
                w += by_mass ? units.mass(s.work.histogram.masses[d]) : s.work.histogram.counts[d];
                c += s.work.histogram.counts[d];
            }
            s.above_weight = w;
            s.above_count = c;
        }
        __syncthreads();
        above_weight = s.above_weight;
        above_count = s.above_count;
        const unsigned long long in_bucket = s.work.histogram.counts[chosen];
        const std::uint64_t bucket_lo = bucket_low(hi, level, static_cast<std::uint32_t>(chosen));
        const std::uint64_t bucket_hi = bucket_high(hi, level, static_cast<std::uint32_t>(chosen));
        const std::uint64_t new_lo = lo > bucket_lo ? lo : bucket_lo;
        const std::uint64_t new_hi = hi < bucket_hi ? hi : bucket_hi;
        __syncthreads();
        if (above_count + in_bucket <= kCandidateCapacity) {
            collect_sorted(s, r, new_lo, ~0ULL);
            const std::uint32_t count = static_cast<std::uint32_t>(above_count + in_bucket);
            const int at = walk_sorted(s, r, count, by_mass, 0.0, target);
            return {s.keys[at], true, static_cast<std::uint32_t>(at + 1)};
        }
        if (in_bucket <= kCandidateCapacity) {
            collect_sorted(s, r, new_lo, new_hi);
            const int at = walk_sorted(s, r, static_cast<std::uint32_t>(in_bucket), by_mass, above_weight, target);
            return {s.keys[at], false, 0};
        }
        lo = new_lo;
        hi = new_hi;
    }
    return {lo, false, 0};
}

__global__ void __launch_bounds__(kThreads) fast_kernel(DeviceBatch b) {
    __shared__ FastShared s;
    const std::int64_t row_index = blockIdx.x;
    const RowParams p = b.params[row_index];
    RowResult* results = b.results + row_index * b.draws;
    std::uint8_t* mask = b.mask ? b.mask + row_index * b.vocab : nullptr;
    FastRow r{b.logits + row_index * b.vocab, b.vocab, row_table(b, row_index), false, 0.0f, 1.0f};

    // Penalties: a row that uses none never builds or reads its table.
    if (threadIdx.x == 0) s.overflow_id = 0x7FFFFFFF;
    if (r.table.capacity > 0 && p.uses_penalties()) {
        const std::int64_t p0 = b.prompt_offsets[row_index], p1 = b.prompt_offsets[row_index + 1];
        const std::int64_t o0 = b.output_offsets[row_index], o1 = b.output_offsets[row_index + 1];
        const std::uint32_t mask_bits = r.table.capacity - 1;
        for (std::int64_t i = threadIdx.x; i < (p1 - p0) + (o1 - o0); i += kThreads) {
            const bool from_output = i >= p1 - p0;
            const std::int32_t id = from_output ? b.output_ids[o0 + i - (p1 - p0)] : b.prompt_ids[p0 + i];
            std::uint32_t slot = history_slot(id, r.table.capacity);
            for (;;) {
                const int held = atomicCAS(reinterpret_cast<int*>(r.table.ids + slot), kEmptySlot, id);
                if (held == kEmptySlot || held == id) break;
                slot = (slot + 1) & mask_bits;
            }
            atomicOr(r.table.in_context + slot, 1U);
            if (from_output) atomicAdd(r.table.output_count + slot, 1U);
        }
        __syncthreads();
        for (std::uint32_t slot = threadIdx.x; slot < r.table.capacity; slot += kThreads) {
            const std::int32_t id = r.table.ids[slot];
            if (id == kEmptySlot) continue;
            const double x = penalise(static_cast<double>(r.row[id]), r.table.in_context[slot] != 0,
                                      r.table.output_count[slot], p);
            r.table.penalised[slot] = x;
            if (x != x || x == HUGE_VAL) atomicMin(&s.overflow_id, id);
        }
        r.penalised = true;
    }
    __syncthreads();
    RowResult result;
    result.draws_after = p.draws_before;
    if (s.overflow_id != 0x7FFFFFFF) {
        if (threadIdx.x == 0) {
            result.error = RowError::PenaltyOverflow;
            result.error_id = s.overflow_id;
            for (int j = 0; j < b.draws; ++j) results[j] = result;
        }
        return;
    }

    // Pass 1: maximum (ties to the lowest id) and smallest finite logit.
    MaxEntry mine{-HUGE_VALF, -1, HUGE_VALF};
    for (std::int64_t i = threadIdx.x; i < r.vocab; i += kThreads) {
        const float x = r.value(i);
        if (x > mine.value) {
            mine.value = x;
            mine.id = static_cast<std::int32_t>(i);
        }
        if (x < mine.min_finite && x != -HUGE_VALF) mine.min_finite = x;
    }
    const MaxEntry best = MaxReduce(s.reduce.max_reduce).Reduce(mine, MaxOp());
    if (threadIdx.x == 0) s.max = best;
    __syncthreads();
    const MaxEntry max = s.max;
    if (max.id < 0) {
        if (threadIdx.x == 0) {
            result.error = RowError::PenaltyEmptiedRow;
            for (int j = 0; j < b.draws; ++j) results[j] = result;
        }
        return;
    }
    // Pass 2: the logprob's normaliser.
    double partial = 0.0;
    for (std::int64_t i = threadIdx.x; i < r.vocab; i += kThreads) partial += static_cast<double>(::expf(r.value(i) - max.value));
    const double partition = SumReduce(s.reduce.sum_reduce).Sum(partial);
    if (threadIdx.x == 0) s.total = partition;
    __syncthreads();
    const double log_partition = ::log(s.total);
    __syncthreads();

    if (p.greedy()) {
        if (threadIdx.x == 0) {
            result.token = max.id;
            result.kept_count = 1;
            result.logprob = static_cast<double>(max.value) - static_cast<double>(max.value) - log_partition;
            for (int j = 0; j < b.draws; ++j) results[j] = result;
            if (mask) mask[max.id] = 1;
        }
        return;
    }
    const double largest = fabs(static_cast<double>(max.value)) > fabs(static_cast<double>(max.min_finite))
                               ? fabs(static_cast<double>(max.value))
                               : fabs(static_cast<double>(max.min_finite));
    if (!isfinite(largest / p.temperature)) {
        if (threadIdx.x == 0) {
            result.error = RowError::TemperatureOverflow;
            for (int j = 0; j < b.draws; ++j) results[j] = result;
        }
        return;
    }
    r.max_logit = max.value;
    r.inverse_temperature = static_cast<float>(1.0 / p.temperature);

    DeviceSelection kept{lowest_finite_key(), false, 0};
    if (p.uses_top_k(r.vocab)) kept = select_prefix(s, r, kept.threshold, false, static_cast<double>(p.top_k));
    if (p.uses_top_p()) {
        double part = 0.0;
        if (kept.materialised) {
            for (std::uint32_t j = threadIdx.x; j < kept.count; j += kThreads) part += r.weight(s.keys[j], true);
        } else {
            for (std::int64_t i = threadIdx.x; i < r.vocab; i += kThreads) {
                const std::uint64_t k = r.key(i);
                if (k >= kept.threshold) part += r.weight(k, true);
            }
        }
        const double total = SumReduce(s.reduce.sum_reduce).Sum(part);
        if (threadIdx.x == 0) s.total = total;
        __syncthreads();
        const double target = p.top_p * s.total;
        __syncthreads();
        if (kept.materialised) {
            const int at = walk_sorted(s, r, kept.count, true, 0.0, target);
            kept = {s.keys[at], true, static_cast<std::uint32_t>(at + 1)};
        } else {
            kept = select_prefix(s, r, kept.threshold, true, target);
        }
    }
    std::uint64_t threshold = kept.threshold;
    if (p.uses_min_p()) {
        const std::uint64_t floor = min_p_threshold(max.value, p.temperature, p.min_p);
        threshold = floor > threshold ? floor : threshold;
    }

    // The Gumbel race over the kept set, once per draw.
    for (int j = 0; j < b.draws; ++j) {
        const std::uint64_t position = p.draws_before + static_cast<std::uint64_t>(j);
        RaceEntry lead{-HUGE_VAL, -1};
        unsigned long long count = 0;
        const auto race = [&](std::uint64_t k) {
            if (k < threshold) return;
            ++count;
            const std::int32_t id = rank_key_id(k);
            const double score = gumbel_score(rank_key_value(k), p.temperature, p.seed, position, id);
            if (score > lead.score || (score == lead.score && id < lead.id)) lead = {score, id};
        };
        if (kept.materialised) {
            for (std::uint32_t i = threadIdx.x; i < kept.count; i += kThreads) race(s.keys[i]);
        } else {
            for (std::int64_t i = threadIdx.x; i < r.vocab; i += kThreads) race(r.key(i));
        }
        const RaceEntry winner = RaceReduce(s.reduce.race_reduce).Reduce(lead, RaceOp());
        __syncthreads();
        const unsigned long long kept_count = CountReduce(s.reduce.count_reduce).Sum(count);
        __syncthreads();
        if (threadIdx.x == 0) {
            result.token = winner.id;
            result.kept_count = static_cast<std::int32_t>(kept_count);
            result.logprob = static_cast<double>(r.value(winner.id)) - static_cast<double>(max.value) - log_partition;
            result.draws_after = position + 1;
            results[j] = result;
        }
    }
    if (mask) {
        for (std::int64_t i = threadIdx.x; i < r.vocab; i += kThreads) {
            if (r.key(i) >= threshold) mask[i] = 1;
        }
    }
}

}  // namespace

namespace {

CudaProbe probe_device() {
    CudaProbe probe;
    probe.compiled = true;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        probe.reason = std::string("no usable CUDA driver or device (") + cudaGetErrorString(status) + ")";
        cudaGetLastError();  // clear the sticky error so later calls start clean
        return probe;
    }
    if (count == 0) {
        probe.reason = "no CUDA device found";
        return probe;
    }
    cudaDeviceProp prop{};
    const cudaError_t properties = cudaGetDeviceProperties(&prop, 0);
    if (properties != cudaSuccess) {
        probe.reason = std::string("CUDA device 0 did not report its properties (") + cudaGetErrorString(properties) + ")";
        return probe;
    }
    probe.available = true;
    probe.device = prop.name;
    return probe;
}

}  // namespace

// Asked once per process (a function-local static is initialised once, even
// when threads race to it): the device does not change under a running
// program, and every batch asks.
CudaProbe probe_cuda() {
    static const CudaProbe probe = probe_device();
    return probe;
}

// CUDA events that destroy themselves.
class EventPair {
public:
    EventPair() {
        SS_CUDA_CHECK(cudaEventCreate(&start_));
        const cudaError_t status = cudaEventCreate(&stop_);
        if (status != cudaSuccess) cudaEventDestroy(start_);
        check(status, "cudaEventCreate(&stop_)");
    }
    ~EventPair() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    EventPair(const EventPair&) = delete;
    EventPair& operator=(const EventPair&) = delete;
    void start() { SS_CUDA_CHECK(cudaEventRecord(start_)); }
    double stop_seconds() {
        SS_CUDA_CHECK(cudaEventRecord(stop_));
        SS_CUDA_CHECK(cudaEventSynchronize(stop_));
        float ms = 0.0f;
        SS_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        return static_cast<double>(ms) * 1e-3;
    }

private:
    cudaEvent_t start_{};
    cudaEvent_t stop_{};
};

float* cuda_upload(const float* host, std::size_t count) {
    float* device = nullptr;
    SS_CUDA_CHECK(cudaMalloc(&device, count * sizeof(float)));
    const cudaError_t status = cudaMemcpy(device, host, count * sizeof(float), cudaMemcpyHostToDevice);
    if (status != cudaSuccess) cudaFree(device);
    check(status, "cudaMemcpy(device, host, ...)");
    return device;
}

void cuda_free(float* device) {
    if (device) cudaFree(device);
}

double cuda_copy_bandwidth(std::size_t bytes) {
    DeviceArray<unsigned char> from(bytes);
    DeviceArray<unsigned char> to(bytes);
    from.fill_bytes(1);
    SS_CUDA_CHECK(cudaMemcpy(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice));  // warm up
    EventPair timer;
    const int repeats = 20;
    timer.start();
    for (int i = 0; i < repeats; ++i) SS_CUDA_CHECK(cudaMemcpy(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice));
    const double seconds = timer.stop_seconds();
    // A copy reads and writes every byte once.
    return 2.0 * static_cast<double>(bytes) * repeats / seconds;
}

namespace {

// How many buffers the context has allocated (device and pinned), for the
// proof that a warm call allocates nothing.
std::atomic<std::uint64_t> buffer_allocations{0};

// Device memory kept from one batch to the next: it grows when a batch needs
// more and is freed only by release().
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { release(); }
    unsigned char* reserve(std::size_t bytes) {
        if (bytes > bytes_) {
            release();
            SS_CUDA_CHECK(cudaMalloc(&data_, bytes));
            bytes_ = bytes;
            ++buffer_allocations;
        }
        return static_cast<unsigned char*>(data_);
    }
    void release() {
        if (data_) cudaFree(data_);
        data_ = nullptr;
        bytes_ = 0;
    }

private:
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

// Page-locked host memory, kept likewise: copies from and to it run
// asynchronously at the link's full speed.
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    ~PinnedBuffer() { release(); }
    unsigned char* reserve(std::size_t bytes) {
        if (bytes > bytes_) {
            release();
            SS_CUDA_CHECK(cudaMallocHost(&data_, bytes));
            bytes_ = bytes;
            ++buffer_allocations;
        }
        return static_cast<unsigned char*>(data_);
    }
    void release() {
        if (data_) cudaFreeHost(data_);
        data_ = nullptr;
        bytes_ = 0;
    }

private:
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

// Offsets of several arrays packed into one buffer, each 256-byte aligned.
class Packing {
public:
    std::size_t add(std::size_t bytes) {
        const std::size_t at = (total_ + 255) & ~std::size_t{255};
        total_ = at + bytes;
        return at;
    }
    std::size_t total() const { return total_; }

private:
    std::size_t total_ = 0;
};

// Logits in host memory go up through two pinned slots of this size, so the
// host's copy into one overlaps the transfer out of the other and the pinned
// memory stays the same whatever the batch.
constexpr std::size_t kStagingSlot = std::size_t{16} << 20;

// The process's device state, behind one mutex (batches run one at a time):
// the buffers, the pinned staging, a stream of its own for callers that pass
// none, and the events. Everything is made on first use, grows only, and is
// freed by cuda_release() or at exit.
struct DeviceContext {
    std::mutex lock;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    cudaEvent_t slot_free[2] = {nullptr, nullptr};
    DeviceBuffer inputs;   // parameters, histories, table offsets: one upload
    DeviceBuffer logits;   // the batch's logits when the caller's are in host memory
    DeviceBuffer tables;   // the history tables
    DeviceBuffer outputs;  // results, then the kept mask
    DeviceBuffer exact;    // exact mode's workspace
    PinnedBuffer upload;
    PinnedBuffer staging;  // two slots of kStagingSlot
    PinnedBuffer download;

    DeviceContext() = default;
    DeviceContext(const DeviceContext&) = delete;
    DeviceContext& operator=(const DeviceContext&) = delete;
    ~DeviceContext() { release(); }

    // Each piece is made once; a failure leaves the others for the next call.
    void start_up() {
        // A blocking stream: it waits for work on the legacy default stream
        // (a kernel there that wrote device logits) as the default stream would.
        if (!stream) SS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamDefault));
        if (!start) SS_CUDA_CHECK(cudaEventCreate(&start));
        if (!stop) SS_CUDA_CHECK(cudaEventCreate(&stop));
        for (cudaEvent_t& event : slot_free) {
            if (!event) SS_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
        }
    }

    // Errors are ignored: this also runs at exit, when the driver may be gone.
    void release() {
        inputs.release();
        logits.release();
        tables.release();
        outputs.release();
        exact.release();
        upload.release();
        staging.release();
        download.release();
        for (cudaEvent_t& event : slot_free) {
            if (event) cudaEventDestroy(event);
            event = nullptr;
        }
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
        if (stream) cudaStreamDestroy(stream);
        start = stop = nullptr;
        stream = nullptr;
    }
};

DeviceContext& device_context() {
    static DeviceContext context;
    return context;
}

// Waits for the stream when a call throws after enqueuing work, so no copy
// still in flight lands in a buffer the next batch is using.
class DrainOnError {
public:
    explicit DrainOnError(cudaStream_t stream) : stream_(stream) {}
    DrainOnError(const DrainOnError&) = delete;
    DrainOnError& operator=(const DrainOnError&) = delete;
    ~DrainOnError() {
        if (armed_) cudaStreamSynchronize(stream_);
    }
    void disarm() { armed_ = false; }

private:
    cudaStream_t stream_;
    bool armed_ = true;
};

template <class T>
T* at(unsigned char* base, std::size_t offset) {
    return reinterpret_cast<T*>(base + offset);
}

template <class T>
void put(unsigned char* base, std::size_t offset, const T* from, std::size_t count) {
    if (count > 0) std::memcpy(base + offset, from, count * sizeof(T));
}

// Host logits up to the device through the two pinned slots. The host waits
// only when a slot it is about to refill still has a piece on its way, which
// happens for batches over two slots (32 MiB).
void upload_logits(DeviceContext& context, cudaStream_t stream, float* device, const float* host, std::size_t count) {
    const std::size_t bytes = count * sizeof(float);
    unsigned char* slots = context.staging.reserve(2 * kStagingSlot);  // reserved already: no allocation
    auto* to = reinterpret_cast<unsigned char*>(device);
    const auto* from = reinterpret_cast<const unsigned char*>(host);
    std::size_t done = 0;
    for (int piece = 0; done < bytes; ++piece) {
        const int slot = piece % 2;
        const std::size_t part = std::min(kStagingSlot, bytes - done);
        unsigned char* staged = slots + static_cast<std::size_t>(slot) * kStagingSlot;
        if (piece >= 2) SS_CUDA_CHECK(cudaEventSynchronize(context.slot_free[slot]));  // its last piece has left
        std::memcpy(staged, from + done, part);
        SS_CUDA_CHECK(cudaMemcpyAsync(to + done, staged, part, cudaMemcpyHostToDevice, stream));
        SS_CUDA_CHECK(cudaEventRecord(context.slot_free[slot], stream));
        done += part;
    }
}

}  // namespace

std::uint64_t cuda_buffer_allocations() { return buffer_allocations.load(); }

void cuda_release() {
    DeviceContext& context = device_context();
    const std::lock_guard<std::mutex> guard(context.lock);
    if (context.stream) cudaStreamSynchronize(context.stream);
    context.release();
}

double run_cuda(const CudaBatch& batch, std::vector<RowResult>& results, std::vector<std::uint8_t>& mask) {
    const std::int64_t rows = batch.rows;
    const std::int64_t vocab = batch.vocab;
    const auto row_count = static_cast<std::size_t>(rows);
    const auto cells = static_cast<std::size_t>(rows * vocab);
    std::vector<std::uint64_t> table_offsets(row_count + 1, 0);
    for (std::int64_t r = 0; r < rows; ++r) {
        const auto length = static_cast<std::uint64_t>(batch.prompt_offsets[r + 1] - batch.prompt_offsets[r] +
                                                       batch.output_offsets[r + 1] - batch.output_offsets[r]);
        table_offsets[static_cast<std::size_t>(r) + 1] = table_offsets[static_cast<std::size_t>(r)] + history_capacity(length);
    }
    const std::size_t table_size = table_offsets.back();
    const auto prompt_count = static_cast<std::size_t>(batch.prompt_offsets[rows]);
    const auto output_count = static_cast<std::size_t>(batch.output_offsets[rows]);

    // Where everything goes: the small inputs packed into one buffer (one
    // copy up), the history tables, the results and mask (one buffer down),
    // exact mode's workspace.
    Packing in;
    const std::size_t at_params = in.add(row_count * sizeof(RowParams));
    const std::size_t at_prompt_offsets = in.add((row_count + 1) * sizeof(std::int64_t));
    const std::size_t at_prompt_ids = in.add(prompt_count * sizeof(std::int32_t));
    const std::size_t at_output_offsets = in.add((row_count + 1) * sizeof(std::int64_t));
    const std::size_t at_output_ids = in.add(output_count * sizeof(std::int32_t));
    const std::size_t at_table_offsets = in.add((row_count + 1) * sizeof(std::uint64_t));
    Packing table;
    const std::size_t at_table_ids = table.add(table_size * sizeof(std::int32_t));
    const std::size_t at_table_context = table.add(table_size * sizeof(std::uint32_t));
    const std::size_t at_table_counts = table.add(table_size * sizeof(std::uint32_t));
    const std::size_t at_table_penalised = table.add(table_size * sizeof(double));
    Packing out;
    const std::size_t at_results = out.add(results.size() * sizeof(RowResult));
    const std::size_t at_mask = out.add(batch.kept_mask ? cells : 0);
    // Exact mode: one block per row, rows in chunks, so the f64 workspace stays near 1 GiB whatever B is.
    const std::int64_t per_row = vocab * static_cast<std::int64_t>(sizeof(double) + 2 * sizeof(std::int32_t));
    const std::int64_t chunk = std::max<std::int64_t>(1, std::min<std::int64_t>(rows, (std::int64_t{1} << 30) / per_row));
    const auto chunk_cells = static_cast<std::size_t>(chunk * vocab);
    Packing work;
    const std::size_t at_ws_logits = work.add(batch.fast ? 0 : chunk_cells * sizeof(double));
    const std::size_t at_ws_kept = work.add(batch.fast ? 0 : chunk_cells * sizeof(std::int32_t));
    const std::size_t at_ws_order = work.add(batch.fast ? 0 : chunk_cells * sizeof(std::int32_t));

    DeviceContext& context = device_context();
    const std::lock_guard<std::mutex> guard(context.lock);
    context.start_up();
    // Every buffer is grown (if it must be) before any work is enqueued.
    unsigned char* staged_in = context.upload.reserve(in.total());
    unsigned char* d_in = context.inputs.reserve(in.total());
    float* d_logits = batch.logits_on_device ? nullptr : reinterpret_cast<float*>(context.logits.reserve(cells * sizeof(float)));
    unsigned char* d_table = context.tables.reserve(table.total());
    unsigned char* d_out = context.outputs.reserve(out.total());
    unsigned char* staged_out = context.download.reserve(out.total());
    unsigned char* d_work = context.exact.reserve(work.total());
    if (!batch.logits_on_device) context.staging.reserve(2 * kStagingSlot);

    cudaStream_t stream = batch.stream ? static_cast<cudaStream_t>(batch.stream) : context.stream;
    DrainOnError drain(stream);
    put(staged_in, at_params, batch.params, row_count);
    put(staged_in, at_prompt_offsets, batch.prompt_offsets, row_count + 1);
    put(staged_in, at_prompt_ids, batch.prompt_ids, prompt_count);
    put(staged_in, at_output_offsets, batch.output_offsets, row_count + 1);
    put(staged_in, at_output_ids, batch.output_ids, output_count);
    put(staged_in, at_table_offsets, table_offsets.data(), row_count + 1);
    SS_CUDA_CHECK(cudaMemcpyAsync(d_in, staged_in, in.total(), cudaMemcpyHostToDevice, stream));
    const float* logits = batch.logits;
    if (!batch.logits_on_device) {
        upload_logits(context, stream, d_logits, batch.logits, cells);
        logits = d_logits;
    }
    if (table_size > 0) {
        SS_CUDA_CHECK(cudaMemsetAsync(d_table + at_table_ids, 0xFF, table_size * sizeof(std::int32_t), stream));  // kEmptySlot
        SS_CUDA_CHECK(cudaMemsetAsync(d_table + at_table_context, 0, at_table_penalised - at_table_context, stream));
    }
    if (batch.kept_mask) SS_CUDA_CHECK(cudaMemsetAsync(d_out + at_mask, 0, cells, stream));

    DeviceBatch b{logits,
                  vocab,
                  at<RowParams>(d_in, at_params),
                  at<std::int64_t>(d_in, at_prompt_offsets),
                  at<std::int32_t>(d_in, at_prompt_ids),
                  at<std::int64_t>(d_in, at_output_offsets),
                  at<std::int32_t>(d_in, at_output_ids),
                  at<std::uint64_t>(d_in, at_table_offsets),
                  at<std::int32_t>(d_table, at_table_ids),
                  at<std::uint32_t>(d_table, at_table_context),
                  at<std::uint32_t>(d_table, at_table_counts),
                  at<double>(d_table, at_table_penalised),
                  batch.kept_mask ? at<std::uint8_t>(d_out, at_mask) : nullptr,
                  batch.draws,
                  at<RowResult>(d_out, at_results)};

    SS_CUDA_CHECK(cudaEventRecord(context.start, stream));
    if (!batch.fast) {
        for (std::int64_t begin = 0; begin < rows; begin += chunk) {
            const std::int64_t end = std::min(rows, begin + chunk);
            exact_kernel<<<static_cast<unsigned>(end - begin), kExactThreads, 0, stream>>>(
                b, begin, at<double>(d_work, at_ws_logits), at<std::int32_t>(d_work, at_ws_kept),
                at<std::int32_t>(d_work, at_ws_order));
            SS_CUDA_CHECK(cudaGetLastError());
        }
    } else {
        fast_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(b);
        SS_CUDA_CHECK(cudaGetLastError());
    }
    SS_CUDA_CHECK(cudaEventRecord(context.stop, stream));

    SS_CUDA_CHECK(cudaMemcpyAsync(staged_out + at_results, d_out + at_results, results.size() * sizeof(RowResult),
                                  cudaMemcpyDeviceToHost, stream));
    if (batch.kept_mask) {
        SS_CUDA_CHECK(cudaMemcpyAsync(staged_out + at_mask, d_out + at_mask, cells, cudaMemcpyDeviceToHost, stream));
    }
    SS_CUDA_CHECK(cudaStreamSynchronize(stream));  // the one wait of the call
    drain.disarm();
    float ms = 0.0f;
    SS_CUDA_CHECK(cudaEventElapsedTime(&ms, context.start, context.stop));
    if (!results.empty()) std::memcpy(results.data(), staged_out + at_results, results.size() * sizeof(RowResult));
    if (batch.kept_mask) {
        mask.resize(cells);
        std::memcpy(mask.data(), staged_out + at_mask, cells);
    }
    return static_cast<double>(ms) * 1e-3;
}

}  // namespace samplescope::batch
