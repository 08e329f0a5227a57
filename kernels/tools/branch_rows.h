// Rows built at V = 128,256 to send fast mode down each branch of its
// selection: past radix level 0, to the last levels, a kept set too large to
// hold as a list, a k above the finite count, min-p alone; a batch of every
// kind for run-to-run determinism; rows whose logits the contract refuses.
// One definition for the Qt test (tests/batch/test_batch_branches.cpp) and the GPU
// self-test (kernels/check/gpu_selftest.cpp), so both reach the same branches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/core/row_request.h"
#include "kernels/batch_engine.h"

namespace samplescope::batch {

inline constexpr std::size_t kBranchVocab = 128256;

// A batch assembled row by row: logits and the request that goes with them.
// input() points into `logits`, so the RowBatch must outlive it.
struct RowBatch {
    std::size_t vocab = kBranchVocab;
    std::vector<float> logits;
    std::vector<RowRequest> requests;

    std::size_t rows() const { return requests.size(); }
    void add(const std::vector<float>& row, const RowRequest& request);
    BatchInput input() const;
};

// Logits spread evenly over [low, high): a fixed linear congruential stream, so
// every machine builds the same rows. Over [0, 1) about 16,000 ids share each
// level-0 bucket, so a selection that lands there must go a level deeper.
std::vector<float> spread_row(std::uint64_t seed, float low, float high, std::size_t vocab = kBranchVocab);

// Default parameters (every stage off) with this seed.
RowRequest request_with(std::uint64_t seed);

// Top-p 0.9 and 0.5 alone over [0, 1): the walk goes one level past level 0
// and keeps more ids than a list holds.
RowBatch top_p_past_level_zero_rows();
// k = 5,000 alone, then k = 5,000 with p = 0.5: the kept set stays a
// threshold over the row, and the top-p after it selects from the row.
RowBatch top_k_above_capacity_rows();
// Every logit tied, k = 5 and then p = 0.3 alone: five radix levels.
RowBatch all_tied_rows();
// Half of each row -inf (every other id; the lower half) with k = 100,000.
RowBatch k_above_finite_count_rows();
// Min-p 0.05 at T = 0.8 and min-p 0.5 at T = 1.3, nothing else.
RowBatch min_p_alone_rows();
// One row of each kind above (top-p, k = 5,000 with p, tied k = 5, min-p).
RowBatch every_branch_rows();
// Five rows of top-p 0.9: clean; a NaN at id 70,000; +inf at id 5 before a
// NaN at id 9; +inf in the last id; every logit -inf.
RowBatch refused_logit_rows();

// The five batches of the selection's branches, by name, for loops over them.
struct BranchCase {
    std::string_view name;
    RowBatch (*build)();
};
inline constexpr BranchCase kBranchCases[] = {
    {"top-p past level 0", top_p_past_level_zero_rows},
    {"top-k above the list capacity", top_k_above_capacity_rows},
    {"all tied, five levels", all_tied_rows},
    {"k above the finite count", k_above_finite_count_rows},
    {"min-p alone", min_p_alone_rows},
};

}  // namespace samplescope::batch
