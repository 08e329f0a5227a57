// Fast mode on the GPU: one block of kFastThreads threads per row runs the
// shared row routine (kernels/fast_row.h) through BlockRowContext, whose
// collective steps are block-wide reductions, shared-memory histograms with
// integer atomics (so their sums do not depend on scheduling), and CUB's
// block radix sort for the few collected keys. Included by batch_cuda.cu, and
// by tests/batch/test_fast_block.cpp, which runs it on the CPU with a thread per
// GPU thread (SAMPLESCOPE_BLOCK_EMULATION: that test supplies the CUDA names).
#pragma once

#if !defined(SAMPLESCOPE_BLOCK_EMULATION)
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#endif

#include "kernels/fast_row.h"
#include "kernels/history_table.h"

#if defined(__CUDACC__)
#define SS_UNROLL _Pragma("unroll")
#else
#define SS_UNROLL
#endif

namespace samplescope::batch {

constexpr int kFastThreads = 256;
constexpr int kFastItems = kCandidateCapacity / kFastThreads;      // 8 keys per thread in a sort
constexpr int kFastBuckets = kDigitBuckets / kFastThreads;         // 8 buckets per thread

// The first pass's per-thread state, merged across the block in a fixed
// order (CUB's reduction tree), so the result is the same on every run.
struct FirstPartial {
    float max_logit;
    double partition;     // relative to max_logit
    std::int32_t argmax;  // the lowest id holding max_logit
    float min_logit;
    std::int32_t refused_id;  // the lowest NaN or +inf id, 0x7FFFFFFF when none
    float refused_value;      // its logit
    int any_finite;
};
struct FirstMerge {
    __device__ FirstPartial operator()(const FirstPartial& a, const FirstPartial& b) const {
        FirstPartial out;
        const bool b_higher = b.max_logit > a.max_logit;
        const bool tie = b.max_logit == a.max_logit;
        out.max_logit = b_higher ? b.max_logit : a.max_logit;
        out.argmax = b_higher ? b.argmax : (tie && b.argmax >= 0 && (a.argmax < 0 || b.argmax < a.argmax) ? b.argmax : a.argmax);
        out.partition = rescale_partition(a.partition, a.max_logit, out.max_logit) +
                        rescale_partition(b.partition, b.max_logit, out.max_logit);
        out.min_logit = a.min_logit < b.min_logit ? a.min_logit : b.min_logit;
        out.refused_id = a.refused_id < b.refused_id ? a.refused_id : b.refused_id;
        out.refused_value = a.refused_id < b.refused_id ? a.refused_value : b.refused_value;
        out.any_finite = a.any_finite | b.any_finite;
        return out;
    }
};
struct RacePartial {
    double score;
    std::int32_t id;
};
struct RaceMerge {
    __device__ RacePartial operator()(const RacePartial& a, const RacePartial& b) const {
        const bool take_b = b.score > a.score || (b.score == a.score && b.id >= 0 && (a.id < 0 || b.id < a.id));
        return take_b ? b : a;
    }
};

using FirstReduce = cub::BlockReduce<FirstPartial, kFastThreads>;
using RaceReduce = cub::BlockReduce<RacePartial, kFastThreads>;
using UnitsReduce = cub::BlockReduce<unsigned long long, kFastThreads>;
using UnitsScan = cub::BlockScan<unsigned long long, kFastThreads>;
using KeySort = cub::BlockRadixSort<unsigned long long, kFastThreads, kFastItems>;
// Most collections are small (top-k 50: about 50 keys): one key per thread.
using SmallKeySort = cub::BlockRadixSort<unsigned long long, kFastThreads, 1>;

struct FastShared {
    union {
        typename FirstReduce::TempStorage first;
        typename RaceReduce::TempStorage race;
        typename UnitsReduce::TempStorage units;
        typename UnitsScan::TempStorage scan;
    } reduce;
    union {
        struct {
            std::uint32_t counts[kDigitBuckets];
            unsigned long long units[kDigitBuckets];  // MassUnits
        } histogram;
        typename KeySort::TempStorage sort;
        typename SmallKeySort::TempStorage small_sort;
    } work;
    unsigned long long keys[kCandidateCapacity];
    std::uint32_t key_count;
    unsigned long long gathered_count;
    int top;
    int crossing;
    int overflow_id;
    BucketChoice choice;
    FirstPartial first;
    unsigned long long total;
    RacePartial race;
};

// One row's inputs on the device.
struct FastRowInput {
    const float* row;
    std::int64_t vocab;
    HistoryTable table;
    std::uint32_t* penalised_bits;        // a bit per id, null when no penalty runs
    unsigned long long* gathered;         // room for the row's V keys
    std::uint8_t* mask;                   // null when not asked for
    RowResult* results;
    // A row split across blocks (small batches): the first read's partials,
    // one per part, and the count of keys already gathered from the window
    // below the maximum (null when the row was not gathered).
    const FirstPartial* partials = nullptr;
    int parts = 0;
    const unsigned long long* gathered_total = nullptr;
};

// The penalised logit: one bit test for an id without history.
__device__ inline float penalised_logit(const std::uint32_t* bits, const HistoryTable& table, std::int32_t id,
                                        float raw) {
    if (!bits || !((bits[id >> 5] >> (id & 31)) & 1U)) return raw;
    const std::int64_t slot = history_find(table, id);
    return slot >= 0 ? penalised_f32(table.penalised[slot]) : raw;
}

// f(id, logit as it came) for ids [begin, end) (begin a multiple of 4) split
// over the block's threads, each in increasing id order: four at a time with
// one 16-byte load when the row is aligned for it.
template <int Unroll = 1, class F>
__device__ void for_each_value_in(const float* row, std::int64_t begin, std::int64_t end, F&& f) {
    std::int64_t done = begin;
    if ((reinterpret_cast<std::uintptr_t>(row) & 15U) == 0) {
        const auto* quads = reinterpret_cast<const float4*>(row);
        const std::int64_t last = end / 4;
        const auto take = [&](std::int64_t q, const float4& x) {
            const auto id = static_cast<std::int32_t>(q * 4);
            f(id, x.x);
            f(id + 1, x.y);
            f(id + 2, x.z);
            f(id + 3, x.w);
        };
        // `Unroll` loads in flight per thread before their values are used:
        // 4 in the split path's small kernels; 1 in the row routine's block,
        // where 2 or 4 gave it a 392-byte stack frame in local memory (sm_90;
        // with 1: 127 registers, no stack, no spills).
        std::int64_t q = begin / 4 + threadIdx.x;
        for (; q + (Unroll - 1) * kFastThreads < last; q += Unroll * kFastThreads) {
            float4 x[Unroll];
            SS_UNROLL for (int u = 0; u < Unroll; ++u) x[u] = quads[q + u * kFastThreads];
            SS_UNROLL for (int u = 0; u < Unroll; ++u) take(q + u * kFastThreads, x[u]);
        }
        if constexpr (Unroll > 1) {
            for (; q < last; q += kFastThreads) take(q, quads[q]);
        }
        done = last * 4 > begin ? last * 4 : begin;
    }
    for (std::int64_t i = done + threadIdx.x; i < end; i += kFastThreads) f(static_cast<std::int32_t>(i), row[i]);
}

// The first read's work for one id (BlockRowContext::first_pass and the
// split path's first kernel).
__device__ inline void first_read(FirstPartial& mine, std::int32_t id, float raw, float x, bool sampled) {
    if (!(raw < HUGE_VALF)) {
        if (id < mine.refused_id) {
            mine.refused_id = id;
            mine.refused_value = raw;
        }
        return;
    }
    if (raw > -HUGE_VALF) mine.any_finite = 1;
    if (!sampled || !(x > -HUGE_VALF)) return;
    if (x > mine.max_logit) {
        mine.partition = rescale_partition(mine.partition, mine.max_logit, x);
        mine.max_logit = x;
        mine.argmax = id;
    }
    mine.partition += static_cast<double>(exp_nonpositive_f32(x - mine.max_logit));
    if (x < mine.min_logit) mine.min_logit = x;
}

__device__ inline FirstPartial no_partial() { return FirstPartial{-HUGE_VALF, 0.0, -1, HUGE_VALF, 0x7FFFFFFF, 0.0f, 0}; }

// A split row's partials merged in part order (the same on every run).
__device__ inline FirstPartial merge_parts(const FirstPartial* partials, int parts) {
    FirstPartial all = partials[0];
    for (int c = 1; c < parts; ++c) all = FirstMerge()(all, partials[c]);
    return all;
}

class BlockRowContext {
public:
    __device__ BlockRowContext(FastShared& s, const FastRowInput& in) : s_(s), in_(in), units_(in.vocab) {}

