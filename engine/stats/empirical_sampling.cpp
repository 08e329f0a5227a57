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

Histogram draw_histogram(const IdList& kept, const Values& q, Pcg32& rng, std::uint64_t draws,
                         const DrawProgress& progress, const std::atomic<bool>* cancel) {
    check_draws(draws);
    Histogram h;
    h.ids = kept;
    h.expected = q;
    h.counts.assign(kept.size(), 0);
    // The contract's walk picks the first kept id whose running sum exceeds u.
    // The running sums never decrease, so a binary search over the same sums
    // (summed in the same order) picks the same id in log time.
    Values cumulative;
    bool fell_back_unused = false;
    inverse_cdf_draw(kept, q, 0.0, &cumulative, fell_back_unused);
    std::size_t fallback = kept.size() - 1;
    for (std::size_t i = q.size(); i-- > 0;) {
        if (q[i] > 0.0) {
            fallback = i;
            break;
        }
    }
    constexpr std::uint64_t kProgressEvery = 65536;
    for (std::uint64_t d = 0; d < draws; ++d) {
        if (d % kProgressEvery == 0 && d > 0) {
            if (cancel && cancel->load(std::memory_order_relaxed)) {
                h.cancelled = true;
                break;
            }
            if (progress) progress(d);
        }
        const double u = rng.uniform_f64();
        const auto at = static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) -
                                                 cumulative.begin());
        ++h.counts[at < cumulative.size() ? at : fallback];
        ++h.draws;
    }
    if (progress) progress(h.draws);
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

EmpiricalResult sample_empirically(const Pipeline& pipeline, const PipelineInput& input, std::uint64_t draws,
                                   std::uint64_t skip_draws, const DrawProgress& progress,
                                   const std::atomic<bool>* cancel) {
    check_draws(draws);
    PipelineInput seeded = input;
    seeded.params.seed = input.params.seed.value_or(choose_seed());
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
        result.histogram = draw_histogram(kept, q, rng, draws, progress, cancel);
    }
    result.test = chi_square_test(result.histogram, kept, q);
    result.deviation = largest_deviation(result.histogram, kept, q);
    return result;
}

}  // namespace samplescope
