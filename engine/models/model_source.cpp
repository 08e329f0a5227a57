#include "engine/models/model_source.h"

#include <cstdlib>
#include <filesystem>

#include "engine/base/input_error.h"
#include "engine/io/vocabulary.h"
#include "engine/models/ngram_model.h"
#include "engine/models/rows_model.h"

namespace samplescope {

namespace {

constexpr const char* kDebianModel = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin";

}  // namespace

ModelSpec parse_model_spec(std::string_view text, const std::string& field) {
    ModelSpec spec;
    if (text == "ngram") return spec;
    if (text == "rows") {
        spec.kind = "rows";
        return spec;
    }
    static constexpr std::pair<std::string_view, int> kOrders[] = {
        {"ngram:trigram", 3}, {"ngram:bigram", 2}, {"ngram:unigram", 1}};
    for (const auto& [name, order] : kOrders) {
        if (text == name) {
            spec.order = order;
            return spec;
        }
    }
    throw InputError(field, "--" + field + " must be ngram, ngram:trigram, ngram:bigram, ngram:unigram or rows, got \"" +
                                std::string(text) + "\"");
}

std::string default_ngram_model_path() {
    if (const char* path = std::getenv("SAMPLESCOPE_NGRAM_MODEL"); path && *path) return path;
    return kDebianModel;
}

bool default_ngram_model_installed() {
    std::error_code error;
    return std::filesystem::is_regular_file(default_ngram_model_path(), error);
}

LoadedModel load_model(const ModelSpec& spec, std::uint64_t memory_budget) {
    if (spec.kind == "rows") {
        if (spec.path.empty()) throw InputError("logits", "the rows model needs a logits file (--logits FILE)");
        LoadOptions options;
        options.tensor = spec.tensor;
        options.memory_limit_bytes = memory_budget;
        options.all_positions_of = spec.batch_row.value_or(0);
        LogitsMatrix rows = load_logits_file(spec.path, options);
        LoadedModel loaded;
        std::vector<std::string> labels = rows.labels;
        if (!spec.vocab.empty()) {
            auto fitted = token_labels(load_vocabulary(spec.vocab), rows.cols);
            labels = std::move(fitted.labels);
            loaded.warnings = std::move(fitted.warnings);
        }
        loaded.notes = rows.notes;
        loaded.model = std::make_shared<const RowsModel>(std::move(rows), std::move(labels), spec.path);
        return loaded;
    }
    const bool given = !spec.path.empty();
    const std::string path = given ? spec.path : default_ngram_model_path();
    std::error_code error;
    if (!given && !std::filesystem::exists(path, error)) {
        throw InputError("model", "no n-gram model at " + path + ": install Debian's " + kNgramModelPackage +
                                      " (apt install " + kNgramModelPackage + ") or give --model-path FILE");
    }
    auto model = NgramModel::load(path, memory_budget);
    LoadedModel loaded;
    loaded.model = spec.order == 0 || spec.order == model->file_order() ? model : model->restricted(spec.order);
    return loaded;
}

}  // namespace samplescope