    __device__ FirstPass first_pass() {
        if (in_.partials) {
            if (threadIdx.x == 0) s_.first = merge_parts(in_.partials, in_.parts);
        } else {
            FirstPartial mine = no_partial();
            const bool sampled = s_.overflow_id == 0x7FFFFFFF;
            for_each_value_in(in_.row, 0, in_.vocab, [&](std::int32_t id, float raw) {
                first_read(mine, id, raw, penalised(id, raw), sampled);
            });
            const FirstPartial all = FirstReduce(s_.reduce.first).Reduce(mine, FirstMerge());
            if (threadIdx.x == 0) s_.first = all;
        }
        __syncthreads();
        const FirstPartial block = s_.first;
        __syncthreads();
        FirstPass pass;
        pass.max_logit = block.max_logit;
        pass.min_logit = block.min_logit;
        pass.argmax = block.argmax;
        pass.partition = block.partition;
        pass.refused_id = block.refused_id == 0x7FFFFFFF ? -1 : block.refused_id;
        pass.refused_value = block.refused_value;
        pass.any_finite = block.any_finite != 0;
        return pass;
    }

    __device__ std::int32_t overflow_id() const { return s_.overflow_id == 0x7FFFFFFF ? -1 : s_.overflow_id; }

    __device__ void set_weights(float max_logit, float inverse_temperature) {
        max_logit_ = max_logit;
        inverse_temperature_ = inverse_temperature;
    }

