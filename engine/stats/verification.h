// Verifying a sampler from its own draws: given the exact final distribution
// (kept ids and q of a pipeline, engine/pipelines/pipeline_runner.h) and the
// token ids a sampler under test drew, decide whether the draws are
// consistent with q. Written once here for the CLI's `verify`, the GUI tab
// and the Python module; docs/verify.md explains every number.
//
// Per row:
//   support  every draw outside the kept set (or of an id with q = 0) is a hard failure;
//   G-test   likelihood ratio against q over bins pooled by kMinExpectedPerBin
//            (pool_bins), Williams' correction, p-value from chi-square;
//   tail     draws in the lowest-probability region (tail_region) against
//            their Poisson expectation, two-sided;
//   power    the smallest total-variation distance the G-test detects with
//            power kVerifyPower at the row's level (detectable_tv).
// Across rows, the G and tail p-values of every row are corrected together
// by Holm's step-down method; a row fails when either of its tests is
// rejected at alpha after correction, or when it has a support violation.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/core/row_request.h"
#include "engine/core/trace.h"
#include "engine/stages/pipeline.h"

namespace samplescope {

inline constexpr double kDefaultVerifyAlpha = 1e-3;
inline constexpr double kVerifyPower = 0.9;
// The tail region: ids whose q sums to the smallest kTailMass of the mass,
// and every id with q below kTinyProbability (2^-24, the resolution of an f32 uniform).
inline constexpr double kTailMass = 1e-4;
inline constexpr double kTinyProbability = 0x1p-24;
// The pooling rule: bins are filled in ascending q (ties by id) until each
// expects at least this many draws; a remainder joins the last bin. 20 rather
// than the textbook 5: over tens of thousands of bins expecting 5 draws each,
// G (even with Williams' correction) runs high enough to double the false
// alarms (docs/verify.md).
inline constexpr double kMinExpectedPerBin = 20.0;
inline constexpr std::size_t kReportedDeviations = 5;

struct IdCount {
    std::int64_t id = 0;
    std::uint64_t count = 0;
};

struct GTest {
    double statistic = 0.0;              // 2 sum O ln(O / E), divided by Williams' factor q
    std::size_t degrees_of_freedom = 0;  // bins - 1
    std::size_t bins = 0;
    double p_value = 1.0;                // 1 when there is nothing to test (one bin)
};

struct TailTest {
    std::size_t ids = 0;              // ids in the tail region
    std::size_t ids_below_tiny = 0;   // of which q < 2^-24
    double mass = 0.0;                // their total q
    std::uint64_t observed = 0;       // draws that fell in it
    double expected = 0.0;            // N x mass
    double p_value = 1.0;             // two-sided, Poisson(expected)
};

struct Deviation {
    std::int64_t id = 0;
    std::uint64_t observed = 0;
    double expected = 0.0;
    double z = 0.0;  // (O - N q) / sqrt(N q (1 - q))
};

struct RowVerification {
    std::uint64_t samples = 0;
    std::vector<IdCount> support_violations;  // ascending id
    std::uint64_t outside_count = 0;          // draws among them
    GTest g;
    TailTest tail;
    double detectable_tv = 1.0;
    double level = kDefaultVerifyAlpha;       // the per-test level the power is computed at
    std::vector<Deviation> largest_deviations;  // by |z|, at most kReportedDeviations
    double g_p_holm = 1.0;     // after Holm across every test of the batch
    double tail_p_holm = 1.0;
    bool pass = true;
};

struct VerifyResult {
    std::vector<RowVerification> rows;
    double alpha = kDefaultVerifyAlpha;
    bool pass = true;
    bool cancelled = false;  // stopped early: `rows` holds the rows done, no verdict
};

// One row to verify: the exact distribution (ids ascending, aligned with q)
// and the draws.
struct VerifyRowInput {
    const IdList* kept = nullptr;
    const Values* q = nullptr;
    std::span<const std::int64_t> samples;
};

using VerifyProgress = std::function<void(std::size_t rows_done)>;

// Throws InputError for alpha outside (0, 1) or a row without draws.
VerifyResult verify_rows(std::span<const VerifyRowInput> rows, double alpha = kDefaultVerifyAlpha,
                         const VerifyProgress& progress = {}, const std::atomic<bool>* cancel = nullptr);

// The pieces, public for tests and for the GUI's plot.

// Distinct ids and how often each was drawn, ascending id.
std::vector<IdCount> count_samples(std::span<const std::int64_t> samples);

// Positions into q of the ids in ascending (q, id) order.
std::vector<std::size_t> ascending_q_order(const Values& q);

// The bin of each position of q under the pooling rule for `draws` draws;
// returns the number of bins. q = 0 ids go in no bin (bin_of = SIZE_MAX).
std::size_t pool_bins(const Values& q, double draws, std::vector<std::size_t>& bin_of);

// The G-test of observed counts against expected counts (both per bin).
GTest g_test(std::span<const double> observed, std::span<const double> expected);

// Positions into q of the tail region (a prefix of ascending_q_order).
std::vector<std::size_t> tail_region(const Values& q);

// Two-sided Poisson p-value of `observed` with mean `expected`.
double poisson_two_sided_p(std::uint64_t observed, double expected);

// Holm's step-down adjusted p-values, aligned with `p`.
std::vector<double> holm_adjust(std::span<const double> p);

// Chi-square: upper tail Q(dof / 2, x / 2), and its inverse at level a.
double chi_square_upper(double x, double dof);
double chi_square_critical(double level, double dof);

// The noncentrality at which a chi-square test with `dof` degrees of freedom
// at `level` has power `power` (the noncentral chi-square as a Poisson
// mixture of central ones).
double noncentrality_for_power(double level, double dof, double power = kVerifyPower);

// The smallest total-variation distance (over the bins) that `draws` draws
// detect with power `power` at `level`, for the distribution q.
double detectable_tv(const Values& q, std::uint64_t draws, double level, double power = kVerifyPower);

// The fewest draws whose detectable_tv is at most `tv`. Throws InputError for
// tv outside (0, 1], and when more than 2^53 draws are needed.
std::uint64_t samples_needed(const Values& q, double tv, double level, double power = kVerifyPower);

// The smallest per-test level: below it the chi-square tail leaves the
// range where it is computed accurately (and alpha / (2 B) turns subnormal).
inline constexpr double kMinTestLevel = 1e-300;

// The per-test level verify_rows computes power at: alpha / (2 x rows), the
// strictest step of Holm's correction over a batch's 2 x rows tests. Throws
// InputError("alpha") when it is below kMinTestLevel.
double per_test_level(double alpha, std::size_t rows);

// A sampler's draws for rows of logits, verified against a pipeline's exact
// final distribution: what the CLI, the GUI and the Python module run.
struct SamplerRow {
    std::vector<double> logits;
    RowRequest request;
    std::size_t row = 0;                 // the row's index in its logits file
    std::vector<std::int64_t> samples;   // the sampler's draws
};

struct SamplerVerification {
    VerifyResult result;
    std::vector<PipelineTrace> exact;  // per row: the pipeline's kept set and q
    std::vector<std::size_t> row;      // per row: its index in the logits file
};

// The distribution a sampler's draws of one row follow: the pipeline's final
// kept set and q, or, where an XTC step's coin could change them, the mixture
// (1 - p) q_without + p q_with (PipelineTrace::xtc), since each draw throws
// its own coin. Neither depends on the seed.
const IdList& verified_ids(const PipelineTrace& exact);
const Values& verified_probs(const PipelineTrace& exact);

// Throws InputError for a bad row, parameter or alpha, or a row without draws.
SamplerVerification verify_sampler(const Pipeline& pipeline, std::span<const SamplerRow> rows,
                                   double alpha = kDefaultVerifyAlpha, const VerifyProgress& progress = {},
                                   const std::atomic<bool>* cancel = nullptr);

// The exact distribution of each row (no draws needed), for --plan.
std::vector<PipelineTrace> exact_distributions(const Pipeline& pipeline, std::span<const SamplerRow> rows);

}  // namespace samplescope
