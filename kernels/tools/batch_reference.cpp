#include "kernels/tools/batch_reference.h"

#include <chrono>
#include <string>

#include "engine/base/input_error.h"
#include "engine/pipelines/sampler.h"
#include "engine/core/token_history.h"

namespace samplescope::batch {

namespace {

std::vector<std::int64_t> widen_ids(std::span<const std::int32_t> ids) { return {ids.begin(), ids.end()}; }

template <class Run>
auto with_row_name(std::size_t row, Run run) {
    try {
        return run();
    } catch (const InputError& error) {
        throw InputError(error.field(), "row " + std::to_string(row) + ": " + error.what());
    }
}

}  // namespace

std::vector<double> widen_row(const BatchInput& input, std::size_t row) {
    const float* begin = input.logits + row * input.vocab;
    return {begin, begin + input.vocab};
}

SampleTrace trace_reference_row(const BatchInput& input, std::size_t row) {
    return with_row_name(row, [&]() {
        const std::vector<double> logits = widen_row(input, row);
        return trace_once(logits, input.sampling_params(row), widen_ids(input.prompt(row)), widen_ids(input.output(row)),
                          input.draws_before[row]);
    });
}

BatchOutput run_reference(const BatchInput& input, std::int32_t draws) {
    validate_batch(input);
    BatchOutput output;
    output.rows = input.rows;
    output.draws = draws;
    output.device = "CPU reference (f64, 1 thread)";
    const std::size_t per_row = static_cast<std::size_t>(draws);
    output.token.resize(input.rows * per_row);
    output.logprob.resize(input.rows * per_row);
    output.draws_after.resize(input.rows);
    output.kept_count.resize(input.rows);
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t r = 0; r < input.rows; ++r) {
        with_row_name(r, [&]() {
            const std::vector<double> logits = widen_row(input, r);
            const SamplingParams params = input.sampling_params(r);
            const HistoryCounts history =
                count_history(widen_ids(input.prompt(r)), widen_ids(input.output(r)), input.vocab);
            Pcg32 rng = stream(input.seed[r], kSampleLabel);
            rng.skip_draws(input.draws_before[r]);
            std::uint64_t consumed = input.draws_before[r];
            for (std::size_t j = 0; j < per_row; ++j) {
                const SampleResult result = sample_step(StepInput{logits, params, history}, rng);
                output.token[r * per_row + j] = result.token;
                output.logprob[r * per_row + j] = result.logprob;
                output.kept_count[r] = static_cast<std::int32_t>(result.kept_count);
                if (result.u) ++consumed;
            }
            output.draws_after[r] = consumed;
            return 0;
        });
    }
    output.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return output;
}

}  // namespace samplescope::batch
