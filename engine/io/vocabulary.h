// Token labels for logits: a vocabulary loaded from a Hugging Face
// tokenizer.json (the model's vocab plus added_tokens), a vocab.json id map, a
// vocab.txt with one token per line, or the tokenizer.ggml.tokens metadata of
// a GGUF file (the metadata only; the weights are never read). Every failure
// is an InputError naming the file; loading returns a new object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/io/token_display.h"

namespace samplescope {

class ByteSource;

enum class VocabularyFormat { Auto, TokenizerJson, VocabJson, VocabTxt, Gguf };

struct Vocabulary {
    std::vector<std::string> pieces;    // the stored piece of each id; "" where the file names no such id
    std::vector<std::uint8_t> defined;  // 1 where the file names the id
    std::vector<std::uint8_t> special;  // 1 for added / control tokens, shown as written
    TokenEncoding encoding = TokenEncoding::Plain;
    VocabularyFormat format = VocabularyFormat::Auto;
    std::string source;

    std::size_t size() const { return pieces.size(); }
    // The readable label of an id ("" when the vocabulary has none for it).
    std::string label(std::size_t id) const;
};

// Chooses the format by extension (.gguf, .txt, .json: tokenizer.json when the
// object has "model", else a vocab.json id map) or by the first bytes.
Vocabulary load_vocabulary(const std::string& path);
Vocabulary load_vocabulary_bytes(std::string_view bytes, const std::string& source,
                                 VocabularyFormat format = VocabularyFormat::Auto);

struct VocabularyLabels {
    std::vector<std::string> labels;    // V labels ("" for ids the vocabulary lacks)
    std::vector<std::string> warnings;  // e.g. the vocabulary's size differs from V
};

// Labels for ids [0, vocab_size). A vocabulary of another size is accepted
// with a warning: ids it lacks get no label, ids beyond V are unused.
VocabularyLabels token_labels(const Vocabulary& vocabulary, std::size_t vocab_size);

const char* vocabulary_format_name(VocabularyFormat format);

}  // namespace samplescope
