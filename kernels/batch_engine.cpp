#include "kernels/batch_engine.h"

#include <chrono>
#include <exception>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "engine/core/gates.h"
#include "engine/base/input_error.h"
#include "engine/core/row_checks.h"
#include "kernels/batch_backends.h"
#include "kernels/fast_row_host.h"

namespace samplescope::batch {

std::string_view mode_name(Mode mode) { return mode == Mode::Exact ? "exact" : "fast"; }

std::string_view backend_name(Backend backend) {
    switch (backend) {
        case Backend::Host: return "host";
        case Backend::Cuda: return "cuda";
        case Backend::Auto: return "auto";
    }
    return "auto";
}

Mode parse_mode(std::string_view text) {
    if (text == "exact") return Mode::Exact;
    if (text == "fast") return Mode::Fast;
    throw InputError("mode", "mode must be exact or fast, got \"" + std::string(text) + "\"");
}

Backend parse_backend(std::string_view text) {
    if (text == "host") return Backend::Host;
    if (text == "cuda") return Backend::Cuda;
    if (text == "auto") return Backend::Auto;
    throw InputError("backend", "backend must be host, cuda or auto, got \"" + std::string(text) + "\"");
}

SamplingParams BatchInput::sampling_params(std::size_t row) const {
    SamplingParams params;
    params.temperature = temperature[row];
    params.top_k = top_k_from_row(top_k[row], static_cast<std::int64_t>(vocab));
    params.top_p = top_p[row];
    params.min_p = min_p[row];
    params.repetition_penalty = repetition_penalty[row];
    params.presence_penalty = presence_penalty[row];
    params.frequency_penalty = frequency_penalty[row];
    params.seed = seed[row];
    return params;
}

RowParams BatchInput::row_params(std::size_t row) const {
    const SamplingParams params = sampling_params(row);
    RowParams p;
    p.temperature = params.temperature;
    p.top_k = top_k[row];
    p.top_p = params.top_p;
    p.min_p = params.min_p;
    p.repetition_penalty = params.repetition_penalty;
    p.presence_penalty = params.presence_penalty;
    p.frequency_penalty = params.frequency_penalty;
    p.seed = seed[row];
    p.draws_before = draws_before[row];
    return p;
}

std::span<const std::int32_t> BatchInput::prompt(std::size_t row) const {
    return {prompt_ids.data() + prompt_offsets[row], static_cast<std::size_t>(prompt_offsets[row + 1] - prompt_offsets[row])};
}

std::span<const std::int32_t> BatchInput::output(std::size_t row) const {
    return {output_ids.data() + output_offsets[row], static_cast<std::size_t>(output_offsets[row + 1] - output_offsets[row])};
}

std::vector<std::int32_t> BatchOutput::kept_ids(std::size_t row, std::size_t vocab) const {
    std::vector<std::int32_t> ids;
    if (kept_mask.size() < (row + 1) * vocab) return ids;
    for (std::size_t i = 0; i < vocab; ++i) {
        if (kept_mask[row * vocab + i]) ids.push_back(static_cast<std::int32_t>(i));
    }
    return ids;
}

namespace {

std::string row_name(std::size_t row) { return "row " + std::to_string(row); }

void append_ids(std::vector<std::int32_t>& ids, std::vector<std::int64_t>& offsets,
                const std::vector<std::int64_t>& row_ids, std::size_t vocab, const char* field, std::size_t row) {
    for (const auto id : row_ids) {
        if (id < 0 || static_cast<std::uint64_t>(id) >= vocab) {
            throw InputError(field, row_name(row) + ": " + field + " has id " + std::to_string(id) + " outside [0, " +
                                        std::to_string(vocab) + ")");
        }
        ids.push_back(static_cast<std::int32_t>(id));
    }
    offsets.push_back(static_cast<std::int64_t>(ids.size()));
}

}  // namespace

BatchInput make_batch_input(const float* logits, std::size_t rows, std::size_t vocab,
                            std::span<const RowRequest> requests) {
    if (requests.size() != rows) {
        throw InputError("params", "params has " + std::to_string(requests.size()) + " rows but the logits have " +
                                       std::to_string(rows));
    }
    BatchInput input;
    input.rows = rows;
    input.vocab = vocab;
    input.logits = logits;
    for (std::size_t r = 0; r < rows; ++r) {
        const RowRequest& request = requests[r];
        const SamplingParams& p = request.params;
        // The batch engine runs the contract's stages only; a setting that
        // switches on anything beyond them (the stage descriptors say which)
        // is refused rather than silently left out.
        if (const auto beyond = outside_contract_switch(p, vocab)) {
            throw InputError(beyond->key, row_name(r) + ": " + beyond->key + " = " + beyond->value +
                                              " is not a stage of the batch engine (it runs the contract's stages only)");
        }
        input.temperature.push_back(p.temperature);
        // top_k off (0) is stored as its neutral value V: "keep all".
        input.top_k.push_back(top_k_to_row(p.top_k, static_cast<std::int64_t>(vocab)));
        input.top_p.push_back(p.top_p);
        input.min_p.push_back(p.min_p);
        input.repetition_penalty.push_back(p.repetition_penalty);
        input.presence_penalty.push_back(p.presence_penalty);
        input.frequency_penalty.push_back(p.frequency_penalty);
        input.seed.push_back(p.seed.value_or(choose_seed()));
        input.draws_before.push_back(request.skip_draws);
        append_ids(input.prompt_ids, input.prompt_offsets, request.prompt_ids, vocab, "prompt_ids", r);
        append_ids(input.output_ids, input.output_offsets, request.output_ids, vocab, "output_ids", r);
    }
    return input;
}

namespace {

// The checks of validate_batch() that do not read the logits. Throws at once
// for what belongs to no row (sizes, offsets, V); returns the first row whose
// parameters or history ids are refused, with its error in `refusal`, or
// `rows` when every row passes.
std::size_t check_all_but_logits(const BatchInput& input, std::exception_ptr& refusal) {
    const std::size_t rows = input.rows;
    if (rows == 0) throw InputError("logits", "the batch has no rows: nothing can be sampled");
    if (input.vocab == 0) throw InputError("logits", "logits are empty (V = 0): nothing can be sampled");
    if (input.vocab > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
        throw InputError("logits", "V = " + std::to_string(input.vocab) + " is larger than 2^31 - 1");
    }
    if (!input.logits) throw InputError("logits", "no logits were given");
    const auto check_size = [rows](std::size_t size, const char* field) {
        if (size != rows) {
            throw InputError(field, std::string(field) + " has " + std::to_string(size) + " values for " +
                                        std::to_string(rows) + " rows");
        }
    };
    check_size(input.temperature.size(), "temperature");
    check_size(input.top_k.size(), "top_k");
    check_size(input.top_p.size(), "top_p");
    check_size(input.min_p.size(), "min_p");
    check_size(input.repetition_penalty.size(), "repetition_penalty");
    check_size(input.presence_penalty.size(), "presence_penalty");
    check_size(input.frequency_penalty.size(), "frequency_penalty");
    check_size(input.seed.size(), "seed");
    check_size(input.draws_before.size(), "draws_before");
    const auto check_offsets = [rows](const std::vector<std::int64_t>& offsets, std::size_t ids, const char* field) {
        bool ok = offsets.size() == rows + 1 && offsets.front() == 0 &&
                  static_cast<std::size_t>(offsets.back()) == ids;
        for (std::size_t r = 0; ok && r < rows; ++r) ok = offsets[r] <= offsets[r + 1];
        if (!ok) throw InputError(field, std::string(field) + " offsets must rise from 0 to the id count, one per row plus one");
    };
    check_offsets(input.prompt_offsets, input.prompt_ids.size(), "prompt_ids");
    check_offsets(input.output_offsets, input.output_ids.size(), "output_ids");

    for (std::size_t r = 0; r < rows; ++r) {
        try {
            try {
                validate(input.sampling_params(r));
            } catch (const InputError& error) {
                throw InputError(error.field(), row_name(r) + ": " + error.what());
            }
            for (const auto& [ids, field] :
                 {std::pair{input.prompt(r), "prompt_ids"}, std::pair{input.output(r), "output_ids"}}) {
                for (const auto id : ids) {
                    if (id < 0 || static_cast<std::size_t>(id) >= input.vocab) {
                        throw InputError(field, row_name(r) + ": " + field + " has id " + std::to_string(id) +
                                                    " outside [0, " + std::to_string(input.vocab) + ")");
                    }
                }
            }
        } catch (const InputError&) {
            refusal = std::current_exception();
            return r;
        }
    }
    return rows;
}

// `found` is the logit where the batch engine found it (fast mode reports it
// in the row's logprob): logits in device memory cannot be read here.
InputError refused_logit(const BatchInput& input, std::size_t row, std::int32_t id, double found) {
    const double x = input.logits_location == MemoryLocation::Host
                         ? static_cast<double>(input.logits[row * input.vocab + static_cast<std::size_t>(id)])
                         : found;
    return refused_logit_error(id, x, row_name(row) + ": ");
}

InputError no_finite_logit(std::size_t row) {
    return InputError("logits", row_name(row) + ": every logit is -inf: nothing can be sampled");
}

// The logits of rows [0, end) in host memory, one read each: throws the
// contract's message for the first row that has a NaN or +inf logit or only -inf.
void check_logits_before(const BatchInput& input, std::size_t end) {
    if (input.logits_location != MemoryLocation::Host) return;
    const auto vocab = static_cast<std::int64_t>(input.vocab);
    for (std::size_t r = 0; r < end; ++r) {
        const LogitCheck check = check_row_logits(input.logits + r * input.vocab, vocab);
        if (check.refused_id >= 0) throw refused_logit(input, r, check.refused_id, 0.0);
        if (!check.any_finite) throw no_finite_logit(r);
    }
}

}  // namespace

void validate_batch(const BatchInput& input) {
    std::exception_ptr refusal;
    const std::size_t refused_row = check_all_but_logits(input, refusal);
    // Row by row, as a row's own parameters are checked before its logits.
    check_logits_before(input, refused_row);
    if (refusal) std::rethrow_exception(refusal);
}

void throw_first_row_error(std::span<const RowResult> results, std::int32_t draws, const BatchInput& input) {
    const auto first_of_row = [&](std::size_t r) -> const RowResult& { return results[r * static_cast<std::size_t>(draws)]; };
    // Refused logits are input errors: the first such row comes before any
    // row that failed while computing, as when the logits were checked first.
    for (std::size_t r = 0; r < input.rows; ++r) {
        const RowResult& result = first_of_row(r);
        if (result.error == RowError::RefusedLogit) throw refused_logit(input, r, result.error_id, result.logprob);
        if (result.error == RowError::NoFiniteLogit) throw no_finite_logit(r);
    }
    for (std::size_t r = 0; r < input.rows; ++r) {
        const RowResult& result = first_of_row(r);
        const std::string id = std::to_string(result.error_id);
        switch (result.error) {
            case RowError::None:
            case RowError::RefusedLogit:
            case RowError::NoFiniteLogit: break;
            case RowError::PenaltyOverflow:
                throw InputError("penalty", row_name(r) + ": a penalty makes the logit of id " + id +
                                                " overflow; use a penalty closer to its off value (1 for repetition, 0 for presence and frequency)");
            case RowError::PenaltyEmptiedRow: throw penalty_emptied_error("penalty", row_name(r) + ": ", "a penalty");
            case RowError::TemperatureOverflow:
                throw temperature_overflow_error(input.temperature[r], result.error_id, -1.0, row_name(r) + ": ");
        }
    }
}

BatchOutput run_batch(const BatchInput& input, const BatchOptions& options) {
    // `seconds` runs from here: the checks, the run and the last row's result
    // (the CUDA probe, which is not the batch's work, is left out).
    const auto start = std::chrono::steady_clock::now();
    double probe_seconds = 0.0;
    std::exception_ptr refusal;
    const std::size_t refused_row = check_all_but_logits(input, refusal);
    if (refusal) {
        check_logits_before(input, refused_row);
        std::rethrow_exception(refusal);
    }
    if (options.draws < 1) {
        check_logits_before(input, input.rows);
        throw InputError("draws", "draws must be at least 1, got " + std::to_string(options.draws));
    }
    // Each row's logits are checked by the row routines in their first read of
    // the row, on the host twin and on the GPU alike.
    BatchOutput output;
    output.rows = input.rows;
    output.draws = options.draws;
    std::vector<RowResult> results(input.rows * static_cast<std::size_t>(options.draws));
    if (options.kept_mask) output.kept_mask.assign(input.rows * input.vocab, 0);

    Backend backend = options.backend;
    if (backend != Backend::Host) {
        const auto probe_start = std::chrono::steady_clock::now();
        const CudaProbe probe = probe_cuda();
        probe_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - probe_start).count();
        if (!probe.available) {
            if (backend == Backend::Cuda) throw InputError("backend", "the cuda backend cannot run: " + probe.reason);
            output.note = "no GPU: " + probe.reason;
            backend = Backend::Host;
        } else {
            backend = Backend::Cuda;
            output.device = probe.device;
        }
    }
    if (backend == Backend::Host && input.logits_location == MemoryLocation::Device) {
        throw InputError("logits", "logits in device memory need the cuda backend");
    }