    __device__ Histogram histogram(int level, std::uint64_t lo, std::uint64_t hi, bool by_mass) {
        for (int d = threadIdx.x; d < kDigitBuckets; d += kFastThreads) {
            s_.work.histogram.counts[d] = 0;
            s_.work.histogram.units[d] = 0;
        }
        if (threadIdx.x == 0) s_.top = -1;
        __syncthreads();
        int top = -1;
        for_each_key(lo, hi, [&](std::uint64_t key) {
            const int digit = static_cast<int>(key_digit(key, level));
            atomicAdd(&s_.work.histogram.counts[digit], 1U);
            if (by_mass) atomicAdd(&s_.work.histogram.units[digit], static_cast<unsigned long long>(weight(key, true)));
            top = digit > top ? digit : top;
        });
        atomicMax(&s_.top, top);
        __syncthreads();
        unsigned long long part = 0;
        for (int d = threadIdx.x; d < kDigitBuckets; d += kFastThreads) {
            part += by_mass ? s_.work.histogram.units[d] : s_.work.histogram.counts[d];
        }
        const unsigned long long total = UnitsReduce(s_.reduce.units).Sum(part);
        if (threadIdx.x == 0) s_.total = total;
        __syncthreads();
        Histogram h;
        h.top = s_.top;
        h.total_weight = s_.total;
        __syncthreads();
        return h;
    }

    // choose_bucket() by one thread: it looks at the digits from the highest
    // non-empty one down to the one chosen, usually a few.
    __device__ BucketChoice choose(int top, int floor, bool by_mass, double target, std::uint64_t count_above,
                                   std::uint64_t weight_above) {
        if (threadIdx.x == 0) {
            s_.choice = choose_bucket(s_.work.histogram.counts,
                                      reinterpret_cast<const std::uint64_t*>(s_.work.histogram.units), top, floor,
                                      by_mass, target, count_above, weight_above);
        }
        __syncthreads();
        const BucketChoice choice = s_.choice;
        __syncthreads();
        return choice;
    }

    __device__ std::uint32_t count_at(int digit) {
        const std::uint32_t count = digit >= 0 ? s_.work.histogram.counts[digit] : 0U;
        __syncthreads();  // the histogram's room is the sort's next
        return count;
    }

    __device__ std::uint32_t collect(std::uint64_t lo, std::uint64_t hi) {
        if (threadIdx.x == 0) s_.key_count = 0;
        __syncthreads();
        for_each_key(lo, hi, [&](std::uint64_t key) {
            const std::uint32_t at = atomicAdd(&s_.key_count, 1U);
            if (at < kCandidateCapacity) s_.keys[at] = key;
        });
        __syncthreads();
        const std::uint32_t count = s_.key_count < kCandidateCapacity ? s_.key_count : kCandidateCapacity;
        if (count <= static_cast<std::uint32_t>(kFastThreads)) {
            unsigned long long item[1] = {threadIdx.x < count ? s_.keys[threadIdx.x] : 0ULL};
            __syncthreads();
            SmallKeySort(s_.work.small_sort).SortDescending(item);
            __syncthreads();
            s_.keys[threadIdx.x] = item[0];
            __syncthreads();
            return count;
        }
        unsigned long long items[kFastItems];
        for (int j = 0; j < kFastItems; ++j) {
            const std::uint32_t at = threadIdx.x * kFastItems + j;
            items[j] = at < count ? s_.keys[at] : 0ULL;  // 0 is below every real key
        }
        __syncthreads();
        KeySort(s_.work.sort).SortDescending(items);
        __syncthreads();
        for (int j = 0; j < kFastItems; ++j) s_.keys[threadIdx.x * kFastItems + j] = items[j];
        __syncthreads();
        return count;
    }

