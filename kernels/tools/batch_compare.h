// The CPU-vs-batch-engine comparison, row by row, under the contract's near-tie
// rule (engine/stats/near_tie.h): what `samplescope-cli compare` prints and what a
// Compare view shows. Lives here, not in the CLI, so any front end can call it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/stats/near_tie.h"
#include "kernels/batch_engine.h"

namespace samplescope::batch {

struct CompareOptions {
    Mode mode = Mode::Exact;
    Backend backend = Backend::Auto;
    std::int32_t draws = 0;  // fast mode: draws per row for the goodness-of-fit test (0: none)
    unsigned threads = 0;
};

struct RowComparison {
    std::int32_t reference_token = -1;
    std::int32_t engine_token = -1;
    double reference_logprob = 0.0;
    double engine_logprob = 0.0;
    double logprob_difference = 0.0;  // engine's logprob against the reference's for the same token
    std::int32_t reference_kept = 0;
    std::int32_t engine_kept = 0;
    Verdict token = Verdict::Equal;    // exact mode only (fast mode draws from other random numbers)
    Verdict kept = Verdict::Equal;
    Verdict logprob = Verdict::Equal;
    Verdict row = Verdict::Equal;
    std::vector<std::int32_t> kept_mismatched_ids;
};

struct GoodnessOfFit {
    std::size_t rows = 0;          // rows tested (sampled, kept sets equal, more than one id kept)
    std::int32_t draws_per_row = 0;
    double statistic = 0.0;        // the summed chi-square statistics
    double dof = 0.0;
    double p_value = 1.0;
};

struct BatchComparison {
    Mode mode = Mode::Exact;
    NearTieTolerance tolerance = kExactTolerance;
    CompareCounts counts;
    double worst_logprob_difference = 0.0;
    std::size_t kept_mismatches = 0;  // rows whose kept sets differ beyond the near-tie rule
    std::size_t kept_near_ties = 0;
    std::optional<GoodnessOfFit> fit;
    double reference_seconds = 0.0;
    double engine_seconds = 0.0;
    Backend backend = Backend::Host;  // what really ran
    std::string device;
    std::string note;
    std::vector<RowComparison> rows;
};

// Runs the reference and the engine on the same batch and compares every row.
// Throws InputError for bad input (either side refuses it).
BatchComparison compare_batch(const BatchInput& input, const CompareOptions& options);

}  // namespace samplescope::batch
