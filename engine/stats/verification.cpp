#include "engine/stats/verification.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>

// Eigen's unsupported SpecialFunctions module has the regularised incomplete
// gamma functions (part of the Eigen package the engine already uses).
#include <unsupported/Eigen/SpecialFunctions>

#include "engine/base/input_error.h"
#include "engine/pipelines/pipeline_runner.h"

namespace samplescope {

namespace {

constexpr std::size_t kNoBin = std::numeric_limits<std::size_t>::max();

// The smallest x in [lo, hi] with f(x) true, for f monotone false -> true.
template <typename F>
double bisect(double lo, double hi, F f) {
    for (int i = 0; i < 200 && hi - lo > 1e-9 * std::max(1.0, hi); ++i) {
        const double mid = 0.5 * (lo + hi);
        if (f(mid)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return hi;
}

// Power of the chi-square test with critical value `critical` when the
// statistic is noncentral chi-square(dof, lambda): the Poisson(lambda / 2)
// mixture of central chi-squares with dof + 2 j degrees of freedom, summed
// over the weights that matter (within 10 standard deviations of the mean).
double noncentral_power(double critical, double dof, double lambda) {
    if (!(lambda > 0.0)) return chi_square_upper(critical, dof);
    const double mean = 0.5 * lambda;
    const double spread = 10.0 * std::sqrt(mean) + 10.0;
    const auto first = static_cast<std::uint64_t>(std::max(0.0, std::floor(mean - spread)));
    const auto last = static_cast<std::uint64_t>(std::ceil(mean + spread));
    double power = 0.0;
    for (std::uint64_t j = first; j <= last; ++j) {
        const double jd = static_cast<double>(j);
        const double weight = std::exp(jd * std::log(mean) - mean - std::lgamma(jd + 1.0));
        power += weight * chi_square_upper(critical, dof + 2.0 * jd);
    }
    return std::min(1.0, power);
}

// Expected probability per bin of q under the pooling rule for `draws`.
std::vector<double> bin_masses(const Values& q, double draws) {
    std::vector<std::size_t> bin_of;
    const std::size_t bins = pool_bins(q, draws, bin_of);
    std::vector<double> mass(bins, 0.0);
    for (std::size_t i = 0; i < q.size(); ++i) {
        if (bin_of[i] != kNoBin) mass[bin_of[i]] += q[i];
    }
    return mass;
}

}  // namespace

std::vector<IdCount> count_samples(std::span<const std::int64_t> samples) {
    std::vector<std::int64_t> sorted(samples.begin(), samples.end());
    std::sort(sorted.begin(), sorted.end());
    std::vector<IdCount> out;
    for (std::size_t i = 0; i < sorted.size();) {
        std::size_t j = i;
        while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
        out.push_back({sorted[i], static_cast<std::uint64_t>(j - i)});
        i = j;
    }
    return out;
}

std::vector<std::size_t> ascending_q_order(const Values& q) {
    std::vector<std::size_t> order(q.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Positions are in ascending id order already, so a stable sort breaks ties by id.
    std::stable_sort(order.begin(), order.end(), [&q](std::size_t a, std::size_t b) { return q[a] < q[b]; });
    return order;
}

std::size_t pool_bins(const Values& q, double draws, std::vector<std::size_t>& bin_of) {
    bin_of.assign(q.size(), kNoBin);
    std::size_t bins = 0;
    double pending = 0.0;
    std::vector<std::size_t> open;  // positions of the bin being filled
    for (const std::size_t i : ascending_q_order(q)) {
        if (!(q[i] > 0.0)) continue;
        open.push_back(i);
        pending += draws * q[i];
        if (pending >= kMinExpectedPerBin) {
            for (const std::size_t p : open) bin_of[p] = bins;
            ++bins;
            open.clear();
            pending = 0.0;
        }
    }
    if (!open.empty()) {
        // The remainder (expecting fewer than kMinExpectedPerBin) joins the last
        // bin; with no bin yet, it is the only one.
        const std::size_t last = bins == 0 ? bins++ : bins - 1;
        for (const std::size_t p : open) bin_of[p] = last;
    }
    return bins;
}

GTest g_test(std::span<const double> observed, std::span<const double> expected) {
    GTest g;
    g.bins = observed.size();
    if (g.bins < 2) return g;
    double n = 0.0;
    double sum = 0.0;
    for (std::size_t b = 0; b < observed.size(); ++b) {
        n += observed[b];
        if (observed[b] > 0.0) sum += observed[b] * std::log(observed[b] / expected[b]);
    }
    g.degrees_of_freedom = g.bins - 1;
    if (n <= 0.0) return g;
    // Williams (1976): dividing G by q = 1 + (sum 1 / pi_i - 1) / (6 N (k - 1)),
    // pi_i = E_i / N the bin probabilities, brings its null distribution closer
    // to chi-square(k - 1) when expected counts are moderate (pooled bins
    // expect about 5 draws each, where uncorrected G runs high).
    double inverse_sum = 0.0;
    for (const double e : expected) inverse_sum += n / e;
    const double k = static_cast<double>(g.bins);
    const double williams = 1.0 + (inverse_sum - 1.0) / (6.0 * n * (k - 1.0));
    g.statistic = std::max(0.0, 2.0 * sum) / williams;
    g.p_value = chi_square_upper(g.statistic, static_cast<double>(g.degrees_of_freedom));
    return g;
}

std::vector<std::size_t> tail_region(const Values& q) {
    std::vector<std::size_t> region;
    double mass = 0.0;
    for (const std::size_t i : ascending_q_order(q)) {
        if (!(q[i] > 0.0)) continue;
        if (q[i] < kTinyProbability || mass + q[i] <= kTailMass) {
            region.push_back(i);
            mass += q[i];
        } else {
            break;  // ascending q: neither condition can hold again
        }
    }
    return region;
}

double poisson_two_sided_p(std::uint64_t observed, double expected) {
    if (!(expected > 0.0)) return observed == 0 ? 1.0 : 0.0;
    const double k = static_cast<double>(observed);
    // P(X <= k) = Q(k + 1, lambda); P(X >= k) = P(k, lambda) (1 when k = 0).
    const double lower = Eigen::numext::igammac(k + 1.0, expected);
    const double upper = observed == 0 ? 1.0 : Eigen::numext::igamma(k, expected);
    return std::min(1.0, 2.0 * std::min(lower, upper));
}

std::vector<double> holm_adjust(std::span<const double> p) {
    std::vector<std::size_t> order(p.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&p](std::size_t a, std::size_t b) { return p[a] < p[b]; });
    std::vector<double> adjusted(p.size(), 1.0);
    double running = 0.0;
    const auto m = static_cast<double>(p.size());
    for (std::size_t j = 0; j < order.size(); ++j) {
        running = std::max(running, std::min(1.0, (m - static_cast<double>(j)) * p[order[j]]));
        adjusted[order[j]] = running;
    }
    return adjusted;
}

double chi_square_upper(double x, double dof) {
    if (dof <= 0.0 || !(x > 0.0)) return 1.0;
    if (std::isinf(x)) return 0.0;
    return Eigen::numext::igammac(0.5 * dof, 0.5 * x);
}

double chi_square_critical(double level, double dof) {
    double hi = std::max(1.0, 2.0 * dof);
    while (chi_square_upper(hi, dof) > level) hi *= 2.0;
    return bisect(0.0, hi, [&](double x) { return chi_square_upper(x, dof) <= level; });
}

double noncentrality_for_power(double level, double dof, double power) {
    const double critical = chi_square_critical(level, dof);
    double hi = 1.0;
    while (noncentral_power(critical, dof, hi) < power) hi *= 2.0;
    return bisect(0.0, hi, [&](double lambda) { return noncentral_power(critical, dof, lambda) >= power; });
}

double detectable_tv(const Values& q, std::uint64_t draws, double level, double power) {
    if (draws == 0) return 1.0;
    const auto n = static_cast<double>(draws);
    const std::size_t bins = bin_masses(q, n).size();
    if (bins < 2) {
        // One bin tests nothing inside the support. With a single id every
        // alternative moves mass outside it, which the support check catches
        // with probability 1 - (1 - tv)^N; otherwise nothing can be vouched for.
        const auto positive = std::count_if(q.begin(), q.end(), [](double v) { return v > 0.0; });
        return positive == 1 ? 1.0 - std::pow(1.0 - power, 1.0 / n) : 1.0;
    }
    // Any alternative p at total-variation distance d over the bins has
    // chi-square divergence sum (p - q)^2 / q >= (2 d)^2 (Cauchy-Schwarz), so
    // noncentrality N x 4 d^2 >= lambda* gives the power asked for.
    const double lambda = noncentrality_for_power(level, static_cast<double>(bins - 1), power);
    return std::min(1.0, std::sqrt(lambda / (4.0 * n)));
}

std::uint64_t samples_needed(const Values& q, double tv, double level, double power) {
    if (!(tv > 0.0 && tv <= 1.0)) {
        throw InputError("tv", "tv must be in (0, 1], got " + format_number(tv));
    }
    std::uint64_t lo = 0;
    std::uint64_t hi = 1;
    // Past 2^53 a count is no longer exact in the double the statistics use
    // (and far past the 2 GiB of draws `verify` reads): refused, with the
    // formula's figure at the pooling there, rather than capped.
    constexpr std::uint64_t kCeiling = 1ull << 53;
    while (detectable_tv(q, hi, level, power) > tv) {
        lo = hi;
        if (hi >= kCeiling) {
            const double ceiling = static_cast<double>(kCeiling);
            const double lambda = noncentrality_for_power(level, static_cast<double>(bin_masses(q, ceiling).size() - 1), power);
            char figure[32];
            std::snprintf(figure, sizeof figure, "%.2g", lambda / (4.0 * tv * tv));
            throw InputError("tv", "tv " + format_number(tv) + " needs more than 2^53 draws (about " + figure +
                                       "), more than can be counted exactly; give a larger --tv");
        }
        hi *= 2;
    }
    while (hi - lo > 1) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (detectable_tv(q, mid, level, power) <= tv) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return hi;
}

double per_test_level(double alpha, std::size_t rows) {
    const auto tests = 2.0 * static_cast<double>(std::max<std::size_t>(rows, 1));
    const double level = alpha / tests;
    // Below this the chi-square tail (and the critical values from it) leave
    // the range where the incomplete gamma is accurate, and alpha / (2 B)
    // itself goes subnormal, then 0.
    if (!(level >= kMinTestLevel)) {
        throw InputError("alpha", "alpha " + format_number(alpha) + " is too small: the per-test level alpha / " +
                                      format_number(tests) + " must be at least " + format_number(kMinTestLevel) +
                                      ", got " + format_number(level));
    }
    return level;
}

VerifyResult verify_rows(std::span<const VerifyRowInput> rows, double alpha, const VerifyProgress& progress,
                         const std::atomic<bool>* cancel) {
    if (!(alpha > 0.0 && alpha < 1.0)) {
        throw InputError("alpha", "alpha must be in (0, 1), got " + format_number(alpha));
    }
    VerifyResult result;
    result.alpha = alpha;
    const double level = per_test_level(alpha, rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (cancel && cancel->load()) {
            result.cancelled = true;
            return result;
        }
        const IdList& kept = *rows[r].kept;
        const Values& q = *rows[r].q;
        if (rows[r].samples.empty()) {
            throw InputError("samples", "samples: row " + std::to_string(r) + " has no draws");
        }
        RowVerification row;
        row.samples = rows[r].samples.size();
        row.level = level;

        // Support: each distinct id against the kept set (both ascending).
        std::vector<std::uint64_t> counts(kept.size(), 0);
        std::size_t k = 0;
        for (const IdCount& c : count_samples(rows[r].samples)) {
            while (k < kept.size() && kept[k] < c.id) ++k;
            if (k < kept.size() && kept[k] == c.id && q[k] > 0.0) {
                counts[k] = c.count;
            } else {
                row.support_violations.push_back(c);
                row.outside_count += c.count;
            }
        }
        const std::uint64_t inside = row.samples - row.outside_count;
        const auto n = static_cast<double>(inside);

        // G-test over the pooled bins, with the draws inside the support.
        if (inside > 0) {
            std::vector<std::size_t> bin_of;
            const std::size_t bins = pool_bins(q, n, bin_of);
            std::vector<double> observed(bins, 0.0);
            std::vector<double> expected(bins, 0.0);
            for (std::size_t i = 0; i < q.size(); ++i) {
                if (bin_of[i] == kNoBin) continue;
                observed[bin_of[i]] += static_cast<double>(counts[i]);
                expected[bin_of[i]] += n * q[i];
            }
            row.g = g_test(observed, expected);
        }

        // Tail: the lowest-probability region.
        for (const std::size_t i : tail_region(q)) {
            ++row.tail.ids;
            if (q[i] < kTinyProbability) ++row.tail.ids_below_tiny;
            row.tail.mass += q[i];
            row.tail.observed += counts[i];
        }
        row.tail.expected = n * row.tail.mass;
        row.tail.p_value = poisson_two_sided_p(row.tail.observed, row.tail.expected);

        row.detectable_tv = detectable_tv(q, inside, level);

        // Largest deviations in standard errors.
        for (std::size_t i = 0; i < q.size(); ++i) {
            if (!(q[i] > 0.0) || !(q[i] < 1.0) || inside == 0) continue;
            const double e = n * q[i];
            const double z = (static_cast<double>(counts[i]) - e) / std::sqrt(e * (1.0 - q[i]));
            row.largest_deviations.push_back({kept[i], counts[i], e, z});
        }
        const std::size_t shown = std::min(kReportedDeviations, row.largest_deviations.size());
        std::partial_sort(row.largest_deviations.begin(), row.largest_deviations.begin() + static_cast<std::ptrdiff_t>(shown),
                          row.largest_deviations.end(), [](const Deviation& a, const Deviation& b) {
                              if (std::fabs(a.z) != std::fabs(b.z)) return std::fabs(a.z) > std::fabs(b.z);
                              return a.id < b.id;
                          });
        row.largest_deviations.resize(shown);
        result.rows.push_back(std::move(row));
        if (progress) progress(r + 1);
    }

    // Holm across every row's two tests.
    std::vector<double> p;
    for (const auto& row : result.rows) {
        p.push_back(row.g.p_value);
        p.push_back(row.tail.p_value);
    }
    const std::vector<double> adjusted = holm_adjust(p);
    for (std::size_t r = 0; r < result.rows.size(); ++r) {
        RowVerification& row = result.rows[r];
        row.g_p_holm = adjusted[2 * r];
        row.tail_p_holm = adjusted[2 * r + 1];
        row.pass = row.support_violations.empty() && row.g_p_holm >= alpha && row.tail_p_holm >= alpha;
        result.pass = result.pass && row.pass;
    }
    return result;
}

std::vector<PipelineTrace> exact_distributions(const Pipeline& pipeline, std::span<const SamplerRow> rows) {
    std::vector<PipelineTrace> out;
    out.reserve(rows.size());
    for (const SamplerRow& row : rows) {
        const PipelineInput input{row.logits, row.request.params, row.request.prompt_ids, row.request.output_ids};
        out.push_back(trace_pipeline_once(pipeline, input, row.request.skip_draws));
    }
    return out;
}

const IdList& verified_ids(const PipelineTrace& exact) { return exact.xtc ? exact.xtc->ids : exact.trace.final_kept(); }

const Values& verified_probs(const PipelineTrace& exact) {
    return exact.xtc ? exact.xtc->probs : exact.trace.final_probs();
}

SamplerVerification verify_sampler(const Pipeline& pipeline, std::span<const SamplerRow> rows, double alpha,
                                   const VerifyProgress& progress, const std::atomic<bool>* cancel) {
    if (!(alpha > 0.0 && alpha < 1.0)) {
        throw InputError("alpha", "alpha must be in (0, 1), got " + format_number(alpha));
    }
    SamplerVerification out;
    out.exact = exact_distributions(pipeline, rows);
    std::vector<VerifyRowInput> inputs;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        inputs.push_back({&verified_ids(out.exact[r]), &verified_probs(out.exact[r]), rows[r].samples});
        out.row.push_back(rows[r].row);
    }
    out.result = verify_rows(inputs, alpha, progress, cancel);
    return out;
}

}  // namespace samplescope