    __device__ int walk(std::uint32_t n, bool by_mass, std::uint64_t start, double target) {
        unsigned long long local[kFastItems];
        unsigned long long thread_sum = 0;
        for (int j = 0; j < kFastItems; ++j) {
            const std::uint32_t at = threadIdx.x * kFastItems + j;
            local[j] = at < n ? weight(s_.keys[at], by_mass) : 0ULL;
            thread_sum += local[j];
        }
        if (threadIdx.x == 0) s_.crossing = static_cast<int>(n) - 1;
        __syncthreads();
        unsigned long long before = 0;
        UnitsScan(s_.reduce.scan).ExclusiveSum(thread_sum, before);
        unsigned long long running = start + before;
        for (int j = 0; j < kFastItems; ++j) {
            const std::uint32_t at = threadIdx.x * kFastItems + j;
            running += local[j];
            if (at < n && static_cast<double>(running) >= target) {
                atomicMin(&s_.crossing, static_cast<int>(at));
                break;
            }
        }
        __syncthreads();
        const int crossing = s_.crossing;
        __syncthreads();
        return crossing;
    }

    __device__ std::uint64_t key(int j) const { return s_.keys[j]; }

    __device__ std::uint64_t kept_weight(std::uint32_t n) {
        unsigned long long part = 0;
        for (std::uint32_t j = threadIdx.x; j < n; j += kFastThreads) part += weight(s_.keys[j], true);
        const unsigned long long total = UnitsReduce(s_.reduce.units).Sum(part);
        if (threadIdx.x == 0) s_.total = total;
        __syncthreads();
        const unsigned long long all = s_.total;
        __syncthreads();
        return all;
    }

    __device__ void cover(std::uint64_t lo) {
        if (covered(lo)) return;
        if (threadIdx.x == 0) s_.gathered_count = 0;
        __syncthreads();
        for_each_key(lo, ~0ULL, [&](std::uint64_t key) { in_.gathered[atomicAdd(&s_.gathered_count, 1ULL)] = key; });
        __syncthreads();
        gathered_count_ = s_.gathered_count;
        gathered_floor_ = lo;
        gathered_valid_ = true;
        __syncthreads();
    }

    // The contract allows the floor to stay at lo: the block gathers every
    // key from there (the window below the maximum holds few).
    __device__ std::uint64_t cover_top(std::uint64_t lo, std::uint64_t) {
        if (in_.gathered_total && lo == window_floor_key(s_.first.max_logit)) {
            gathered_count_ = *in_.gathered_total;  // the split path's gather
            gathered_floor_ = lo;
            gathered_valid_ = true;
            return lo;
        }
        cover(lo);
        return lo;
    }

    __device__ FastRace race(std::uint64_t threshold, const FastSelection& kept, const RowParams& p,
                             std::uint64_t position) {
        RacePartial lead{-HUGE_VAL, -1};
        unsigned long long count = 0;
        const auto run = [&](std::uint64_t key) {
            if (key < threshold) return;
            ++count;
            const std::int32_t id = rank_key_id(key);
            const double score = gumbel_score(rank_key_value(key), p.temperature, p.seed, position, id);
            if (score > lead.score || (score == lead.score && id < lead.id)) lead = {score, id};
        };
        if (kept.materialised) {
            for (std::uint32_t j = threadIdx.x; j < kept.count; j += kFastThreads) run(s_.keys[j]);
        } else {
            for_each_key(threshold, ~0ULL, run);
        }
        const RacePartial winner = RaceReduce(s_.reduce.race).Reduce(lead, RaceMerge());
        if (threadIdx.x == 0) s_.race = winner;
        __syncthreads();
        const unsigned long long kept_count = UnitsReduce(s_.reduce.units).Sum(count);
        if (threadIdx.x == 0) s_.total = kept_count;
        __syncthreads();
        FastRace race;
        race.token = s_.race.id;
        race.kept_count = static_cast<std::int32_t>(s_.total);
        __syncthreads();
        return race;
    }

