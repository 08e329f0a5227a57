// The batch engine: the sampling pipeline for a whole [B, V] batch, on a CUDA
// GPU or on its host twin (the same algorithms in plain C++, threads over rows).
//
// Two modes. Exact: the contract row by row (f64, ascending-id sums, the PCG32
// stream, the inverse-CDF walk); it gives the reference's token on every row
// except near-ties. Fast: f32 selection kernels that never sort a row (top-k and
// top-p by radix threshold selection, min-p in log space) and a Gumbel-max draw
// whose noise is a pure function of (seed, draw position, token id).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/row_request.h"
#include "engine/core/sampling_params.h"
#include "kernels/row_params.h"

namespace samplescope::batch {

enum class Mode { Exact, Fast };
enum class Backend { Host, Cuda, Auto };
enum class MemoryLocation { Host, Device };

std::string_view mode_name(Mode mode);
std::string_view backend_name(Backend backend);
// Throw InputError naming the flag for an unknown name.
Mode parse_mode(std::string_view text);
Backend parse_backend(std::string_view text);

// A batch as the kernels read it. Every per-row field is one array of `rows`
// values; a switched-off parameter holds its neutral value (see RowParams).
// Histories are CSR: row r's prompt ids are prompt_ids[prompt_offsets[r] ..
// prompt_offsets[r + 1]), likewise the output ids.
struct BatchInput {
    std::size_t rows = 0;
    std::size_t vocab = 0;
    const float* logits = nullptr;  // [rows, vocab], row-major, not owned
    MemoryLocation logits_location = MemoryLocation::Host;

    std::vector<double> temperature;
    std::vector<std::int64_t> top_k;
    std::vector<double> top_p;
    std::vector<double> min_p;
    std::vector<double> repetition_penalty;
    std::vector<double> presence_penalty;
    std::vector<double> frequency_penalty;
    std::vector<std::uint64_t> seed;
    std::vector<std::uint64_t> draws_before;  // uniforms each row's stream has already consumed

    std::vector<std::int64_t> prompt_offsets{0};
    std::vector<std::int32_t> prompt_ids;
    std::vector<std::int64_t> output_offsets{0};
    std::vector<std::int32_t> output_ids;

    RowParams row_params(std::size_t row) const;
    // The row as the reference engine takes it (top_k = V reads back as off).
    SamplingParams sampling_params(std::size_t row) const;
    std::span<const std::int32_t> prompt(std::size_t row) const;
    std::span<const std::int32_t> output(std::size_t row) const;
};

// Builds the per-row arrays from one request per row (e.g. the rows of a
// params JSON file). A row without a seed gets one chosen now, so every run can
// be replayed. Throws InputError naming the row.
BatchInput make_batch_input(const float* logits, std::size_t rows, std::size_t vocab,
                            std::span<const RowRequest> requests);

// Throws InputError naming the row and field for any value the contract
// refuses (section 3); logits are checked when they are in host memory.
void validate_batch(const BatchInput& input);

struct BatchOptions {
    Mode mode = Mode::Fast;
    Backend backend = Backend::Auto;
    bool kept_mask = false;   // also return the final kept set of every row
    std::int32_t draws = 1;   // draws per row from the same kept set, at positions draws_before + j
    unsigned threads = 0;     // host twin: 0 uses every hardware thread
    void* cuda_stream = nullptr;  // CUDA backend: a cudaStream_t to run on (null: the backend's own)
};

struct BatchOutput {
    std::size_t rows = 0;
    std::int32_t draws = 1;
    std::vector<std::int32_t> token;          // [rows, draws]
    std::vector<double> logprob;              // [rows, draws]: log_softmax after the penalties, over all V
    std::vector<std::uint64_t> draws_after;   // [rows]: draws consumed after the last draw
    std::vector<std::int32_t> kept_count;     // [rows]
    std::vector<std::uint8_t> kept_mask;      // [rows, vocab] when asked for

    Backend backend = Backend::Host;  // what really ran: Host or Cuda
    std::string device;               // the GPU's name, or the host twin and its threads
    std::string note;                 // why Auto ran on the host, when it did
    double seconds = 0.0;             // wall time from the checks to the last row's result (allocation and transfers included)
    double kernel_seconds = 0.0;      // the kernels alone (CUDA events); the host twin's wall time
    std::uint64_t row_reads = 0;      // host twin, fast mode: full reads of a row's V logits, all rows together

    std::int32_t token_at(std::size_t row, std::int32_t draw = 0) const {
        return token[row * static_cast<std::size_t>(draws) + static_cast<std::size_t>(draw)];
    }
    double logprob_at(std::size_t row, std::int32_t draw = 0) const {
        return logprob[row * static_cast<std::size_t>(draws) + static_cast<std::size_t>(draw)];
    }
    std::vector<std::int32_t> kept_ids(std::size_t row, std::size_t vocab) const;
};

// Validates, runs on the chosen backend and reports which ran. Backend::Cuda
// without a usable GPU, or a failing CUDA call, throws (InputError or
// std::runtime_error with the CUDA error's text); Backend::Auto falls back to
// the host twin and says why in `note`.
BatchOutput run_batch(const BatchInput& input, const BatchOptions& options);

// Turns the first row that could not be sampled into the contract's one-line
// InputError; does nothing when every row succeeded.
void throw_first_row_error(std::span<const RowResult> results, std::int32_t draws, const BatchInput& input);

}  // namespace samplescope::batch
