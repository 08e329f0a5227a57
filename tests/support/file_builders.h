// Builders for the vocabulary files the tests, the fuzz seeds and the example
// data need: a GGUF header with tokenizer metadata, a tokenizer.json and a
// vocab.json. (Logits files come from the engine's own writers.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace samplescope::testing {

struct GgufVocabSpec {
    std::vector<std::string> tokens;
    std::string model = "gpt2";              // tokenizer.ggml.model
    std::vector<std::int32_t> token_types;   // tokenizer.ggml.token_type (empty: left out)
    bool extra_metadata = true;              // other keys of every value type before the tokens
    std::uint32_t version = 3;
};

// A GGUF file: header, metadata, one tensor info and junk standing in for
// weights (which a metadata reader must never need).
std::string encode_gguf_vocab(const GgufVocabSpec& spec);

// A tokenizer.json with a {piece: id} model vocab (BPE with a ByteLevel
// pre-tokenizer when byte_level, else WordPiece) and added tokens after it.
std::string tokenizer_json(const std::vector<std::string>& pieces, const std::vector<std::string>& added, bool byte_level);
// A Unigram tokenizer.json (pieces with scores, Metaspace).
std::string unigram_tokenizer_json(const std::vector<std::string>& pieces);
// A vocab.json {piece: id}.
std::string vocab_json(const std::vector<std::string>& pieces);

}  // namespace samplescope::testing
