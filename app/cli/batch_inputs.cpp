#include "app/cli/batch_inputs.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/core/input_error.h"
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
    app.add_option("--generate-seed", flags.generate_seed, "Seed of the generated batch")->default_str("0");
    app.add_option("--mode", flags.mode, "exact (the contract, f64) or fast (f32 selection, Gumbel draw)")
        ->default_str("exact");
    app.add_option("--threads", flags.threads, "Host twin threads (0: every hardware thread)")->default_str("0");
}

namespace {

std::size_t parse_count(const std::string& text, const char* what) {
    std::size_t used = 0;
    unsigned long long value = 0;
    try {
        value = std::stoull(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || value == 0 || value > (1ULL << 31)) {
        throw InputError("generate", std::string("--generate wants B,V with positive integers, got ") + what + " \"" + text + "\"");
    }
    return static_cast<std::size_t>(value);
}

}  // namespace

LoadedBatch load_batch(const BatchFlags& flags) {
    LoadedBatch batch;
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
        const batch::Workload workload = batch::parse_workload(flags.workload);
        batch::SyntheticBatch synthetic = batch::generate_batch(rows, vocab, workload, flags.generate_seed);
        batch.rows = rows;
        batch.vocab = vocab;
        batch.logits = std::move(synthetic.logits);
        batch.requests = std::move(synthetic.requests);
        batch.source = "generated " + std::to_string(rows) + " x " + std::to_string(vocab) + " (" +
                       std::string(batch::workload_name(workload)) + ", seed " + std::to_string(flags.generate_seed) + ")";
    } else {
        const LogitsMatrix matrix = load_logits_file(flags.logits_file);
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
    return batch;
}

}  // namespace samplescope::cli
