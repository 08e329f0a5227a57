#include "kernels/tools/batch_compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine/base/input_error.h"
#include "kernels/tools/batch_reference.h"
#include "engine/stats/chi_square.h"

namespace samplescope::batch {

namespace {

RowComparison compare_row(const SampleTrace& reference, const BatchOutput& engine, std::size_t row,
                          std::size_t vocab, Mode mode, const NearTieTolerance& tolerance) {
    RowComparison c;
    c.reference_token = reference.token;
    c.reference_logprob = reference.logprob;
    c.reference_kept = static_cast<std::int32_t>(reference.final_kept().size());
    c.engine_token = engine.token_at(row);
    c.engine_logprob = engine.logprob_at(row);
    c.engine_kept = engine.kept_count[row];

    const std::vector<std::int32_t> kept = engine.kept_ids(row, vocab);
    c.kept = compare_kept(reference, kept, tolerance.delta, &c.kept_mismatched_ids);
    if (c.engine_token < 0 || static_cast<std::size_t>(c.engine_token) >= vocab) {
        c.token = Verdict::Mismatch;
        c.logprob = Verdict::Mismatch;
        c.row = Verdict::Mismatch;
        return c;
    }
    const double reference_logprob = c.engine_token == reference.token ? reference.logprob
                                                                       : reference_logprob_of(reference, c.engine_token);
    c.logprob_difference = std::fabs(c.engine_logprob - reference_logprob);
    c.logprob = compare_logprob(reference_logprob, c.engine_logprob, tolerance.logprob);

    if (mode == Mode::Exact) {
        c.token = compare_token(reference, c.engine_token, tolerance.delta);
        // A kept set that differs by a near-tie may legitimately move the token.
        if (c.token == Verdict::Mismatch && c.kept == Verdict::NearTie) c.token = Verdict::NearTie;
    } else {
        // Fast draws use other random numbers: the token need only be one the
        // reference could have drawn (or a near-tie's).
        const bool possible = std::binary_search(reference.final_kept().begin(), reference.final_kept().end(),
                                                 c.engine_token);
        c.token = possible ? Verdict::Equal : (c.kept == Verdict::NearTie ? Verdict::NearTie : Verdict::Mismatch);
    }
    c.row = worst(worst(c.token, c.kept), c.logprob);
    return c;
}

GoodnessOfFit fit_draws(const BatchInput& input, const std::vector<SampleTrace>& traces,
                        const std::vector<RowComparison>& rows, const CompareOptions& options) {
    BatchOptions run;
    run.mode = Mode::Fast;
    run.backend = options.backend;
    run.draws = options.draws;
    run.threads = options.threads;
    const BatchOutput draws = run_batch(input, run);
    GoodnessOfFit fit;
    fit.draws_per_row = options.draws;
    ChiSquareTest total;
    for (std::size_t r = 0; r < input.rows; ++r) {
        const SampleTrace& reference = traces[r];
        const auto& kept = reference.final_kept();
        if (reference.greedy || kept.size() < 2 || rows[r].kept != Verdict::Equal) continue;
        std::vector<std::uint64_t> observed(kept.size(), 0);
        std::uint64_t outside = 0;
        for (std::int32_t j = 0; j < options.draws; ++j) {
            const std::int32_t token = draws.token_at(r, j);
            const auto it = std::lower_bound(kept.begin(), kept.end(), token);
            if (it == kept.end() || *it != token) {
                ++outside;
            } else {
                ++observed[static_cast<std::size_t>(it - kept.begin())];
            }
        }
        total.add(chi_square_fit(observed, reference.final_probs(), static_cast<std::uint64_t>(options.draws), outside));
        ++fit.rows;
    }
    fit.statistic = total.statistic;
    fit.dof = static_cast<double>(total.degrees_of_freedom);
    fit.p_value = total.p_value;
    return fit;
}

}  // namespace

BatchComparison compare_batch(const BatchInput& input, const CompareOptions& options) {
    if (options.draws < 0) throw InputError("draws", "draws must be >= 0, got " + std::to_string(options.draws));
    BatchComparison out;
    out.mode = options.mode;
    out.tolerance = options.mode == Mode::Exact ? kExactTolerance : kFastTolerance;

    BatchOptions run;
    run.mode = options.mode;
    run.backend = options.backend;
    run.kept_mask = true;
    run.threads = options.threads;
    const BatchOutput engine = run_batch(input, run);
    out.engine_seconds = engine.seconds;
    out.backend = engine.backend;
    out.device = engine.device;
    out.note = engine.note;

    // The reference's timing is its lean path (what it costs to sample); the
    // traces that the comparison reads are built afterwards.
    out.reference_seconds = run_reference(input).seconds;
    std::vector<SampleTrace> traces;
    traces.reserve(input.rows);
    for (std::size_t r = 0; r < input.rows; ++r) traces.push_back(trace_reference_row(input, r));

    for (std::size_t r = 0; r < input.rows; ++r) {
        RowComparison row = compare_row(traces[r], engine, r, input.vocab, options.mode, out.tolerance);
        out.counts.add(row.row);
        out.worst_logprob_difference = std::max(out.worst_logprob_difference, row.logprob_difference);
        if (row.kept == Verdict::Mismatch) ++out.kept_mismatches;
        if (row.kept == Verdict::NearTie) ++out.kept_near_ties;
        out.rows.push_back(std::move(row));
    }
    if (options.mode == Mode::Fast && options.draws > 0) out.fit = fit_draws(input, traces, out.rows, options);
    return out;
}

}  // namespace samplescope::batch
