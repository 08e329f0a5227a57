#include "tests/support/file_builders.h"

#include <bit>

#include <nlohmann/json.hpp>

namespace samplescope::testing {

namespace {

class GgufWriter {
public:
    void u32(std::uint32_t value) { put(value, 4); }
    void u64(std::uint64_t value) { put(value, 8); }
    void string(const std::string& text) {
        u64(text.size());
        out_ += text;
    }
    void key(const std::string& name, std::uint32_t type) {
        string(name);
        u32(type);
    }
    std::string& bytes() { return out_; }

private:
    void put(std::uint64_t value, int size) {
        for (int i = 0; i < size; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
    }
    std::string out_;
};

}  // namespace

std::string encode_gguf_vocab(const GgufVocabSpec& spec) {
    GgufWriter w;
    w.bytes() = "GGUF";
    w.u32(spec.version);
    w.u64(1);  // one tensor info after the metadata
    std::uint64_t kv_count = 2 + (spec.token_types.empty() ? 0 : 1) + (spec.extra_metadata ? 7 : 0);
    w.u64(kv_count);
    if (spec.extra_metadata) {
        w.key("general.architecture", 8);
        w.string("llama");
        w.key("llama.context_length", 4);
        w.u32(4096);
        w.key("llama.rope.freq_base", 6);
        w.u32(std::bit_cast<std::uint32_t>(10000.0f));
        w.key("general.file_type", 10);
        w.u64(1);
        w.key("tokenizer.ggml.add_bos_token", 7);
        w.bytes().push_back('\x01');
        w.key("tokenizer.ggml.scores", 9);
        w.u32(6);
        w.u64(spec.tokens.size());
        for (std::size_t i = 0; i < spec.tokens.size(); ++i) w.u32(std::bit_cast<std::uint32_t>(-static_cast<float>(i)));
        w.key("tokenizer.ggml.merges", 9);
        w.u32(8);
        w.u64(2);
        w.string("\xC4\xA0 t");
        w.string("h e");
    }
    w.key("tokenizer.ggml.model", 8);
    w.string(spec.model);
    w.key("tokenizer.ggml.tokens", 9);
    w.u32(8);
    w.u64(spec.tokens.size());
    for (const auto& token : spec.tokens) w.string(token);
    if (!spec.token_types.empty()) {
        w.key("tokenizer.ggml.token_type", 9);
        w.u32(5);
        w.u64(spec.token_types.size());
        for (const auto type : spec.token_types) w.u32(static_cast<std::uint32_t>(type));
    }
    // The tensor info and 32 bytes of stand-in weights.
    w.string("token_embd.weight");
    w.u32(2);
    w.u64(4);
    w.u64(8);
    w.u32(0);
    w.u64(0);
    w.bytes().append(32, '\xAB');
    return w.bytes();
}

std::string tokenizer_json(const std::vector<std::string>& pieces, const std::vector<std::string>& added, bool byte_level) {
    nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
    for (std::size_t id = 0; id < pieces.size(); ++id) vocab[pieces[id]] = id;
    auto added_tokens = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < added.size(); ++i) {
        added_tokens.push_back({{"id", pieces.size() + i}, {"content", added[i]}, {"single_word", false},
                                {"lstrip", false}, {"rstrip", false}, {"normalized", false}, {"special", true}});
    }
    nlohmann::ordered_json doc;
    doc["version"] = "1.0";
    doc["truncation"] = nullptr;
    doc["padding"] = nullptr;
    doc["added_tokens"] = added_tokens;
    doc["normalizer"] = nullptr;
    if (byte_level) {
        doc["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
        doc["decoder"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
        doc["model"] = {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"vocab", vocab},
                        {"merges", nlohmann::ordered_json::array({"\xC4\xA0 t", "h e"})}};
    } else {
        doc["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
        doc["decoder"] = {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}};
        doc["model"] = {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"},
                        {"max_input_chars_per_word", 100}, {"vocab", vocab}};
    }
    return doc.dump(2);
}

std::string unigram_tokenizer_json(const std::vector<std::string>& pieces) {
    auto vocab = nlohmann::ordered_json::array();
    for (std::size_t id = 0; id < pieces.size(); ++id) vocab.push_back({pieces[id], -static_cast<double>(id)});
    nlohmann::ordered_json doc;
    doc["version"] = "1.0";
    doc["added_tokens"] = nlohmann::ordered_json::array();
    doc["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}};
    doc["decoder"] = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}};
    doc["model"] = {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", vocab}, {"byte_fallback", true}};
    return doc.dump(2);
}

std::string vocab_json(const std::vector<std::string>& pieces) {
    nlohmann::ordered_json doc = nlohmann::ordered_json::object();
    for (std::size_t id = 0; id < pieces.size(); ++id) doc[pieces[id]] = id;
    return doc.dump();
}

}  // namespace samplescope::testing
