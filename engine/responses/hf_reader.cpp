// Hugging Face generate() outputs saved to disk (examples/dump_response_hf.py):
// `scores` (the processed scores, after every logits processor) or `logits`
// (the model's raw logits), one row of V per generated token, as a [T, V]
// .npy or a .safetensors tensor of that name, and the generated ids (the
// file's output_ids tensor, or given beside it). huggingface/transformers
// src/transformers/generation/utils.py GenerateDecoderOnlyOutput (scores: "Processed prediction
// scores", logits: "Unprocessed prediction scores", output_scores / output_logits).
#include <algorithm>
#include <numeric>

#include "engine/io/logits_loader.h"
#include "engine/io/logits_readers.h"
#include "engine/responses/response_readers.h"

namespace samplescope::response_detail {

namespace {

// The alternatives shown for a full row: its best ids, as a top list would hold them.
constexpr std::size_t kShownAlternatives = 20;

std::string tensor_mode(const std::string& tensor) {
    if (tensor == "scores") return "output_scores";
    if (tensor == "logits") return "output_logits";
    return "";
}

}  // namespace

Response read_hf_rows(const ByteSource* file, std::string_view bytes, const std::string& source,
                      const ResponseLoadOptions& options) {
    Response response;
    response.source = source;
    response.format = ResponseFormat::HfRows;
    response.normalised = false;
    LoadOptions load;
    load.memory_limit_bytes = options.memory_limit_bytes;
    load.tensor = options.tensor;
    const bool safetensors = has_extension(source, ".safetensors");
    if (safetensors && load.tensor.empty()) {
        const MemorySource memory(bytes, source);
        const ByteSource& header = file ? *file : static_cast<const ByteSource&>(memory);
        const std::vector<std::string> names = detail::safetensors_float_tensors(header);
        const bool scores = std::find(names.begin(), names.end(), "scores") != names.end();
        const bool logits = std::find(names.begin(), names.end(), "logits") != names.end();
        if (scores && logits) fail(source, "holds both scores and logits: pick one with --tensor");
        if (!scores && !logits) {
            std::string listed;
            for (const auto& name : names) listed += (listed.empty() ? "" : ", ") + name;
            fail(source, "holds no \"scores\" or \"logits\" tensor (it holds " + (listed.empty() ? "none" : listed) +
                             "); name the [T, V] tensor with --tensor and its mode with --logprobs-mode");
        }
        load.tensor = scores ? "scores" : "logits";
    }
    const std::string implied = tensor_mode(load.tensor);
    if (!implied.empty() && !options.logprobs_mode.empty() && options.logprobs_mode != implied) {
        fail(source, "the tensor \"" + load.tensor + "\" holds generate()'s " + implied + ", not " + options.logprobs_mode);
    }
    response.mode = !implied.empty() ? implied : options.logprobs_mode;
    response.mode_source = !implied.empty() ? "its tensor \"" + load.tensor + "\"" : "--logprobs-mode";
    if (response.mode.empty()) {
        fail(source, "does not say whether it holds generate()'s scores or logits: give --logprobs-mode "
                     "output_scores or output_logits");
    }
    LogitsMatrix matrix = file ? load_logits_file(file->name(), load) : load_logits_bytes(bytes, source, load);
    std::vector<std::int64_t> ids = options.generated_ids;
    if (ids.empty()) {
        ids = matrix.output_ids;
    } else if (!matrix.output_ids.empty() && matrix.output_ids != ids) {
        response.notes.push_back("the generated ids given replace the file's own output_ids");
    }
    if (ids.empty()) {
        fail(source, "needs the generated ids: an output_ids tensor in the file or --generated-ids");
    }
    if (ids.size() != matrix.rows) {
        fail(source, "holds " + std::to_string(matrix.rows) + " rows for " + std::to_string(ids.size()) +
                         " generated ids (one [V] row per generated token, shape [T, V])");
    }
    response.prompt_ids = matrix.prompt_ids;
    for (const auto& note : matrix.notes) response.notes.push_back(note);
    const std::size_t vocab = matrix.cols;
    std::vector<std::int32_t> order(vocab);
    for (std::size_t t = 0; t < matrix.rows; ++t) {
        const double* row = matrix.values.data() + t * vocab;
        ResponsePosition position;
        position.where = "row " + std::to_string(t);
        position.token.id = ids[t];
        if (ids[t] < 0 || static_cast<std::uint64_t>(ids[t]) >= vocab) {
            fail(source, "generated id " + std::to_string(t) + " is " + std::to_string(ids[t]) +
                             ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
        }
        position.token.value = row[ids[t]];
        const std::size_t shown = std::min(kShownAlternatives, vocab);
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(shown), order.end(),
                          [row](std::int32_t a, std::int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
        for (std::size_t k = 0; k < shown; ++k) position.top.push_back(ResponseToken{order[k], "", row[order[k]]});
        finish_position(position, source);
        response.positions.push_back(std::move(position));
    }
    response.rows = std::make_shared<const LogitsMatrix>(std::move(matrix));
    return response;
}

}  // namespace samplescope::response_detail