    __device__ void mark(std::uint64_t threshold, const FastSelection& kept) {
        if (!in_.mask) return;
        if (kept.materialised) {
            for (std::uint32_t j = threadIdx.x; j < kept.count; j += kFastThreads) {
                if (s_.keys[j] >= threshold) in_.mask[rank_key_id(s_.keys[j])] = 1;
            }
        } else {
            for_each_key(threshold, ~0ULL, [&](std::uint64_t key) { in_.mask[rank_key_id(key)] = 1; });
        }
    }

    __device__ void mark_id(std::int32_t id) {
        if (in_.mask && threadIdx.x == 0) in_.mask[id] = 1;
    }

    __device__ float value(std::int32_t id) const { return penalised(id, in_.row[id]); }

    __device__ void write_result(int draw, const RowResult& result) {
        if (threadIdx.x == 0) in_.results[draw] = result;
    }

    __device__ FastBranches& branches() { return branches_; }

private:
    __device__ std::uint64_t weight(std::uint64_t key, bool by_mass) const {
        return key_weight(key, by_mass, max_logit_, inverse_temperature_, units_);
    }

    __device__ float penalised(std::int32_t id, float raw) const {
        return penalised_logit(in_.penalised_bits, in_.table, id, raw);
    }

    __device__ bool covered(std::uint64_t lo) const { return gathered_valid_ && lo >= gathered_floor_; }

    // f(key) for every rank key in [lo, hi]: from the gathered keys when they
    // cover lo, else from one read of the row.
    template <class F>
    __device__ void for_each_key(std::uint64_t lo, std::uint64_t hi, F&& f) const {
        if (covered(lo)) {
            for (unsigned long long j = threadIdx.x; j < gathered_count_; j += kFastThreads) {
                const std::uint64_t key = in_.gathered[j];
                if (key >= lo && key <= hi) f(key);
            }
            return;
        }
        for_each_value_in(in_.row, 0, in_.vocab, [&](std::int32_t id, float raw) {
            const std::uint64_t key = rank_key(penalised(id, raw), id);
            if (key >= lo && key <= hi) f(key);
        });
    }

