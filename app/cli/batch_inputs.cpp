#include "app/cli/batch_inputs.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/base/number_text.h"
#include "app/request_options.h"
#include "engine/io/logits_loader.h"
#include "kernels/tools/batch_generate.h"

namespace samplescope::cli {

void add_batch_flags(CLI::App& app, BatchFlags& flags) {
    app.add_option("--logits", flags.logits_file, "A [B, V] logits file: a 2-D .npy of f32/f64 (or any format `trace` reads)");
    app.add_option("--params", flags.params_file,
                   "A JSON list with one object per row: temperature, top_k, top_p, min_p, repetition_penalty, "
                   "presence_penalty, frequency_penalty, seed (decimal string), prompt_ids, output_ids, skip_draws");
    app.add_option("--generate", flags.generate,
                   "Instead of --logits: a deterministic synthetic batch of B rows and V ids, e.g. 64,128256");
    app.add_option("--workload", flags.workload,
                   "Parameters of a generated batch without --params: mixed, every-stage, top-p, greedy")
        ->default_str("mixed");
    app.add_option("--generate-seed", flags.generate_seed, "Seed of the generated batch")
        ->default_str("0")
        ->check(non_empty_value());
    app.add_option("--mode", flags.mode, "exact (the contract, f64) or fast (f32 selection, Gumbel draw)")
        ->default_str("exact");
    app.add_option("--threads", flags.threads, "Host twin threads, 0 to 1024 (0: every hardware thread)")
        ->default_str("0")
        ->check(non_empty_value());
    app.add_option("--max-memory", flags.max_memory,
                   "Memory the whole run may use, e.g. 4G or 512M (default: half of the smaller of physical "
                   "memory and the address-space limit)")
        ->check(non_empty_value());
}

namespace {

std::size_t parse_count(const std::string& text, const char* what) {
    const auto parsed = parse_integer_text(text);
    if (!parsed || parsed->negative || parsed->magnitude == 0 || parsed->magnitude > (1ULL << 31)) {
        throw InputError("generate", std::string("--generate wants B,V with integers in [1, 2147483648], got ") + what +
                                         " \"" + text + "\"");
    }
    return static_cast<std::size_t>(parsed->magnitude);
}

// What a batch run holds at its peak: the f32 batch (and, from a file, the
// doubles it was read as), each row's request and result, a V-long workspace
// per thread, the kept masks, and every draw of every row.
std::uint64_t batch_memory_estimate(std::uint64_t rows, std::uint64_t vocab, bool from_file, std::uint64_t draws) {
    const std::uint64_t cells = saturating_mul(rows, vocab);
    std::uint64_t bytes = saturating_mul(cells, from_file ? 4 + 8 : 4);
    bytes = saturating_add(bytes, saturating_mul(cells, 1));                   // kept masks
    bytes = saturating_add(bytes, saturating_mul(rows, 512));                  // requests, results, JSON
    bytes = saturating_add(bytes, saturating_mul(saturating_mul(rows, draws), 16));  // draws
    bytes = saturating_add(bytes, saturating_mul(saturating_mul(vocab, 64), kMaxThreads / 16));  // workspaces
    return bytes;
}

}  // namespace

unsigned batch_threads(const BatchFlags& flags) {
    if (flags.threads.empty()) return 0;
    return static_cast<unsigned>(parse_uint_in_range(flags.threads, "threads", "--threads", 0, kMaxThreads));
}

LoadedBatch load_batch(const BatchFlags& flags, std::uint64_t draws_per_row) {
    LoadedBatch batch;
    const std::uint64_t budget = parse_memory_budget(flags.max_memory);
    const std::uint64_t generate_seed =
        flags.generate_seed.empty()
            ? 0
            : parse_uint_in_range(flags.generate_seed, "generate_seed", "--generate-seed", 0,
                                  std::numeric_limits<std::uint64_t>::max());
    batch_threads(flags);
    if (flags.logits_file.empty() == flags.generate.empty()) {
        throw InputError("logits", "give exactly one of --logits FILE or --generate B,V");
    }
    if (!flags.generate.empty()) {
        const auto comma = flags.generate.find(',');
        if (comma == std::string::npos) throw InputError("generate", "--generate wants B,V, got \"" + flags.generate + "\"");
        const std::size_t rows = parse_count(flags.generate.substr(0, comma), "B");
        const std::size_t vocab = parse_count(flags.generate.substr(comma + 1), "V");
        if (static_cast<double>(rows) * static_cast<double>(vocab) > 4.0e9) {
            throw InputError("generate", "--generate " + flags.generate + " is larger than 4e9 logits");
        }
        check_memory(batch_memory_estimate(rows, vocab, false, draws_per_row), budget,
                     "--generate " + flags.generate);
        const batch::Workload workload = batch::parse_workload(flags.workload);
        batch::SyntheticBatch synthetic = batch::generate_batch(rows, vocab, workload, generate_seed);
        batch.rows = rows;
        batch.vocab = vocab;
        batch.logits = std::move(synthetic.logits);
        batch.requests = std::move(synthetic.requests);
        batch.source = "generated " + std::to_string(rows) + " x " + std::to_string(vocab) + " (" +
                       std::string(batch::workload_name(workload)) + ", seed " + std::to_string(generate_seed) + ")";
    } else {
        // The f64 copy is 8 of the 12 bytes a batch cell costs (the f32 batch is
        // the rest): refused by the loader from the header, before allocating.
        LoadOptions load;
        load.memory_limit_bytes = budget / 12 * 8;
        const LogitsMatrix matrix = load_logits_file(flags.logits_file, load);
        check_memory(batch_memory_estimate(matrix.rows, matrix.cols, true, draws_per_row), budget,
                     flags.logits_file + " (" + std::to_string(matrix.rows) + " x " + std::to_string(matrix.cols) + ")");
        batch.rows = matrix.rows;
        batch.vocab = matrix.cols;
        batch.logits.reserve(matrix.values.size());
        for (std::size_t i = 0; i < matrix.values.size(); ++i) {
            const double x = matrix.values[i];
            if (std::isfinite(x) && std::fabs(x) > static_cast<double>(std::numeric_limits<float>::max())) {
                throw InputError(flags.logits_file, flags.logits_file + ": logit " + std::to_string(i % matrix.cols) +
                                                        " of row " + std::to_string(i / matrix.cols) +
                                                        " does not fit in f32");
            }
            batch.logits.push_back(static_cast<float>(x));
        }
        batch.requests.assign(batch.rows, RowRequest{});
        batch.source = flags.logits_file;
    }
    if (!flags.params_file.empty()) batch.requests = load_row_requests_file(flags.params_file, batch.rows);
    for (std::size_t r = 0; r < batch.requests.size(); ++r) {
        try {
            check_draw_counter(batch.requests[r].skip_draws, draws_per_row, "skip_draws");
        } catch (const InputError& error) {
            throw InputError(error.field(), flags.params_file + ": row " + std::to_string(r) + ": " + error.what());
        }
    }
    return batch;
}

}  // namespace samplescope::cli
