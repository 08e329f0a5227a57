#include "engine/stats/empirical_sampling.h"

#include <algorithm>
#include <cmath>
#include <string>

// Eigen's unsupported SpecialFunctions module has the regularised incomplete
// gamma functions (Eigen's core has none); it is part of the Eigen package
// the engine already depends on.
#include <unsupported/Eigen/SpecialFunctions>

#include "engine/base/input_error.h"
#include "engine/core/inverse_cdf.h"
#include "engine/pipelines/pipeline_runner.h"
#include "engine/stats/verification.h"

namespace samplescope {

namespace {

void check_draws(std::uint64_t draws) {
    if (draws < 1 || draws > kMaxDraws) {
        throw InputError("draws", "draws must be in [1, " + std::to_string(kMaxDraws) + "], got " +
                                      std::to_string(draws));
    }
}

// Expected and observed per id over the union of both id lists.
struct Category {
    double expected = 0.0;  // N q
    double q = 0.0;
    std::uint64_t observed = 0;
    std::int32_t id = -1;
};

std::vector<Category> categories(const Histogram& histogram, const IdList& ids, const Values& q) {
    std::vector<Category> out;
    std::size_t i = 0;
    std::size_t j = 0;
    const auto n = static_cast<double>(histogram.draws);
    while (i < histogram.ids.size() || j < ids.size()) {
        Category c;
        const bool take_h = i < histogram.ids.size() && (j >= ids.size() || histogram.ids[i] <= ids[j]);
        const bool take_q = j < ids.size() && (i >= histogram.ids.size() || ids[j] <= histogram.ids[i]);
        if (take_h) {
            c.id = histogram.ids[i];
            c.observed = histogram.counts[i++];
        }
        if (take_q) {
            c.id = ids[j];
            c.q = q[j++];
            c.expected = n * c.q;
        }
        out.push_back(c);
    }
    return out;
}

}  // namespace

namespace {

// One distribution's inverse CDF, searchable: the contract's walk picks the
// first kept id whose running sum exceeds u. The running sums never decrease,
// so a binary search over the same sums (summed in the same order) picks the
// same id in log time.
class Walk {
public:
    Walk(const IdList& kept, const Values& q) {
        bool fell_back_unused = false;
        inverse_cdf_draw(kept, q, 0.0, &cumulative_, fell_back_unused);
        fallback_ = kept.size() - 1;
        for (std::size_t i = q.size(); i-- > 0;) {
            if (q[i] > 0.0) {
                fallback_ = i;
                break;
            }
        }
    }
    // The index into kept of the id u draws.
    std::size_t pick(double u) const {
        const auto at = static_cast<std::size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) -
                                                 cumulative_.begin());
        return at < cumulative_.size() ? at : fallback_;
    }

private:
    Values cumulative_;
    std::size_t fallback_ = 0;
};

constexpr std::uint64_t kProgressEvery = 65536;

// Counts `draws` picks into h.counts; `pick` gives the histogram index of one draw.
template <class Pick>
void count_draws(Histogram& h, std::uint64_t draws, const DrawProgress& progress, const std::atomic<bool>* cancel,
                 Pick pick) {
    for (std::uint64_t d = 0; d < draws; ++d) {
        if (d % kProgressEvery == 0 && d > 0) {
            if (cancel && cancel->load(std::memory_order_relaxed)) {
                h.cancelled = true;
                break;
            }
            if (progress) progress(d);
        }
        ++h.counts[pick()];
        ++h.draws;
    }
    if (progress) progress(h.draws);
}

// Where each of `kept` sits in `ids` (both ascending, kept a subset).
std::vector<std::size_t> positions_in(const IdList& kept, const IdList& ids) {
    std::vector<std::size_t> at;
    at.reserve(kept.size());
    for (const auto id : kept) {
        at.push_back(static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin()));
    }
    return at;
}

}  // namespace

Histogram draw_histogram(const IdList& kept, const Values& q, Pcg32& rng, std::uint64_t draws,
                         const DrawProgress& progress, const std::atomic<bool>* cancel) {
    check_draws(draws);
    Histogram h;
    h.ids = kept;
    h.expected = q;
    h.counts.assign(kept.size(), 0);
    const Walk walk(kept, q);
    count_draws(h, draws, progress, cancel, [&] { return walk.pick(rng.uniform_f64()); });
    return h;
}