    FastShared& s_;
    FastRowInput in_;
    MassUnits units_;
    float max_logit_ = 0.0f;
    float inverse_temperature_ = 1.0f;
    unsigned long long gathered_count_ = 0;
    std::uint64_t gathered_floor_ = 0;
    bool gathered_valid_ = false;
    FastBranches branches_;
};

// The row's history into its table, with atomics (the same layout the host
// twin fills one id at a time), the penalised logits, the lowest id a
// penalty overflowed, and a bit per penalised id.
__device__ inline void build_history(int& overflow_id, const RowParams& p, const float* row, std::int64_t vocab,
                                     HistoryTable& table, std::uint32_t* bits, const std::int32_t* prompt,
                                     std::int64_t prompt_length, const std::int32_t* output,
                                     std::int64_t output_length) {
    const std::uint32_t mask_bits = table.capacity - 1;
    for (std::int64_t w = threadIdx.x; w < (vocab + 31) / 32; w += kFastThreads) bits[w] = 0;
    for (std::uint32_t slot = threadIdx.x; slot < table.capacity; slot += kFastThreads) {
        table.ids[slot] = kEmptySlot;
        table.in_context[slot] = 0;
        table.output_count[slot] = 0;
    }
    __syncthreads();
    for (std::int64_t i = threadIdx.x; i < prompt_length + output_length; i += kFastThreads) {
        const bool from_output = i >= prompt_length;
        const std::int32_t id = from_output ? output[i - prompt_length] : prompt[i];
        std::uint32_t slot = history_slot(id, table.capacity);
        for (;;) {
            const int held = atomicCAS(reinterpret_cast<int*>(table.ids + slot), kEmptySlot, id);
            if (held == kEmptySlot || held == id) break;
            slot = (slot + 1) & mask_bits;
        }
        atomicOr(table.in_context + slot, 1U);
        if (from_output) atomicAdd(table.output_count + slot, 1U);
        atomicOr(bits + (id >> 5), 1U << (id & 31));
    }
    __syncthreads();
    for (std::uint32_t slot = threadIdx.x; slot < table.capacity; slot += kFastThreads) {
        const std::int32_t id = table.ids[slot];
        if (id == kEmptySlot) continue;
        const double x = penalise(static_cast<double>(row[id]), table.in_context[slot] != 0, table.output_count[slot], p);
        table.penalised[slot] = x;
        if (x != x || x == HUGE_VAL) atomicMin(&overflow_id, id);
    }
    __syncthreads();
}

// ---- a row split across blocks (small batches) --------------------------------

// The ids of part `part` of `parts`: multiples of 4 wide, so 16-byte loads
// stay aligned.
__device__ inline void part_range(std::int64_t vocab, int part, int parts, std::int64_t& begin, std::int64_t& end) {
    const std::int64_t quads = (vocab + 3) / 4;
    const std::int64_t per = (quads + parts - 1) / parts;
    begin = per * part * 4 < vocab ? per * part * 4 : vocab;
    end = per * (part + 1) * 4 < vocab ? per * (part + 1) * 4 : vocab;
}

// The first read of one part of a row.
__device__ inline void first_read_part(typename FirstReduce::TempStorage& temp, const FastRowInput& in, bool sampled, int part, int parts,
                                       FirstPartial* out) {
    std::int64_t begin = 0;
    std::int64_t end = 0;
    part_range(in.vocab, part, parts, begin, end);
    FirstPartial mine = no_partial();
    for_each_value_in<4>(in.row, begin, end, [&](std::int32_t id, float raw) {
        first_read(mine, id, raw, penalised_logit(in.penalised_bits, in.table, id, raw), sampled);
    });
    const FirstPartial all = FirstReduce(temp).Reduce(mine, FirstMerge());
    if (threadIdx.x == 0) *out = all;
}

// Top-k's gather of one part of a row: the keys from window_floor_key() of
// the row's maximum up, counted in `total`.
__device__ inline void gather_part(const FastRowInput& in, const FirstPartial& row_first, int part, int parts,
                                   unsigned long long* total) {
    const std::uint64_t floor = window_floor_key(row_first.max_logit);
    std::int64_t begin = 0;
    std::int64_t end = 0;
    part_range(in.vocab, part, parts, begin, end);
    for_each_value_in<4>(in.row, begin, end, [&](std::int32_t id, float raw) {
        const std::uint64_t key = rank_key(penalised_logit(in.penalised_bits, in.table, id, raw), id);
        if (key >= floor) in.gathered[atomicAdd(total, 1ULL)] = key;
    });
}

// ---- what one block does: the kernels of batch_cuda.cu are these ------------

// One row's job: its inputs, parameters and history.
struct FastRowJob {
    FastRowInput in;
    RowParams p;
    const std::int32_t* prompt;
    std::int64_t prompt_length;
    const std::int32_t* output;
    std::int64_t output_length;
};

constexpr int kNoOverflow = 0x7FFFFFFF;

// The row's history table and bits (a row without penalties has no bits and
// never builds or reads its table); the lowest overflowed id into overflow_id.
__device__ inline void history_block(int& overflow_id, const FastRowJob& job) {
    if (!job.in.penalised_bits) return;
    HistoryTable table = job.in.table;
    build_history(overflow_id, job.p, job.in.row, job.in.vocab, table, job.in.penalised_bits, job.prompt,
                  job.prompt_length, job.output, job.output_length);
}

// The whole row in one block. `split_overflow` is null unless the split
// path's blocks below ran first (job.in then carries their partials and gather).
__device__ inline void fast_row_block(FastShared& s, const FastRowJob& job, std::int32_t draws,
                                      const int* split_overflow) {
    if (threadIdx.x == 0) s.overflow_id = split_overflow ? *split_overflow : kNoOverflow;
    __syncthreads();
    if (!split_overflow) history_block(s.overflow_id, job);
    BlockRowContext context(s, job.in);
    fast_sample_row(context, job.in.vocab, job.p, draws);
}

// The split path: one part of the row's first read.
__device__ inline void first_part_block(typename FirstReduce::TempStorage& temp, const FastRowJob& job,
                                        int overflow_id, int part, int parts, FirstPartial* out) {
    first_read_part(temp, job.in, overflow_id == kNoOverflow, part, parts, out);
}

// The split path: one part of top-k's gather, for a row the routine will
// sample with top-k (any other row gathers nothing).
__device__ inline void gather_part_block(const FastRowJob& job, int overflow_id, const FirstPartial* partials,
                                         int part, int parts, unsigned long long* total) {
    if (job.p.greedy() || !job.p.uses_top_k(job.in.vocab) || overflow_id != kNoOverflow) return;
    const FirstPartial all = merge_parts(partials, parts);
    if (all.refused_id != kNoOverflow || !all.any_finite || !(all.max_logit > -HUGE_VALF)) return;
    gather_part(job.in, all, part, parts, total);
}

}  // namespace samplescope::batch
