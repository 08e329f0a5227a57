// The near-tie rule of contract section 4: how two float paths that do not run
// the same operations in the same order are compared. Every comparison in the
// project (the batch engine's exact and fast modes, the CLI's `compare`, the
// GUI's Compare view, the tests) calls these functions, so the rule lives here only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine/core/trace.h"

namespace samplescope {

enum class Verdict { Equal, NearTie, Mismatch };

std::string_view verdict_name(Verdict verdict);

// The tolerances each mode documents: exact f64 modes use delta = 1e-9 for the
// token, the kept set and the logprob; f32 modes use about 1e-5 (relative) for
// decisions and 1e-4 (absolute) for the logprob.
struct NearTieTolerance {
    double delta;
    double logprob;
};
inline constexpr NearTieTolerance kExactTolerance{1e-9, 1e-9};
inline constexpr NearTieTolerance kFastTolerance{1e-5, 1e-4};

// |a - b| <= delta x max(1, |a|, |b|): absolute for probabilities and masses,
// relative for large logits.
bool within_delta(double a, double b, double delta);

// Token: equal; or (sampled) the reference's u lies within delta of a cumulative
// boundary between the two tokens; or (greedy) their logits differ by at most
// delta times their magnitude.
Verdict compare_token(const SampleTrace& reference, std::int32_t token, double delta);

// Kept set (ascending ids): equal, or every id on which the two disagree has a
// keep-or-drop decision within delta of its threshold (top-k: a dropped id's
// logit against the k-th logit, a kept id's against the best dropped one; top-p: its exclusive prefix mass against p; min-p: its q
// against min_p x max q; greedy: its logit against the largest). The ids that
// are neither go to `mismatched` when given.
Verdict compare_kept(const SampleTrace& reference, std::span<const std::int32_t> kept, double delta,
                     std::vector<std::int32_t>* mismatched = nullptr);

// Logprob: within the mode's tolerance (absolute) counts as equal.
Verdict compare_logprob(double reference, double other, double tolerance);

// log_softmax over all V ids after the penalties, for any id (the reference's
// reported logprob is this at its own token).
double reference_logprob_of(const SampleTrace& reference, std::int32_t id);

// The worse of two verdicts.
Verdict worst(Verdict a, Verdict b);

// The four counts every comparison reports.
struct CompareCounts {
    std::size_t rows = 0;
    std::size_t equal = 0;
    std::size_t near_tie = 0;
    std::size_t mismatch = 0;
    void add(Verdict verdict);
};

}  // namespace samplescope
