#include "engine/stats/chi_square.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace samplescope::batch {

namespace {

// Series for P(a, x), good for x < a + 1.
double lower_gamma_series(double a, double x) {
    double term = 1.0 / a;
    double sum = term;
    for (int n = 1; n < 100000; ++n) {
        term *= x / (a + n);
        sum += term;
        if (std::fabs(term) < std::fabs(sum) * 1e-15) break;
    }
    return sum * std::exp(-x + a * std::log(x) - std::lgamma(a));
}

// Continued fraction for Q(a, x) (modified Lentz), good for x >= a + 1.
double upper_gamma_fraction(double a, double x) {
    constexpr double tiny = 1e-300;
    double b = x + 1.0 - a;
    double c = 1.0 / tiny;
    double d = 1.0 / b;
    double h = d;
    for (int i = 1; i < 100000; ++i) {
        const double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if (std::fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (std::fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        const double step = d * c;
        h *= step;
        if (std::fabs(step - 1.0) < 1e-15) break;
    }
    return std::exp(-x + a * std::log(x) - std::lgamma(a)) * h;
}

}  // namespace

double chi_square_p_value(double statistic, double dof) {
    if (dof <= 0.0) return 1.0;
    if (statistic <= 0.0) return 1.0;
    const double a = dof / 2.0;
    const double x = statistic / 2.0;
    if (x < a + 1.0) return std::clamp(1.0 - lower_gamma_series(a, x), 0.0, 1.0);
    return std::clamp(upper_gamma_fraction(a, x), 0.0, 1.0);
}

ChiSquare chi_square_fit(std::span<const std::uint64_t> observed, std::span<const double> expected_probability,
                         std::uint64_t total, std::uint64_t outside) {
    struct Cell {
        double expected;
        double observed;
    };
    std::vector<Cell> cells;
    for (std::size_t i = 0; i < observed.size(); ++i) {
        cells.push_back({expected_probability[i] * static_cast<double>(total), static_cast<double>(observed[i])});
    }
    std::sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) { return a.expected < b.expected; });
    // Pool the smallest cells until each holds at least 5 expected draws.
    std::vector<Cell> pooled;
    Cell pending{0.0, 0.0};
    for (const Cell& cell : cells) {
        pending.expected += cell.expected;
        pending.observed += cell.observed;
        if (pending.expected >= 5.0) {
            pooled.push_back(pending);
            pending = {0.0, 0.0};
        }
    }
    if (pending.expected > 0.0 || pending.observed > 0.0) {
        if (pooled.empty()) {
            pooled.push_back(pending);
        } else {
            pooled.back().expected += pending.expected;
            pooled.back().observed += pending.observed;
        }
    }
    ChiSquare fit;
    for (const Cell& cell : pooled) {
        if (cell.expected > 0.0) fit.statistic += (cell.observed - cell.expected) * (cell.observed - cell.expected) / cell.expected;
    }
    if (outside > 0) {
        const double o = static_cast<double>(outside);
        fit.statistic += (o - 0.5) * (o - 0.5) / 0.5;
        fit.dof += 1.0;
    }
    fit.dof += static_cast<double>(pooled.size()) - 1.0;
    return fit;
}

}  // namespace samplescope::batch
