// The truncation rules of the pipelines (engine/pipelines/pipeline.h, kRules), each
// written as its stack compares, in f64. One function per rule; the runner
// decides which ids each one sees (renormalised after the step before, or the
// same ids as the step before when the step is joint).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/pipelines/pipeline.h"
#include "engine/core/trace.h"

namespace samplescope {

// A keep-or-drop decision this close to its threshold gets the "near the
// boundary" badge: the stacks compute in float32, so an f64 model may disagree
// with them there (docs/pipelines.md).
inline constexpr double kNearBoundary = 1e-6;

// Softmax over `ids` (ascending) at `logits`, aligned with ids: max-subtracted,
// the partition summed sequentially in ascending id order (contract section 2).
Values softmax_over_ids(const Values& logits, const IdList& ids);

// `ids` in rank order: logit descending, then id ascending. Where a stack
// sorts unstably this is the order the preset assumes (lower id first).
IdList rank_order(const Values& logits, const IdList& ids);

struct TruncationView {
    const Values& logits;        // all V logits at this point
    const IdList& candidates;    // the ids the rule sees, ascending (never empty)
    const SamplingParams& params;
};

struct TruncationOutcome {
    IdList kept;                  // ascending, a non-empty subset of the candidates
    bool tie_at_boundary = false;
    bool near_boundary = false;
    std::string note;

    std::optional<double> kth_logit;
    std::optional<std::size_t> crossing_rank;
    std::optional<std::int32_t> crossing_id;
    std::optional<double> crossing_mass;
    std::optional<double> max_prob;
    std::optional<double> prob_floor;
    std::shared_ptr<const IdList> walk_ids;
    std::shared_ptr<const Values> walk_mass;
};

// Whether the rule's parameter switches its step on, for a vocabulary of V ids.
bool truncation_active(Rule rule, const SamplingParams& params, std::size_t vocab_size);

// Applies a top-k, top-p or min-p rule. The rule must belong to one of those stages.
TruncationOutcome apply_truncation(Rule rule, const TruncationView& view);

}  // namespace samplescope
