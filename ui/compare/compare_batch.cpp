#include "ui/compare/compare_batch.h"

#include <cmath>
#include <filesystem>
#include <limits>

#include "engine/base/input_error.h"
#include "engine/io/logits_loader.h"

namespace samplescope {

batch::BatchInput CompareBatch::input() const {
    return batch::make_batch_input(logits ? logits->data() : nullptr, rows, vocab, requests);
}

std::vector<double> CompareBatch::rowLogits(std::size_t row) const {
    const auto begin = logits->begin() + static_cast<std::ptrdiff_t>(row * vocab);
    return {begin, begin + static_cast<std::ptrdiff_t>(vocab)};
}

void checkHistories(const std::vector<RowRequest>& requests, std::size_t vocab, const std::string& params_path) {
    try {
        // make_batch_input checks every history id against V, naming the row.
        (void)batch::make_batch_input(nullptr, requests.size(), vocab, requests);
    } catch (const InputError& error) {
        throw InputError(error.field(), params_path + ": " + error.what());
    }
}

void seedEveryRow(std::vector<RowRequest>& requests) {
    for (auto& request : requests) {
        if (!request.params.seed) request.params.seed = choose_seed();
    }
}

CompareBatch loadCompareBatch(const std::string& logits_path, const std::string& params_path) {
    const LogitsMatrix matrix = load_logits_file(logits_path);
    auto logits = std::make_shared<std::vector<float>>();
    logits->reserve(matrix.values.size());
    // The batch engine reads f32: a finite value beyond f32's range would turn into inf.
    for (std::size_t i = 0; i < matrix.values.size(); ++i) {
        const double x = matrix.values[i];
        if (std::isfinite(x) && std::fabs(x) > static_cast<double>(std::numeric_limits<float>::max())) {
            throw InputError(logits_path, logits_path + ": logit " + std::to_string(i % matrix.cols) + " of row " +
                                              std::to_string(i / matrix.cols) + " does not fit in f32");
        }
        logits->push_back(static_cast<float>(x));
    }
    CompareBatch out;
    out.rows = matrix.rows;
    out.vocab = matrix.cols;
    if (out.rows == 0 || out.vocab == 0) {
        throw InputError(logits_path, logits_path + ": holds no logits: nothing can be sampled");
    }
    out.requests = params_path.empty() ? std::vector<RowRequest>(out.rows)
                                       : load_row_requests_file(params_path, out.rows);
    checkHistories(out.requests, out.vocab, params_path);
    seedEveryRow(out.requests);
    out.logits = std::move(logits);
    out.source = logits_path;
    out.source_name = std::filesystem::path(logits_path).filename().string();
    if (!params_path.empty()) {
        out.source += " + " + params_path;
        out.source_name += " + " + std::filesystem::path(params_path).filename().string();
    }
    return out;
}

CompareBatch generateCompareBatch(std::size_t rows, std::size_t vocab, batch::Workload workload, std::uint64_t seed) {
    if (rows == 0 || vocab == 0) {
        throw InputError("generate", "a generated batch needs B >= 1 and V >= 1, got B = " + std::to_string(rows) +
                                         ", V = " + std::to_string(vocab));
    }
    if (rows > kMaxGeneratedLogits / vocab) {
        throw InputError("generate", "B x V = " + std::to_string(rows) + " x " + std::to_string(vocab) +
                                         " is more than " + std::to_string(kMaxGeneratedLogits) + " logits");
    }
    batch::SyntheticBatch synthetic = batch::generate_batch(rows, vocab, workload, seed);
    CompareBatch out;
    out.rows = rows;
    out.vocab = vocab;
    out.logits = std::make_shared<const std::vector<float>>(std::move(synthetic.logits));
    out.requests = std::move(synthetic.requests);
    seedEveryRow(out.requests);
    out.source = "generated " + std::to_string(rows) + " x " + std::to_string(vocab) + " (" +
                 std::string(batch::workload_name(workload)) + ", seed " + std::to_string(seed) + ")";
    out.source_name = out.source;
    return out;
}

}  // namespace samplescope
