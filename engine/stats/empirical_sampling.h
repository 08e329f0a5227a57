// Empirical sampling: N consecutive draws of a request's stream from a
// pipeline's final distribution, counted per id and tested against the exact
// q with Pearson's chi-square goodness of fit, and token by token with Holm's
// correction over the tokens tested.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "engine/core/generator.h"
#include "engine/stages/pipeline.h"
#include "engine/stats/chi_square.h"

namespace samplescope {

inline constexpr std::uint64_t kMaxDraws = 1'000'000;

// The level the empirical verdicts are stated at: the chi-square test rejects
// the exact q when p < alpha, and a single token deviates when its
// Holm-adjusted p < alpha. A correct sampler is rejected in about 1% of runs.
inline constexpr double kEmpiricalAlpha = 0.01;

struct Histogram {
    IdList ids;                          // the ids that can be drawn, ascending
    Values expected;                     // their exact q
    std::vector<std::uint64_t> counts;   // how often each was drawn
    std::uint64_t draws = 0;             // draws done (fewer than asked when cancelled)
    bool cancelled = false;
};

struct LargestDeviation {
    std::int32_t id = -1;
    double z = 0.0;  // (count - N q) / sqrt(N q (1 - q)), the largest in absolute value
};

// Each token expected to be drawn at least kMinExpectedCount times (the
// chi-square's own rule, engine/stats/chi_square.h) tested alone: z = (count -
// N q) / sqrt(N q (1 - q)), its two-sided p by the normal approximation,
// erfc(|z| / sqrt 2), adjusted by Holm's step-down method over the tested
// tokens (holm_adjust, engine/stats/verification.h). Tokens expected fewer
// times are left to the pooled bin: a token expected 0.001 times and drawn
// once sits 31.6 standard errors from its mean, which the normal
// approximation cannot judge.
struct TokenDeviations {
    std::size_t tested = 0;  // tokens tested one by one
    std::int32_t id = -1;    // the tested token with the largest |z|; -1 when none was tested
    double z = 0.0;
    double p = 1.0;       // its two-sided p
    double p_holm = 1.0;  // its p after Holm's correction over the `tested` tokens
};

using DrawProgress = std::function<void(std::uint64_t done)>;

// Draws `draws` tokens from (kept, q) with consecutive uniforms of `rng`, each
// by the contract's inverse CDF in ascending id order. `progress` is called
// every 65536 draws; `cancel`, when set, stops early. Throws InputError for
// draws outside [1, kMaxDraws].
Histogram draw_histogram(const IdList& kept, const Values& q, Pcg32& rng, std::uint64_t draws,
                         const DrawProgress& progress = {}, const std::atomic<bool>* cancel = nullptr);

// The same for a step with an XTC coin (PipelineTrace::xtc): each draw takes
// its coin from `coins` (XTC's stream) and its uniform from `rng`, and draws
// from the distribution the coin chose; `expected` is the mixture.
Histogram draw_xtc_histogram(const XtcMixture& xtc, Pcg32& rng, Pcg32& coins, std::uint64_t draws,
                             const DrawProgress& progress = {}, const std::atomic<bool>* cancel = nullptr);

// Counts against the exact q of (ids, q), matched by id; an id absent from
// either side counts 0 there.
ChiSquareTest chi_square_test(const Histogram& histogram, const IdList& ids, const Values& q);
LargestDeviation largest_deviation(const Histogram& histogram, const IdList& ids, const Values& q);
TokenDeviations token_deviations(const Histogram& histogram, const IdList& ids, const Values& q);

// Whether the chi-square test rejects the exact q at `alpha` (p < alpha; a
// draw of a q = 0 token makes p = 0).
inline bool rejects(const ChiSquareTest& test, double alpha = kEmpiricalAlpha) { return test.p_value < alpha; }


struct EmpiricalResult {
    PipelineTrace trace;  // the first step: kept set and exact q
    Histogram histogram;
    ChiSquareTest test;
    LargestDeviation deviation;  // over every id, however rare (the CLI's `largest_deviation`)
    TokenDeviations tokens;
};

// The request's stream (seed from the params, chosen when absent; skip_draws
// discarded) drawn `draws` times from the pipeline's final distribution (with
// XTC: each draw with its own coin, tested against the mixture). The
// first draw is the trace's own. A greedy step without a draw gives N copies
// of its token and consumes no uniform.
EmpiricalResult sample_empirically(const Pipeline& pipeline, const PipelineInput& input, std::uint64_t draws,
                                   std::uint64_t skip_draws = 0, const DrawProgress& progress = {},
                                   const std::atomic<bool>* cancel = nullptr);

}  // namespace samplescope
