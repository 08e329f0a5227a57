// Exact mode, one row: the contract's pipeline in f64 with sums in ascending id
// order, the PCG32 stream, one uniform per sampled row and the inverse-CDF walk;
// the same steps as the reference's stage units (engine/stages/stage_*.cpp),
// on the same row math (engine/core/row_math.h), written without allocation or
// the standard library so that the host twin and the CUDA kernel run this very code.
// Ranking uses a heap that is popped only as far as top-k and top-p need.
#pragma once

#include <cstdint>

#include "engine/core/element_math.h"
#include "engine/core/generator.h"
#include "engine/base/portable.h"
#include "engine/core/row_math.h"
#include "kernels/history_table.h"
#include "kernels/row_lanes.h"
#include "kernels/row_params.h"

namespace samplescope::batch {

// V doubles and two lists of V ids per row being sampled.
struct ExactWorkspace {
    double* logits = nullptr;
    std::int32_t* kept = nullptr;   // the kept set, ascending ids
    std::int32_t* order = nullptr;  // the heap, or the kept set in rank order
};

struct RankBefore {
    const double* logits;
    SS_HD bool operator()(std::int32_t a, std::int32_t b) const { return ranks_before(logits[a], a, logits[b], b); }
};

struct IdBefore {
    SS_HD bool operator()(std::int32_t a, std::int32_t b) const { return a > b; }
};

// A max-heap in which the top is the id that `before` puts first.
template <class Before>
SS_HD void heap_sift_down(std::int32_t* heap, std::int64_t size, std::int64_t i, Before before) {
    for (;;) {
        std::int64_t best = i;
        const std::int64_t left = 2 * i + 1;
        const std::int64_t right = left + 1;
        if (left < size && before(heap[left], heap[best])) best = left;
        if (right < size && before(heap[right], heap[best])) best = right;
        if (best == i) return;
        const std::int32_t held = heap[i];
        heap[i] = heap[best];
        heap[best] = held;
        i = best;
    }
}

template <class Before>
SS_HD void heap_make(std::int32_t* heap, std::int64_t size, Before before) {
    for (std::int64_t i = size / 2; i-- > 0;) heap_sift_down(heap, size, i, before);
}

// Moves the top to heap[size - 1], shrinks the heap and returns the top.
template <class Before>
SS_HD std::int32_t heap_pop(std::int32_t* heap, std::int64_t& size, Before before) {
    const std::int32_t top = heap[0];
    heap[0] = heap[size - 1];
    heap[size - 1] = top;
    --size;
    heap_sift_down(heap, size, 0, before);
    return top;
}

// Heapsort into ascending ids (the order every sum runs in).
SS_HD inline void sort_ids(std::int32_t* ids, std::int64_t size) {
    const IdBefore before;  // the top is the largest id, so popping fills the tail in ascending order
    heap_make(ids, size, before);
    std::int64_t left = size;
    while (left > 1) heap_pop(ids, left, before);
}

SS_HD inline double exact_penalised_logit(const float* row, const HistoryTable& table, std::int32_t id) {
    const std::int64_t slot = history_find(table, id);
    return slot < 0 ? static_cast<double>(row[id]) : table.penalised[slot];
}

// q of ids[i] under `sums`, for the inverse-CDF walk.
struct ProbAt {
    const double* logits;
    const std::int32_t* ids;
    SoftmaxSums sums;
    SS_HD double operator()(std::int64_t i) const {
        return softmax_numerator(logits[ids[i]], sums.max_logit) / sums.partition;
    }
};

// The softmax's maximum and partition over `ids` (ascending) across lanes:
// each lane's maximum and sum over its ids, then the lanes' reductions. With
// one lane this is softmax_sums() (row_math.h): the same maximum and the same
// additions in ascending id order.
// The lane's maximum in two independent chains, as max_over_ids takes it, so
// the comparisons overlap instead of waiting on each other.
template <class Lanes>
SS_HD double lane_max_over_ids(const Lanes& lanes, const double* logits, const std::int32_t* ids, std::int64_t size) {
    const std::int64_t step = lanes.size();
    double m0 = -HUGE_VAL, m1 = -HUGE_VAL;
    std::int64_t i = lanes.rank();
    for (; i + step < size; i += 2 * step) {
        const double a = logits[ids[i]];
        const double b = logits[ids[i + step]];
        m0 = a > m0 ? a : m0;
        m1 = b > m1 ? b : m1;
    }
    if (i < size) m0 = logits[ids[i]] > m0 ? logits[ids[i]] : m0;
    return m1 > m0 ? m1 : m0;
}

template <class Lanes>
SS_HD SoftmaxSums lanes_softmax_sums(const Lanes& lanes, const double* logits, const std::int32_t* ids,
                                     std::int64_t size) {
    SoftmaxSums sums{lanes.max(lane_max_over_ids(lanes, logits, ids, size)), 0.0};
    double partial = 0.0;
    for (std::int64_t i = lanes.rank(); i < size; i += lanes.size()) {
        partial += softmax_numerator(logits[ids[i]], sums.max_logit);
    }
    sums.partition = lanes.sum(partial);
    return sums;
}

// Writes `result` as every draw's result (the leader only).
template <class Lanes>
SS_HD void exact_write_all(const Lanes& lanes, const RowResult& result, std::int32_t draws, RowResult* results) {
    if (!lanes.leader()) return;
    for (std::int32_t j = 0; j < draws; ++j) results[j] = result;
}

// Samples `draws` tokens (draw j at position draws_before + j) from one row and
// writes them to results[0..draws). `table` holds the row's history with the
// penalised logits filled in; `mask` (V bytes, zeroed) receives the kept set.
//
// The passes over the whole row and over the kept set (widening, penalties,
// the finite ids, the maxima and softmax sums, greedy's argmax, temperature,
// min-p, the mask) run across `lanes`; the steps that are one sequence (the
// heap of top-k and top-p, sorting ids, the draw's walk) run on the leader,
// followed by a barrier. On the host (SerialLanes) every sum runs in ascending
// id order, as the reference's; across a block the sums are trees, so a GPU's
// logprob and walk agree with the reference under the near-tie rule.
template <class Lanes>
SS_HD void exact_sample_row(const Lanes& lanes, const float* row, std::int64_t vocab, const RowParams& p,
                            const HistoryTable& table, ExactWorkspace ws, std::uint8_t* mask, std::int32_t draws,
                            RowResult* results) {
    RowResult result;
    result.draws_after = p.draws_before;
    const auto fail = [&](RowError error, std::int64_t id) {
        result.error = error;
        result.error_id = static_cast<std::int32_t>(id);
        exact_write_all(lanes, result, draws, results);
    };

    // Steps 1 to 3: widen (checking the logits as they came: the first NaN or
    // +inf id, and whether any is finite), then the penalties on the ids of
    // the history.
    double* logits = ws.logits;
    std::int64_t refused = kNoId;
    std::int64_t none_finite = 1;
    for (std::int64_t i = lanes.rank(); i < vocab; i += lanes.size()) {
        const float x = row[i];
        logits[i] = static_cast<double>(x);
        if (!(x < HUGE_VALF) && i < refused) refused = i;
        if (x > -HUGE_VALF) none_finite = 0;
    }
    refused = lanes.min(refused);
    none_finite = lanes.min(none_finite);
    if (refused != kNoId) {
        // The refused logit travels in the logprob, for the message of a
        // batch whose logits the host cannot read.
        result.logprob = static_cast<double>(row[refused]);
        return fail(RowError::RefusedLogit, refused);
    }
    if (none_finite) return fail(RowError::NoFiniteLogit, -1);
    std::int64_t overflow_id = kNoId;
    for (std::int64_t s = lanes.rank(); s < table.capacity; s += lanes.size()) {
        const std::int32_t id = table.ids[s];
        if (id == kEmptySlot) continue;
        const double x = table.penalised[s];
        logits[id] = x;
        if (penalty_outcome(x) == PenaltyOutcome::Refused && id < overflow_id) overflow_id = id;
    }
    overflow_id = lanes.min(overflow_id);
    if (overflow_id != kNoId) return fail(RowError::PenaltyOverflow, overflow_id);
    std::int64_t n = keep_in_order(
        lanes, vocab, [&](std::int64_t i) { return finite_value(logits[i]); },
        [](std::int64_t i) { return static_cast<std::int32_t>(i); }, ws.kept);
    if (n == 0) return fail(RowError::PenaltyEmptiedRow, -1);

    // The reported logprob's normaliser: all finite ids after the penalties.
    const SoftmaxSums penalised = lanes_softmax_sums(lanes, logits, ws.kept, n);
    const RankBefore before{logits};

    if (p.greedy()) {
        RankedId mine{-HUGE_VAL, -1};
        for (std::int64_t i = lanes.rank(); i < n; i += lanes.size()) {
            const std::int32_t id = ws.kept[i];
            if (mine.id < 0 || ranks_before(logits[id], id, mine.logit, mine.id)) mine = RankedId{logits[id], id};
        }
        const auto best = static_cast<std::int32_t>(lanes.first_ranked(mine).id);
        result.token = best;
        result.kept_count = 1;
        result.logprob = log_softmax_at(logits[best], penalised.max_logit, penalised.partition);
        if (mask && lanes.leader()) mask[best] = 1;
        exact_write_all(lanes, result, draws, results);
        return;
    }

    if (p.uses_temperature()) {
        std::int64_t bad = kNoId;
        for (std::int64_t i = lanes.rank(); i < n; i += lanes.size()) {
            const std::int32_t id = ws.kept[i];
            logits[id] = apply_temperature(logits[id], p.temperature);
            if (!finite_value(logits[id]) && id < bad) bad = id;
        }
        bad = lanes.min(bad);
        if (bad != kNoId) return fail(RowError::TemperatureOverflow, bad);
    }

    std::int64_t ranked = 0;  // how many of ws.order hold the kept set in rank order
    if (p.uses_top_k(vocab)) {
        const std::int64_t k = p.top_k < n ? p.top_k : n;
        // When there are at least k lanes, k of them hold an id at or above the
        // k-th largest of the lanes' maxima, so no id below it is among the top
        // k: the heap then holds only the ids at or above it (on a block of 256
        // threads and k = 50, a small part of the row). The same k ids come out
        // of the heap in the same order either way.
        std::int64_t heaped = n;
        bool filtered = false;
        if (k <= lanes.size()) {
            const double floor = lanes.kth_largest(lane_max_over_ids(lanes, logits, ws.kept, n), k);
            filtered = floor > -HUGE_VAL;
            if (filtered) {
                heaped = keep_in_order(
                    lanes, n, [&](std::int64_t i) { return logits[ws.kept[i]] >= floor; },
                    [&](std::int64_t i) { return ws.kept[i]; }, ws.order);
            }
        }
        if (lanes.leader()) {
            if (!filtered) {
                for (std::int64_t i = 0; i < n; ++i) ws.order[i] = ws.kept[i];
            }
            heap_make(ws.order, heaped, before);
            std::int64_t size = heaped;
            for (std::int64_t j = 0; j < k; ++j) heap_pop(ws.order, size, before);
            // The popped ids sit at order[heaped - 1], order[heaped - 2], ... in rank order.
            for (std::int64_t j = 0; j < k; ++j) ws.kept[j] = ws.order[heaped - 1 - j];
            for (std::int64_t j = 0; j < k; ++j) ws.order[j] = ws.kept[j];
            sort_ids(ws.kept, k);
        }
        lanes.sync();
        ranked = k;
        n = k;
    }

    if (p.uses_top_p()) {
        const SoftmaxSums sums = lanes_softmax_sums(lanes, logits, ws.kept, n);
        std::int64_t walked = 0;
        if (lanes.leader()) {
            const bool have_rank = ranked == n;
            std::int64_t size = n;
            if (!have_rank) {
                for (std::int64_t i = 0; i < n; ++i) ws.order[i] = ws.kept[i];
                heap_make(ws.order, n, before);
            }
            double mass = 0.0;
            while (walked < n) {
                const std::int32_t id = have_rank ? ws.order[walked] : heap_pop(ws.order, size, before);
                mass += softmax_numerator(logits[id], sums.max_logit) / sums.partition;
                ++walked;
                if (top_p_reached(mass, p.top_p)) break;
            }
            const std::int64_t first = have_rank ? 0 : n - walked;
            for (std::int64_t j = 0; j < walked; ++j) ws.kept[j] = ws.order[first + j];
            sort_ids(ws.kept, walked);
        }
        n = lanes.share(walked);
    }

    if (p.uses_min_p()) {
        const SoftmaxSums sums = lanes_softmax_sums(lanes, logits, ws.kept, n);
        double max_prob = 0.0;
        for (std::int64_t i = lanes.rank(); i < n; i += lanes.size()) {
            const double q = softmax_numerator(logits[ws.kept[i]], sums.max_logit) / sums.partition;
            max_prob = q > max_prob ? q : max_prob;
        }
        const double floor = min_p_floor(lanes.max(max_prob), p.min_p);
        n = keep_in_order(
            lanes, n,
            [&](std::int64_t i) {
                return min_p_keeps(softmax_numerator(logits[ws.kept[i]], sums.max_logit) / sums.partition, floor);
            },
            [&](std::int64_t i) { return ws.kept[i]; }, ws.kept);
    }

    // Steps 9 to 11: softmax over the kept set, one uniform, the inverse-CDF walk.
    const SoftmaxSums sums = lanes_softmax_sums(lanes, logits, ws.kept, n);
    result.kept_count = static_cast<std::int32_t>(n);
    if (lanes.leader()) {
        Pcg32 rng = stream_after(p.seed, p.draws_before);
        for (std::int32_t j = 0; j < draws; ++j) {
            const double u = rng.uniform_f64();
            bool fell_back = false;
            const std::int32_t token =
                inverse_cdf_walk(ws.kept, n, ProbAt{logits, ws.kept, sums}, u, nullptr, fell_back);
            result.token = token;
            result.logprob = log_softmax_at(exact_penalised_logit(row, table, token), penalised.max_logit,
                                            penalised.partition);
            result.draws_after = p.draws_before + static_cast<std::uint64_t>(j) + 1;
            results[j] = result;
        }
    }
    if (mask) {
        for (std::int64_t i = lanes.rank(); i < n; i += lanes.size()) mask[ws.kept[i]] = 1;
    }
}

// The host twin's call: one lane, the reference's bits.
SS_HD inline void exact_sample_row(const float* row, std::int64_t vocab, const RowParams& p, const HistoryTable& table,
                                   ExactWorkspace ws, std::uint8_t* mask, std::int32_t draws, RowResult* results) {
    exact_sample_row(SerialLanes{}, row, vocab, p, table, ws, mask, draws, results);
}

}  // namespace samplescope::batch
