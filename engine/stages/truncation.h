// What the three truncation units (stage_top_k.cpp, stage_top_p.cpp,
// stage_min_p.cpp) share: the view a rule decides on, what it decided, and the
// rank-order helpers of the rules that model a stack's own sort. The
// contract's rules take the fast path through RowState's lazy ranking; a
// stack's rule sees its candidates fully ranked, as its stack sorts them.
#pragma once

#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "engine/core/trace.h"
#include "engine/stages/row_state.h"

namespace samplescope {

struct TruncationView {
    const Values& logits;        // all V logits at this point
    const IdList& candidates;    // the ids the rule sees, ascending (never empty)
    const SamplingParams& params;
    Arithmetic arithmetic;       // F32: the rule's sums and thresholds as its stack computes them
};

// The view of `row`'s current step.
inline TruncationView view_of(const RowState& row) {
    return TruncationView{row.logits(), row.candidates(), row.params, row.arithmetic};
}

struct TruncationOutcome {
    IdList kept;                  // ascending, a non-empty subset of the candidates
    bool tie_at_boundary = false;
    bool near_boundary = false;
    std::string note;
    StageTrace shown;             // the thresholds the rule reports (top-k, top-p, min-p fields)
};

inline bool near_threshold(double a, double b) { return std::fabs(a - b) <= kNearBoundary; }

// The candidates in rank order with their q (softmax over the candidates).
struct Ranked {
    IdList ids;
    Values probs;
};
// With `prefix`, only the first `prefix` ranks are in order (see rank_order).
Ranked ranked_candidates(const TruncationView& view, std::size_t prefix = SIZE_MAX);

// The first `count` ranked ids kept; with `with_walk`, top-p's walk fields.
void keep_prefix(const Ranked& ranked, std::size_t count, TruncationOutcome& out, bool with_walk);

// Whether ranks `kept_count - 1` and `kept_count` hold equal logits: an
// unstable sort could have put either on the kept side.
bool tie_across(const TruncationView& view, const Ranked& ranked, std::size_t kept_count);

// Hands a stack rule's decision to the row (intersected with the kept set for
// a joint step) and its flags and thresholds to the report and the trace.
void apply_outcome(RowState& row, TruncationOutcome outcome, StepReport& report, StageTrace& shown);

}  // namespace samplescope
