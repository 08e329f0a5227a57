// Where a generation's model comes from, as the CLI's --model and the GUI's
// model box name it: "ngram" (the file's own order), "ngram:trigram",
// "ngram:bigram", "ngram:unigram" (the same file conditioning on fewer words,
// a draft), or "rows" (a recorded logits file).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/models/language_model.h"

namespace samplescope {

struct ModelSpec {
    std::string kind = "ngram";  // "ngram" or "rows"
    int order = 0;               // ngram: 1 to 3; 0 the file's own
    std::string path;            // ngram: the model file ("" the default); rows: the logits file
    std::string vocab;           // rows: a vocabulary file for its labels ("" none, or the file's own)
    std::string tensor;          // rows: the .safetensors tensor
    std::optional<std::uint64_t> batch_row;  // rows: which batch row of a [B, T, V] file (0 when unset)
};

// Parses the kind ("ngram", "ngram:bigram", ...); throws InputError(field)
// naming the text and the kinds there are.
ModelSpec parse_model_spec(std::string_view text, const std::string& field);

// The n-gram model read when no path is given: $SAMPLESCOPE_NGRAM_MODEL when
// set, else Debian's pocketsphinx-en-us trigram model.
std::string default_ngram_model_path();
inline constexpr const char* kNgramModelPackage = "pocketsphinx-en-us";

// Whether the default n-gram model's file is there to read.
bool default_ngram_model_installed();

struct LoadedModel {
    std::shared_ptr<const LanguageModel> model;
    std::vector<std::string> warnings;  // accepted, worth telling (a vocabulary of another size)
    std::vector<std::string> notes;     // what the loader chose (the tensor, the batch row)
};

// Loads the model; throws InputError (a missing default model names the
// Debian package that brings it).
LoadedModel load_model(const ModelSpec& spec, std::uint64_t memory_budget);

}  // namespace samplescope