    if (backend == Backend::Cuda) {
        output.kernel_seconds = run_cuda_batch(input, options, results, output.kept_mask);
    } else {
        const unsigned threads = run_host(input, options, results, output.kept_mask, &output.row_reads);
        output.device = "host twin (" + std::to_string(threads) + (threads == 1 ? " thread)" : " threads)");
    }

    throw_first_row_error(results, options.draws, input);
    output.token.resize(results.size());
    output.logprob.resize(results.size());
    output.draws_after.resize(input.rows);
    output.kept_count.resize(input.rows);
    for (std::size_t i = 0; i < results.size(); ++i) {
        output.token[i] = results[i].token;
        output.logprob[i] = results[i].logprob;
    }
    for (std::size_t r = 0; r < input.rows; ++r) {
        const RowResult& last = results[(r + 1) * static_cast<std::size_t>(options.draws) - 1];
        output.draws_after[r] = last.draws_after;
        output.kept_count[r] = last.kept_count;
    }
    output.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - probe_seconds;
    output.backend = backend;
    if (backend == Backend::Host) output.kernel_seconds = output.seconds;
    return output;
}

double run_cuda_batch(const BatchInput& input, const BatchOptions& options, std::vector<RowResult>& results,
                      std::vector<std::uint8_t>& mask) {
    std::vector<RowParams> params(input.rows);
    for (std::size_t r = 0; r < input.rows; ++r) params[r] = input.row_params(r);
    CudaBatch batch;
    batch.rows = static_cast<std::int64_t>(input.rows);
    batch.vocab = static_cast<std::int64_t>(input.vocab);
    batch.logits = input.logits;
    batch.logits_on_device = input.logits_location == MemoryLocation::Device;
    batch.params = params.data();
    batch.prompt_offsets = input.prompt_offsets.data();
    batch.prompt_ids = input.prompt_ids.data();
    batch.output_offsets = input.output_offsets.data();
    batch.output_ids = input.output_ids.data();
    batch.fast = options.mode == Mode::Fast;
    batch.kept_mask = options.kept_mask;
    batch.draws = options.draws;
    batch.stream = options.cuda_stream;
    return run_cuda(batch, results, mask);
}

}  // namespace samplescope::batch
