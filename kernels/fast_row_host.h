// Fast mode on the host twin: one row at a time, the same selection passes as
// the CUDA kernel (kernels/fast_select.h). The full-row passes are vector code
// (kernels/host_lanes.h); what follows a pass works on the few ids it kept.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/history_table.h"
#include "kernels/row_params.h"

namespace samplescope::batch {

// What one read of a row's logits says about the contract's refusals: the
// first NaN or +inf id (-1 when none) and whether any logit is finite.
struct LogitCheck {
    std::int32_t refused_id = -1;
    bool any_finite = false;
    bool ok() const { return refused_id < 0 && any_finite; }
};

// The check alone, for rows that do not run fast mode's passes (exact mode).
LogitCheck check_row_logits(const float* row, std::int64_t vocab);

class FastRowSampler {
public:
    static constexpr int kCoarseBounds = 8;

    // `table` holds the row's history with penalised logits filled in. The
    // row's logits are checked in the first pass: a refused row reports
    // RowError::RefusedLogit or RowError::NoFiniteLogit and is not sampled.
    void sample(const float* row, std::int64_t vocab, const RowParams& p, const HistoryTable& table,
                std::uint8_t* mask, std::int32_t draws, RowResult* results);

    // Full reads of a row's V logits so far, over every row this sampler ran.
    std::uint64_t row_reads() const { return row_reads_; }

    // Which branches the last sampled row took, so tests can show they reach
    // each one. Only written, never read, by the passes.
    struct Branches {
        int top_k_levels = 0;             // radix levels top-k's select histogrammed (0: not run)
        bool top_k_materialised = false;  // top-k's kept set came out as a ranked list
        int top_p_levels = 0;             // radix levels top-p's select histogrammed (0: not run)
        bool top_p_materialised = false;
        bool top_p_walked = false;        // top-p walked top-k's materialised set instead
        bool min_p_raised = false;        // min-p's bound lay above the other stages' threshold
    };
    const Branches& last_branches() const { return branches_; }

private:
    struct Selection {
        std::uint64_t threshold;   // kept: rank key >= threshold
        bool materialised;         // keys_ holds exactly the kept set, ranked
    };
    Selection select(std::uint64_t lower, bool by_mass, double target);
    // Top-p over a kept set already held in keys_, in rank order.
    Selection walk_materialised(double target);
    float weight(std::uint64_t key, bool by_mass) const;
    void collect(std::uint64_t lo, std::uint64_t hi);
    // Level 0 of top-k's selection from the counts the normaliser's pass took:
    // only ids at or above `floor_digit` are histogrammed (and kept in
    // candidates_ when they are few).
    void histogram_from_floor(std::uint32_t floor_digit);
    // Calls f(id) for every id whose order key lies in [lo32, hi32], in id order.
    template <class F>
    void for_each_in_range(std::uint32_t lo32, std::uint32_t hi32, F&& f);

    const float* row_ = nullptr;
    std::int64_t vocab_ = 0;
    float max_logit_ = 0.0f;
    float inverse_temperature_ = 1.0f;
    std::uint64_t row_reads_ = 0;
    int select_levels_ = 0;
    Branches branches_;
    std::vector<float> penalised_;
    std::vector<std::uint64_t> keys_;
    std::vector<std::uint32_t> counts_;
    std::vector<double> masses_;
    std::vector<std::int32_t> range_ids_;
    // Every key with a level-0 digit >= candidates_floor_, in id order, when
    // candidates_valid_ (top-k's first select): later levels read these, not the row.
    std::vector<std::uint64_t> candidates_;
    std::uint64_t candidates_floor_ = 0;
    bool candidates_valid_ = false;
    // Counts of order keys at or above each of top-k's coarse bounds (the normaliser's pass).
    std::uint32_t coarse_bounds_[kCoarseBounds] = {};
    std::uint32_t coarse_counts_[kCoarseBounds] = {};
    int coarse_used_ = 0;
};

}  // namespace samplescope::batch
