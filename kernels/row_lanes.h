// How a row routine spreads its work: over one lane (the host twin, which must
// give the reference's bits) or over the threads of a block (the CUDA exact
// kernel). A routine written against this interface loops with
// `for (i = lanes.rank(); i < n; i += lanes.size())` and combines each lane's
// partial result with one of the reductions below, so its per-element math
// exists once. With one lane every loop runs in ascending order and every
// reduction returns its argument, so a sum is the plain sequential sum.
//
// Rules for a routine over lanes (they keep the block's barriers uniform):
// every lane calls every reduction, scan and sync in the same order; a value
// that decides whether a lane calls one (a count, a failure) comes from a
// reduction or from share(); a reduction is also a barrier, so memory written
// before it is visible to every lane after it.
#pragma once

#include <cmath>
#include <cstdint>

#include "engine/base/portable.h"
#include "engine/core/element_math.h"

namespace samplescope::batch {

// A logit and its id, for "the first id in rank order" across lanes.
struct RankedId {
    double logit;
    std::int64_t id;  // -1: none
};

// Whether `b` ranks before `a` (logit descending, then id ascending); an entry
// without an id ranks after everything.
SS_HD inline bool ranked_before(const RankedId& b, const RankedId& a) {
    if (b.id < 0) return false;
    return a.id < 0 || ranks_before(b.logit, b.id, a.logit, a.id);
}

inline constexpr std::int64_t kNoId = 0x7FFFFFFFFFFFFFFF;

// One lane: the host twin.
struct SerialLanes {
    static constexpr int kRun = 1;  // ids per lane and tile in keep_in_order
    SS_HD int rank() const { return 0; }
    SS_HD int size() const { return 1; }
    SS_HD bool leader() const { return true; }
    SS_HD void sync() const {}
    SS_HD double sum(double x) const { return x; }
    SS_HD double max(double x) const { return x; }
    SS_HD std::int64_t min(std::int64_t x) const { return x; }
    SS_HD RankedId first_ranked(RankedId x) const { return x; }
    SS_HD std::int64_t share(std::int64_t x) const { return x; }
    SS_HD double kth_largest(double x, std::int64_t k) const { return k == 1 ? x : -HUGE_VAL; }
    // The count of the lanes before this one, and the count of all lanes.
    SS_HD std::int64_t count_before(std::int64_t mine, std::int64_t& total) const {
        total = mine;
        return 0;
    }
};

// The threads of one block (size a power of two), with `size` doubles and
// `size` integers of memory that every lane sees (shared memory on the GPU),
// and `Barrier` as the block's barrier. Each reduction combines the lanes in a
// fixed tree, so its result depends on the values only, never on scheduling:
// the same row gives the same bits on every run.
template <class Barrier>
struct BlockLanes {
    static constexpr int kRun = 8;  // ids per lane and tile in keep_in_order
    int lane;
    int lanes;
    double* values;         // [lanes]
    std::int64_t* counts;   // [lanes]
    Barrier barrier;

    SS_HD int rank() const { return lane; }
    SS_HD int size() const { return lanes; }
    SS_HD bool leader() const { return lane == 0; }
    SS_HD void sync() const { barrier(); }

    SS_HD double sum(double x) const {
        values[lane] = x;
        barrier();
        for (int half = lanes / 2; half > 0; half /= 2) {
            if (lane < half) values[lane] = values[lane] + values[lane + half];
            barrier();
        }
        const double total = values[0];
        barrier();
        return total;
    }

    SS_HD double max(double x) const {
        values[lane] = x;
        barrier();
        for (int half = lanes / 2; half > 0; half /= 2) {
            if (lane < half && values[lane + half] > values[lane]) values[lane] = values[lane + half];
            barrier();
        }
        const double best = values[0];
        barrier();
        return best;
    }

    SS_HD std::int64_t min(std::int64_t x) const {
        counts[lane] = x;
        barrier();
        for (int half = lanes / 2; half > 0; half /= 2) {
            if (lane < half && counts[lane + half] < counts[lane]) counts[lane] = counts[lane + half];
            barrier();
        }
        const std::int64_t least = counts[0];
        barrier();
        return least;
    }

    SS_HD RankedId first_ranked(RankedId x) const {
        values[lane] = x.logit;
        counts[lane] = x.id;
        barrier();
        for (int half = lanes / 2; half > 0; half /= 2) {
            if (lane < half) {
                const RankedId other{values[lane + half], counts[lane + half]};
                if (ranked_before(other, RankedId{values[lane], counts[lane]})) {
                    values[lane] = other.logit;
                    counts[lane] = other.id;
                }
            }
            barrier();
        }
        const RankedId first{values[0], counts[0]};
        barrier();
        return first;
    }

    // The leader's x, for every lane.
    SS_HD std::int64_t share(std::int64_t x) const {
        if (lane == 0) counts[0] = x;
        barrier();
        const std::int64_t shared = counts[0];
        barrier();
        return shared;
    }

    // The k-th largest of the lanes' values (1 <= k <= lanes; ties ordered by
    // lane), or -inf for any other k. Each lane counts the values ranked
    // before its own, so exactly one lane finds k - 1 and hands its value on.
    SS_HD double kth_largest(double x, std::int64_t k) const {
        if (k < 1 || k > lanes) return -HUGE_VAL;
        values[lane] = x;
        barrier();
        std::int64_t before = 0;
        for (int j = 0; j < lanes; ++j) {
            const double y = values[j];
            before += (y > x || (y == x && j < lane)) ? 1 : 0;
        }
        barrier();
        if (before == k - 1) values[0] = x;
        barrier();
        const double kth = values[0];
        barrier();
        return kth;
    }

    // An exclusive scan of one count per lane (Hillis and Steele's, in place).
    SS_HD std::int64_t count_before(std::int64_t mine, std::int64_t& total) const {
        counts[lane] = mine;
        barrier();
        for (int offset = 1; offset < lanes; offset *= 2) {
            const std::int64_t add = lane >= offset ? counts[lane - offset] : 0;
            barrier();
            counts[lane] += add;
            barrier();
        }
        const std::int64_t through = counts[lane];
        total = counts[lanes - 1];
        barrier();
        return through - mine;
    }
};

// The ids i in [0, count) for which keep(i) holds, as value(i), written to
// out in ascending i; returns how many. out may be the array value() reads
// from (an in-place filter): each lane reads its run of a tile before the
// scan's barriers and writes at or below what it read, so nothing unread is
// overwritten.
template <class Lanes, class Keep, class Value>
SS_HD std::int64_t keep_in_order(const Lanes& lanes, std::int64_t count, Keep keep, Value value, std::int32_t* out) {
    constexpr int kRun = Lanes::kRun;  // consecutive ids per lane and tile
    const std::int64_t tile = static_cast<std::int64_t>(kRun) * lanes.size();
    std::int64_t written = 0;
    for (std::int64_t base = 0; base < count; base += tile) {
        const std::int64_t first = base + static_cast<std::int64_t>(lanes.rank()) * kRun;
        std::int32_t held[kRun];
        int found = 0;
        for (int j = 0; j < kRun; ++j) {
            const std::int64_t i = first + j;
            if (i < count && keep(i)) held[found++] = value(i);
        }
        std::int64_t total = 0;
        const std::int64_t before = lanes.count_before(found, total);
        for (int j = 0; j < found; ++j) out[written + before + j] = held[j];
        written += total;
    }
    lanes.sync();
    return written;
}

}  // namespace samplescope::batch
