// Pearson's chi-square goodness of fit, written once for the empirical
// histogram (engine/stats/empirical_sampling.h) and the batch engine's draws
// (kernels/tools/batch_compare.h). The p-value is Eigen's regularised upper
// incomplete gamma (unsupported/Eigen/SpecialFunctions).
//
// The pooling rule (docs/pipelines.md, "Empirical sampling"): Pearson's
// approximation needs expected counts of about 5 or more, so every cell
// expected to hold fewer than 5 draws is pooled into one bin, and that bin, if
// it still expects fewer than 5, into the smallest of the other bins. A draw
// of a cell whose expected count is 0 is impossible: the test then fails
// outright (statistic +inf, p = 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace samplescope {

// The expected count below which a cell is pooled (the rule above).
inline constexpr double kMinExpectedCount = 5.0;

// P(X >= statistic) for X ~ chi-square with `dof` degrees of freedom:
// Q(dof / 2, statistic / 2); 1 for dof = 0, 0 for an infinite statistic.
double chi_square_p_value(double statistic, double dof);

struct GoodnessCell {
    double expected = 0.0;       // expected count (N q)
    std::uint64_t observed = 0;  // observed count
};

struct ChiSquareTest {
    double statistic = 0.0;  // +inf when an impossible cell was drawn
    std::size_t degrees_of_freedom = 0;
    std::size_t bins = 0;    // after pooling
    double p_value = 1.0;    // 1 when there is nothing to test (one bin)
    std::uint64_t impossible_draws = 0;
    // The pooling, so a view can say what was tested: the cells expected
    // below kMinExpectedCount, their expected count together, and whether
    // their bin (still below it) joined the smallest other bin.
    std::size_t pooled_cells = 0;
    double pooled_expected = 0.0;
    bool pooled_merged = false;

    // Adds an independent test (another row): statistics, degrees of freedom,
    // bins, impossible draws and the pooling add; the p-value is that of the sums.
    void add(const ChiSquareTest& other);
};

// The test over cells, pooled by the rule above.
ChiSquareTest pearson_test(std::span<const GoodnessCell> cells);

// Observed counts against expected probabilities over `total` draws; `outside`
// draws fell in no cell (impossible draws).
ChiSquareTest chi_square_fit(std::span<const std::uint64_t> observed, std::span<const double> expected_probability,
                             std::uint64_t total, std::uint64_t outside = 0);

}  // namespace samplescope
