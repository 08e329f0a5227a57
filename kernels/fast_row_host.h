// Fast mode on the host twin: the shared row routine (kernels/fast_row.h) run
// by a context whose full-row passes are vector code (kernels/host_lanes.h),
// one row at a time; what follows a pass works on the few keys it kept.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/fast_row.h"
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
    // `table` holds the row's history with penalised logits filled in. The
    // row's logits are checked in the first pass: a refused row reports
    // RowError::RefusedLogit or RowError::NoFiniteLogit and is not sampled.
    void sample(const float* row, std::int64_t vocab, const RowParams& p, const HistoryTable& table,
                std::uint8_t* mask, std::int32_t draws, RowResult* results);

    // Full reads of a row's V logits so far, over every row this sampler ran.
    std::uint64_t row_reads() const { return row_reads_; }

    // Which branches the last sampled row took. Only written by the passes.
    using Branches = FastBranches;
    const Branches& last_branches() const { return branches_; }

private:
    friend class HostRowContext;
    std::uint64_t row_reads_ = 0;
    Branches branches_;
    // The penalised ids of the row and their f32 logits, grouped by block
    // (block b's are patches_[patch_start_[b] .. patch_start_[b + 1])), and a
    // bit per id; the first pass copies a block holding one into `scratch_`
    // and patches it there, later passes take the penalised ids on their own.
    std::vector<std::pair<std::int32_t, float>> patches_;
    std::vector<std::uint32_t> patch_start_;
    std::vector<std::uint32_t> patch_fill_;
    std::vector<std::uint64_t> patched_bits_;
    std::vector<float> scratch_;
    std::vector<std::uint32_t> counts_;
    std::vector<std::uint64_t> units_;
    std::vector<std::uint64_t> keys_;        // collect()'s ranked keys
    std::vector<std::uint64_t> gathered_;    // cover()'s keys, in id order
    std::vector<std::int32_t> range_ids_;
    std::vector<std::uint64_t> range_units_;
};

}  // namespace samplescope::batch
