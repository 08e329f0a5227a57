#include "engine/io/vocabulary.h"

#include <cctype>
#include <cstring>
#include <new>

#include "engine/io/vocabulary_readers.h"

namespace samplescope {

namespace {

Vocabulary load_from(const ByteSource& source, VocabularyFormat format) {
    if (source.size() == 0) source.fail("the file is empty");
    if (format == VocabularyFormat::Auto) {
        if (has_extension(source.name(), ".gguf")) {
            format = VocabularyFormat::Gguf;
        } else if (has_extension(source.name(), ".json")) {
            format = VocabularyFormat::TokenizerJson;
        } else if (has_extension(source.name(), ".txt")) {
            format = VocabularyFormat::VocabTxt;
        } else {
            std::byte head[4]{};
            const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(4, source.size()));
            source.read(0, std::span(head, n));
            if (n == 4 && std::memcmp(head, "GGUF", 4) == 0) {
                format = VocabularyFormat::Gguf;
            } else if (std::to_integer<char>(head[0]) == '{') {
                format = VocabularyFormat::TokenizerJson;
            } else {
                format = VocabularyFormat::VocabTxt;
            }
        }
    }
    try {
        switch (format) {
            case VocabularyFormat::Gguf: return detail::read_gguf_vocabulary(source);
            case VocabularyFormat::VocabTxt: return detail::read_vocab_txt(source);
            case VocabularyFormat::Auto:
            case VocabularyFormat::TokenizerJson:
            case VocabularyFormat::VocabJson: return detail::read_tokenizer_json(source);
        }
    } catch (const std::bad_alloc&) {
        source.fail("not enough memory to load the vocabulary");
    } catch (const std::length_error&) {
        source.fail("not enough memory to load the vocabulary");
    }
    source.fail("unknown vocabulary format");
}

}  // namespace

namespace detail {

void place_token(Vocabulary& vocabulary, std::uint64_t id, std::string piece, bool special, std::size_t entries,
                 const ByteSource& source) {
    // Real vocabularies are dense; allow holes, but never let one id size the table.
    const std::uint64_t limit = 2 * static_cast<std::uint64_t>(entries) + 1024;
    if (id >= limit) {
        source.fail("token id " + std::to_string(id) + " is far beyond the " + std::to_string(entries) +
                    " entries the file has");
    }
    const auto index = static_cast<std::size_t>(id);
    if (index >= vocabulary.pieces.size()) {
        vocabulary.pieces.resize(index + 1);
        vocabulary.defined.resize(index + 1, 0);
        vocabulary.special.resize(index + 1, 0);
    }
    vocabulary.pieces[index] = std::move(piece);
    vocabulary.defined[index] = 1;
    vocabulary.special[index] = special ? 1 : 0;
}

TokenEncoding guess_encoding(const Vocabulary& vocabulary) {
    std::size_t byte_level = 0;
    std::size_t sentencepiece = 0;
    for (std::size_t id = 0; id < vocabulary.pieces.size(); ++id) {
        if (vocabulary.special[id]) continue;
        const auto& piece = vocabulary.pieces[id];
        if (piece.find("\xC4\xA0") != std::string::npos || piece.find("\xC4\x8A") != std::string::npos) ++byte_level;  // Ġ Ċ
        if (piece.find("\xE2\x96\x81") != std::string::npos) ++sentencepiece;                                          // ▁
    }
    if (byte_level == 0 && sentencepiece == 0) return TokenEncoding::Plain;
    return byte_level >= sentencepiece ? TokenEncoding::ByteLevel : TokenEncoding::SentencePiece;
}

Vocabulary read_vocab_txt(const ByteSource& source) {
    const std::string text = source.read_all(kVocabularyTextLimit);
    Vocabulary vocabulary;
    vocabulary.format = VocabularyFormat::VocabTxt;
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto newline = rest.find('\n');
        std::string_view line = rest.substr(0, newline);
        rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        // Line i is id i, blank lines included, so ids never shift.
        vocabulary.pieces.emplace_back(line);
        vocabulary.defined.push_back(1);
        vocabulary.special.push_back(0);
    }
    vocabulary.encoding = guess_encoding(vocabulary);
    return vocabulary;
}

}  // namespace detail

std::string Vocabulary::label(std::size_t id) const {
    if (id >= pieces.size() || !defined[id]) return {};
    return display_token(pieces[id], special[id] ? TokenEncoding::Plain : encoding);
}

const char* vocabulary_format_name(VocabularyFormat format) {
    switch (format) {
        case VocabularyFormat::Auto: return "auto";
        case VocabularyFormat::TokenizerJson: return "tokenizer.json";
        case VocabularyFormat::VocabJson: return "vocab.json";
        case VocabularyFormat::VocabTxt: return "vocab.txt";
        case VocabularyFormat::Gguf: return "GGUF";
    }
    return "?";
}

Vocabulary load_vocabulary(const std::string& path) {
    const FileSource source(path);
    Vocabulary vocabulary = load_from(source, VocabularyFormat::Auto);
    vocabulary.source = path;
    return vocabulary;
}

Vocabulary load_vocabulary_bytes(std::string_view bytes, const std::string& source, VocabularyFormat format) {
    const MemorySource memory(bytes, source);
    Vocabulary vocabulary = load_from(memory, format);
    vocabulary.source = source;
    return vocabulary;
}

VocabularyLabels token_labels(const Vocabulary& vocabulary, std::size_t vocab_size) {
    VocabularyLabels out;
    out.labels.resize(vocab_size);
    for (std::size_t id = 0; id < vocab_size && id < vocabulary.size(); ++id) out.labels[id] = vocabulary.label(id);
    if (vocabulary.size() < vocab_size) {
        out.warnings.push_back(vocabulary.source + ": the vocabulary has " + std::to_string(vocabulary.size()) +
                               " tokens but the logits have V = " + std::to_string(vocab_size) + "; ids " +
                               std::to_string(vocabulary.size()) + ".." + std::to_string(vocab_size - 1) +
                               " have no label");
    } else if (vocabulary.size() > vocab_size) {
        out.warnings.push_back(vocabulary.source + ": the vocabulary has " + std::to_string(vocabulary.size()) +
                               " tokens but the logits have V = " + std::to_string(vocab_size) + "; tokens " +
                               std::to_string(vocab_size) + ".." + std::to_string(vocabulary.size() - 1) +
                               " are not shown");
    }
    return out;
}

}  // namespace samplescope
