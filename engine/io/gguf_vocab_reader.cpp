// The token list of a GGUF file: walks the header's metadata key/value pairs
// and keeps tokenizer.ggml.tokens (and .model / .token_type to show them
// right). The tensor infos and weights that follow are never read. Every
// length and count is checked against the bytes left in the file before use.
// Format reference: ggml's docs/gguf.md (version 2 and 3: 64-bit counts).
#include <cstring>

#include "engine/io/vocabulary_readers.h"

namespace samplescope::detail {

namespace {

enum GgufType : std::uint32_t {
    kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
    kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

std::size_t fixed_size(std::uint32_t type) {
    switch (type) {
        case kU8: case kI8: case kBool: return 1;
        case kU16: case kI16: return 2;
        case kU32: case kI32: case kF32: return 4;
        case kU64: case kI64: case kF64: return 8;
        default: return 0;
    }
}

class GgufReader {
public:
    explicit GgufReader(const ByteSource& source) : source_(source), in_(source) {}

    std::uint64_t u64(const char* what) {
        const std::byte* bytes = in_.take(8, what);
        std::uint64_t value = 0;
        for (int i = 0; i < 8; ++i) value |= std::uint64_t{std::to_integer<unsigned>(bytes[i])} << (8 * i);
        return value;
    }
    std::uint32_t u32(const char* what) {
        const std::byte* bytes = in_.take(4, what);
        std::uint32_t value = 0;
        for (int i = 0; i < 4; ++i) value |= std::uint32_t{std::to_integer<unsigned>(bytes[i])} << (8 * i);
        return value;
    }
    std::string string(const char* what) {
        const std::uint64_t length = u64(what);
        if (length > in_.remaining()) {
            source_.fail(std::string("truncated GGUF metadata: a ") + what + " of " + std::to_string(length) +
                         " bytes at offset " + std::to_string(in_.position()) + " runs past the end of the file");
        }
        std::string text(static_cast<std::size_t>(length), '\0');
        std::size_t done = 0;
        while (done < text.size()) {
            const std::size_t piece = std::min<std::size_t>(text.size() - done, in_.window());
            std::memcpy(text.data() + done, in_.take(piece, what), piece);
            done += piece;
        }
        return text;
    }
    void skip_value(std::uint32_t type, int depth) {
        if (const std::size_t size = fixed_size(type)) {
            in_.skip(size, "metadata value");
        } else if (type == kString) {
            const std::uint64_t length = u64("metadata string");
            in_.skip(length, "metadata string");
        } else if (type == kArray) {
            if (depth > 4) source_.fail("GGUF metadata arrays nest deeper than 4");
            const std::uint32_t element = u32("metadata array type");
            const std::uint64_t count = u64("metadata array length");
            if (const std::size_t element_bytes = fixed_size(element)) {
                if (count > in_.remaining() / element_bytes) source_.fail("truncated GGUF metadata: an array of " + std::to_string(count) + " values runs past the end of the file");
                in_.skip(count * element_bytes, "metadata array");
            } else {
                if (element != kString && element != kArray) source_.fail("unknown GGUF value type " + std::to_string(element));
                for (std::uint64_t i = 0; i < count; ++i) skip_value(element, depth + 1);
            }
        } else {
            source_.fail("unknown GGUF value type " + std::to_string(type) + " at offset " + std::to_string(in_.position()));
        }
    }
    std::uint64_t remaining() const { return in_.remaining(); }
    const std::byte* take(std::size_t n, const char* what) { return in_.take(n, what); }

private:
    const ByteSource& source_;
    SequentialReader in_;
};

}  // namespace

Vocabulary read_gguf_vocabulary(const ByteSource& source) {
    GgufReader in(source);
    if (source.size() < 4) source.fail("not a GGUF file (too short)");
    if (std::memcmp(in.take(4, "magic"), "GGUF", 4) != 0) source.fail("not a GGUF file (bad magic: expected \"GGUF\")");
    const std::uint32_t version = in.u32("version");
    if (version == 1) source.fail("GGUF version 1 is not supported (convert the file with a current llama.cpp)");
    if (version != 2 && version != 3) {
        source.fail("unsupported GGUF version " + std::to_string(version) +
                    (version >= (1u << 16) ? " (a big-endian file?)" : " (expected 2 or 3)"));
    }
    in.u64("tensor count");  // the tensors are not read
    const std::uint64_t kv_count = in.u64("metadata count");

    Vocabulary vocabulary;
    vocabulary.format = VocabularyFormat::Gguf;
    bool have_tokens = false;
    bool have_token_types = false;
    std::string model;
    std::vector<std::int32_t> token_types;
    for (std::uint64_t kv = 0; kv < kv_count; ++kv) {
        const std::string key = in.string("metadata key");
        const std::uint32_t type = in.u32("metadata type");
        if (key == "tokenizer.ggml.tokens" || key == "tokenizer.ggml.token_type") {
            // A key given twice would leave which one counts to a guess.
            const bool again = key == "tokenizer.ggml.tokens" ? have_tokens : have_token_types;
            if (again) source.fail(key + " is given twice in the metadata");
            if (key == "tokenizer.ggml.token_type") have_token_types = true;
            if (type != kArray) source.fail(key + " is not an array");
            const std::uint32_t element = in.u32("metadata array type");
            const std::uint64_t count = in.u64("metadata array length");
            if (key == "tokenizer.ggml.tokens") {
                if (element != kString) source.fail("tokenizer.ggml.tokens is not an array of strings");
                if (count > in.remaining() / 8) source.fail("truncated GGUF metadata: " + std::to_string(count) + " tokens cannot fit in the rest of the file");
                vocabulary.pieces.reserve(static_cast<std::size_t>(count));
                for (std::uint64_t i = 0; i < count; ++i) vocabulary.pieces.push_back(in.string("token"));
                have_tokens = true;
            } else {
                if (element != kI32) source.fail("tokenizer.ggml.token_type is not an array of int32");
                if (count > in.remaining() / 4) source.fail("truncated GGUF metadata: tokenizer.ggml.token_type runs past the end of the file");
                token_types.reserve(static_cast<std::size_t>(count));
                for (std::uint64_t i = 0; i < count; ++i) token_types.push_back(static_cast<std::int32_t>(in.u32("token type")));
            }
        } else if (key == "tokenizer.ggml.model" && type == kString) {
            model = in.string("tokenizer model");
        } else {
            in.skip_value(type, 0);
        }
    }
    if (!have_tokens) source.fail("the GGUF metadata has no tokenizer.ggml.tokens");
    if (vocabulary.pieces.empty()) source.fail("tokenizer.ggml.tokens is empty");
    vocabulary.defined.assign(vocabulary.pieces.size(), 1);
    vocabulary.special.assign(vocabulary.pieces.size(), 0);
    // Token types 3 (control) and 4 (user defined) are stored as written.
    for (std::size_t id = 0; id < token_types.size() && id < vocabulary.pieces.size(); ++id) {
        vocabulary.special[id] = token_types[id] == 3 || token_types[id] == 4 ? 1 : 0;
    }
    if (model == "gpt2") {
        vocabulary.encoding = TokenEncoding::ByteLevel;
    } else if (model == "llama") {
        vocabulary.encoding = TokenEncoding::SentencePiece;
    } else if (model == "bert") {
        vocabulary.encoding = TokenEncoding::Plain;
    } else {
        vocabulary.encoding = guess_encoding(vocabulary);
    }
    return vocabulary;
}

}  // namespace samplescope::detail