Histogram draw_xtc_histogram(const XtcMixture& xtc, Pcg32& rng, Pcg32& coins, std::uint64_t draws,
                             const DrawProgress& progress, const std::atomic<bool>* cancel) {
    check_draws(draws);
    Histogram h;
    h.ids = xtc.ids;
    h.expected = xtc.probs;
    h.counts.assign(xtc.ids.size(), 0);
    const Walk with(xtc.kept_with, xtc.probs_with);
    const Walk without(xtc.kept_without, xtc.probs_without);
    const std::vector<std::size_t> with_at = positions_in(xtc.kept_with, xtc.ids);
    const std::vector<std::size_t> without_at = positions_in(xtc.kept_without, xtc.ids);
    count_draws(h, draws, progress, cancel, [&] {
        // The coin first, from its own stream; then the draw's uniform, as a step takes them.
        const bool fires = coins.uniform_f64() < xtc.probability;
        const double u = rng.uniform_f64();
        return fires ? with_at[with.pick(u)] : without_at[without.pick(u)];
    });
    return h;
}

ChiSquareTest chi_square_test(const Histogram& histogram, const IdList& ids, const Values& q) {
    std::vector<GoodnessCell> cells;
    for (const auto& c : categories(histogram, ids, q)) cells.push_back({c.expected, c.observed});
    return pearson_test(cells);
}

LargestDeviation largest_deviation(const Histogram& histogram, const IdList& ids, const Values& q) {
    LargestDeviation largest;
    const auto n = static_cast<double>(histogram.draws);
    for (const auto& c : categories(histogram, ids, q)) {
        double z = 0.0;
        const double variance = n * c.q * (1.0 - c.q);
        const double diff = static_cast<double>(c.observed) - c.expected;
        if (variance > 0.0) {
            z = diff / std::sqrt(variance);
        } else if (diff != 0.0) {
            z = diff > 0.0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
        }
        if (largest.id < 0 || std::fabs(z) > std::fabs(largest.z)) largest = LargestDeviation{c.id, z};
    }
    return largest;
}

TokenDeviations token_deviations(const Histogram& histogram, const IdList& ids, const Values& q) {
    TokenDeviations out;
    const auto n = static_cast<double>(histogram.draws);
    std::vector<std::int32_t> tested_ids;
    std::vector<double> z;
    std::vector<double> p;
    for (const auto& c : categories(histogram, ids, q)) {
        if (!(c.expected >= kMinExpectedCount)) continue;
        const double variance = n * c.q * (1.0 - c.q);
        // q = 1 leaves no variance: the count is N, the deviation 0.
        const double zi = variance > 0.0 ? (static_cast<double>(c.observed) - c.expected) / std::sqrt(variance) : 0.0;
        tested_ids.push_back(c.id);
        z.push_back(zi);
        p.push_back(std::erfc(std::fabs(zi) / std::sqrt(2.0)));
    }
    out.tested = tested_ids.size();
    if (tested_ids.empty()) return out;
    const std::vector<double> adjusted = holm_adjust(p);
    std::size_t largest = 0;
    for (std::size_t i = 1; i < z.size(); ++i) {
        if (std::fabs(z[i]) > std::fabs(z[largest])) largest = i;
    }
    out.id = tested_ids[largest];
    out.z = z[largest];
    out.p = p[largest];
    out.p_holm = adjusted[largest];
    return out;
}

EmpiricalResult sample_empirically(const Pipeline& pipeline, const PipelineInput& input, std::uint64_t draws,
                                   std::uint64_t skip_draws, const DrawProgress& progress,
                                   const std::atomic<bool>* cancel) {
    check_draws(draws);
    PipelineInput seeded = input;
    seeded.params.seed = seed_or_chosen(input.params.seed);
    EmpiricalResult result;
    result.trace = trace_pipeline_once(pipeline, seeded, skip_draws);
    const SampleTrace& trace = result.trace.trace;
    const IdList& kept = trace.final_kept();
    const Values& q = trace.final_probs();
    if (!trace.u) {
        // Greedy without a draw: every step gives the same token.
        result.histogram.ids = kept;
        result.histogram.expected = q;
        result.histogram.counts.assign(kept.size(), draws);
        result.histogram.draws = draws;
        if (progress) progress(draws);
    } else {
        Pcg32 rng = stream(*seeded.params.seed, kSampleLabel);
        rng.skip_draws(skip_draws);
        if (result.trace.xtc) {
            // Each draw throws its own XTC coin: the exact distribution is the mixture.
            Pcg32 coins = stream(*seeded.params.seed, kXtcLabel);
            coins.skip_draws(skip_draws);
            result.histogram = draw_xtc_histogram(*result.trace.xtc, rng, coins, draws, progress, cancel);
        } else {
            result.histogram = draw_histogram(kept, q, rng, draws, progress, cancel);
        }
    }
    result.test = chi_square_test(result.histogram, result.trace.exact_ids(), result.trace.exact_probs());
    result.deviation = largest_deviation(result.histogram, result.trace.exact_ids(), result.trace.exact_probs());
    result.tokens = token_deviations(result.histogram, result.trace.exact_ids(), result.trace.exact_probs());
    return result;
}

}  // namespace samplescope
