// Pearson's goodness-of-fit test, used to check that the fast mode's draws
// follow the reference's q. Written here because the project's dependencies
// (standard library, Eigen, nlohmann/json) have no incomplete gamma function.
#pragma once

#include <cstdint>
#include <span>

namespace samplescope::batch {

// P(X >= statistic) for X ~ chi-square with `dof` degrees of freedom: the
// regularised upper incomplete gamma Q(dof / 2, statistic / 2).
double chi_square_p_value(double statistic, double dof);

struct ChiSquare {
    double statistic = 0.0;
    double dof = 0.0;
    void add(const ChiSquare& other) {
        statistic += other.statistic;
        dof += other.dof;
    }
    double p_value() const { return chi_square_p_value(statistic, dof); }
};

// Observed counts against expected probabilities (summing to 1) over `total`
// draws. Cells expected to hold fewer than 5 draws are pooled (smallest first)
// so the chi-square approximation holds; `outside` counts draws that fell in no
// cell (each is charged as a cell with an expectation of 0.5 draws).
ChiSquare chi_square_fit(std::span<const std::uint64_t> observed, std::span<const double> expected_probability,
                         std::uint64_t total, std::uint64_t outside = 0);

}  // namespace samplescope::batch
