#include "engine/io/vocabulary.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <new>
#include <span>
#include <string_view>

#include "engine/io/vocabulary_readers.h"

namespace samplescope {

namespace {

// Files people pick by mistake, told apart by their first bytes: a vocabulary
// format that reads any bytes (vocab.txt) would otherwise label ids with them.
struct BinaryMagic {
    std::string_view magic;
    const char* what;
};
constexpr BinaryMagic kBinaryMagics[] = {
    {"\x93NUMPY", "a NumPy array"},
    {"PK\x03\x04", "a ZIP archive (as .npz and PyTorch files are)"},
    {"\x1F\x8B", "gzip-compressed"},
    {"\x89PNG\r\n\x1A\n", "a PNG image"},
    {"\x7F" "ELF", "an ELF executable or library"},
    {"%PDF-", "a PDF document"},
};

// A .safetensors file: an 8-byte little-endian header size, then a JSON
// header of that size that starts with '{'.
bool looks_like_safetensors(std::span<const std::byte> head, std::uint64_t size) {
    if (head.size() < 9 || std::to_integer<char>(head[8]) != '{') return false;
    std::uint64_t header = 0;
    for (int i = 0; i < 8; ++i) header |= std::uint64_t{std::to_integer<unsigned>(head[static_cast<std::size_t>(i)])} << (8 * i);
    return header >= 2 && header <= size - 8;
}

// The magic and a version word with zero bytes (2 or 3, either byte order):
// a text whose first piece happens to start with "GGUF" is not taken for one.
bool looks_like_gguf(std::string_view head) {
    return head.starts_with("GGUF") && head.size() >= 8 && head.substr(4, 4).find('\0') != std::string_view::npos;
}

// Refuses a file whose first bytes say it is not the format it is read as.
void check_magic(const ByteSource& source, VocabularyFormat format) {
    std::byte head[16]{};
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof head, source.size()));
    source.read(0, std::span(head, n));
    const std::string_view text(reinterpret_cast<const char*>(head), n);
    for (const auto& binary : kBinaryMagics) {
        if (text.starts_with(binary.magic)) {
            source.fail(std::string("is ") + binary.what + " (starts with " + std::string(binary.magic) +
                        "), not a vocabulary");
        }
    }
    if (looks_like_safetensors(std::span(head, n), source.size())) {
        source.fail("is a .safetensors file (an 8-byte header size, then a JSON header), not a vocabulary");
    }
    if (format == VocabularyFormat::Gguf && !text.starts_with("GGUF")) {
        source.fail("not a GGUF file (bad magic: expected \"GGUF\", found \"" + std::string(text.substr(0, 4)) + "\")");
    }
    if (format != VocabularyFormat::Gguf && looks_like_gguf(text)) {
        source.fail(std::string("is a GGUF file (starts with \"GGUF\"), not a ") + vocabulary_format_name(format) +
                    ": give it the .gguf extension to read its vocabulary");
    }
}

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF), 0 when there is none.
std::size_t utf8_length(std::string_view text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
    const unsigned lead = byte(i);
    const auto continuation = [&](std::size_t k) { return (byte(k) & 0xC0u) == 0x80u; };
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) return continuation(i + 1) ? 2 : 0;
    if (lead >= 0xE0 && lead <= 0xEF) {
        const unsigned second = byte(i + 1);
        if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F)) return 0;
        return continuation(i + 1) && continuation(i + 2) ? 3 : 0;
    }
    if (lead >= 0xF0 && lead <= 0xF4) {
        const unsigned second = byte(i + 1);
        if ((lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second > 0x8F)) return 0;
        return continuation(i + 1) && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
    }
    return 0;
}

std::string hex_byte(char c) {
    static constexpr char kDigits[] = "0123456789ABCDEF";
    const auto value = static_cast<unsigned char>(c);
    return std::string("0x") + kDigits[value >> 4] + kDigits[value & 0xF];
}

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
            std::byte head[8]{};
            const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(8, source.size()));
            source.read(0, std::span(head, n));
            if (looks_like_gguf(std::string_view(reinterpret_cast<const char*>(head), n))) {
                format = VocabularyFormat::Gguf;
            } else if (std::to_integer<char>(head[0]) == '{') {
                format = VocabularyFormat::TokenizerJson;
            } else {
                format = VocabularyFormat::VocabTxt;
            }
        }
    }
    check_magic(source, format);
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
    // Every piece is text: byte-level pieces are UTF-8 by construction (GPT-2's
    // table maps each byte to a character), so a NUL byte or broken UTF-8 means
    // the file is binary or in another encoding, and its lines would be garbage labels.
    std::size_t line_number = 1;
    for (std::size_t i = 0; i < text.size();) {
        if (text[i] == '\0') {
            source.fail("line " + std::to_string(line_number) + " holds a NUL byte (at byte " + std::to_string(i) +
                        "): a binary file, not a vocab.txt");
        }
        const std::size_t length = utf8_length(text, i);
        if (length == 0) {
            source.fail("line " + std::to_string(line_number) + " is not valid UTF-8 (byte " + hex_byte(text[i]) +
                        " at byte " + std::to_string(i) + "): a binary file or another encoding, not a vocab.txt");
        }
        if (text[i] == '\n') ++line_number;
        i += length;
    }
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
