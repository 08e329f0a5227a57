#include "engine/stats/chi_square.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

// Eigen's unsupported SpecialFunctions module has the regularised incomplete
// gamma functions (Eigen's core has none); it is part of the Eigen package
// the project already depends on.
#include <unsupported/Eigen/SpecialFunctions>

namespace samplescope {

double chi_square_p_value(double statistic, double dof) {
    if (dof <= 0.0) return 1.0;
    if (!std::isfinite(statistic)) return 0.0;
    if (statistic <= 0.0) return 1.0;
    return Eigen::numext::igammac(0.5 * dof, 0.5 * statistic);
}

void ChiSquareTest::add(const ChiSquareTest& other) {
    statistic += other.statistic;
    degrees_of_freedom += other.degrees_of_freedom;
    bins += other.bins;
    impossible_draws += other.impossible_draws;
    pooled_cells += other.pooled_cells;
    pooled_expected += other.pooled_expected;
    pooled_merged = pooled_merged || other.pooled_merged;
    p_value = impossible_draws > 0 ? 0.0 : chi_square_p_value(statistic, static_cast<double>(degrees_of_freedom));
}

ChiSquareTest pearson_test(std::span<const GoodnessCell> cells) {
    ChiSquareTest test;
    std::vector<GoodnessCell> bins;
    GoodnessCell pooled;
    for (const auto& c : cells) {
        if (c.expected == 0.0) {
            test.impossible_draws += c.observed;
        } else if (c.expected < kMinExpectedCount) {
            pooled.expected += c.expected;
            pooled.observed += c.observed;
            ++test.pooled_cells;
        } else {
            bins.push_back(c);
        }
    }
    test.pooled_expected = pooled.expected;
    if (pooled.expected > 0.0) {
        if (pooled.expected < kMinExpectedCount && !bins.empty()) {
            test.pooled_merged = true;
            auto smallest = std::min_element(bins.begin(), bins.end(), [](const GoodnessCell& x, const GoodnessCell& y) {
                return x.expected < y.expected;
            });
            smallest->expected += pooled.expected;
            smallest->observed += pooled.observed;
        } else {
            bins.push_back(pooled);
        }
    }
    test.bins = bins.size();
    test.degrees_of_freedom = bins.empty() ? 0 : bins.size() - 1;
    if (test.impossible_draws > 0) {
        test.statistic = std::numeric_limits<double>::infinity();
        test.p_value = 0.0;
        return test;
    }
    for (const auto& b : bins) {
        const double diff = static_cast<double>(b.observed) - b.expected;
        test.statistic += diff * diff / b.expected;
    }
    test.p_value = chi_square_p_value(test.statistic, static_cast<double>(test.degrees_of_freedom));
    return test;
}

ChiSquareTest chi_square_fit(std::span<const std::uint64_t> observed, std::span<const double> expected_probability,
                             std::uint64_t total, std::uint64_t outside) {
    std::vector<GoodnessCell> cells;
    cells.reserve(observed.size() + 1);
    for (std::size_t i = 0; i < observed.size(); ++i) {
        cells.push_back({expected_probability[i] * static_cast<double>(total), observed[i]});
    }
    if (outside > 0) cells.push_back({0.0, outside});
    return pearson_test(cells);
}

}  // namespace samplescope
