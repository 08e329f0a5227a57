// Hugging Face tokenizer.json (model.vocab plus added_tokens) and the plain
// vocab.json id map. Format reference: the tokenizers library's serialisation
// (model "type" BPE / WordPiece / WordLevel with a {piece: id} vocab, Unigram
// with a [[piece, score], ...] list whose index is the id).
#include <nlohmann/json.hpp>

#include "engine/io/vocabulary_readers.h"

namespace samplescope::detail {

namespace {

using Json = nlohmann::json;

std::string shortened(const std::string& text) { return text.size() <= 40 ? text : text.substr(0, 37) + "..."; }

bool has_type(const Json& component, const char* type) {
    if (!component.is_object()) return false;
    const auto found = component.find("type");
    if (found != component.end() && found->is_string() && found->get<std::string>() == type) return true;
    // A Sequence holds its parts one level down.
    for (const char* list : {"decoders", "pretokenizers"}) {
        const auto parts = component.find(list);
        if (parts == component.end() || !parts->is_array()) continue;
        for (const auto& part : *parts) {
            if (part.is_object() && part.contains("type") && part["type"].is_string() && part["type"].get<std::string>() == type) {
                return true;
            }
        }
    }
    return false;
}

std::uint64_t id_of(const Json& value, const std::string& piece, const ByteSource& source) {
    if (!value.is_number_unsigned()) {
        source.fail("the id of token \"" + shortened(piece) + "\" is not a non-negative integer");
    }
    return value.get<std::uint64_t>();
}

void read_id_map(const Json& map, Vocabulary& vocabulary, const ByteSource& source) {
    const std::size_t entries = map.size();
    for (const auto& [piece, id] : map.items()) {
        const std::uint64_t index = id_of(id, piece, source);
        if (index < vocabulary.size() && vocabulary.defined[index]) {
            source.fail("tokens \"" + shortened(vocabulary.pieces[index]) + "\" and \"" + shortened(piece) +
                        "\" share id " + std::to_string(index));
        }
        place_token(vocabulary, index, piece, false, entries, source);
    }
}

}  // namespace

Vocabulary read_tokenizer_json(const ByteSource& source) {
    const std::string text = source.read_all(kVocabularyTextLimit);
    Json doc;
    try {
        doc = Json::parse(text);
    } catch (const Json::exception&) {
        source.fail("malformed JSON (not a tokenizer.json or vocab.json)");
    }
    if (!doc.is_object()) source.fail("expected a JSON object (a tokenizer.json or a vocab.json {token: id} map)");
    Vocabulary vocabulary;
    if (!doc.contains("model")) {
        vocabulary.format = VocabularyFormat::VocabJson;
        read_id_map(doc, vocabulary, source);
        if (vocabulary.size() == 0) source.fail("the vocab.json map is empty");
        vocabulary.encoding = guess_encoding(vocabulary);
        return vocabulary;
    }

    vocabulary.format = VocabularyFormat::TokenizerJson;
    const Json& model = doc["model"];
    if (!model.is_object()) source.fail("\"model\" is not an object");
    const auto vocab = model.find("vocab");
    if (vocab == model.end()) source.fail("\"model\" has no \"vocab\"");
    std::string type = model.contains("type") && model["type"].is_string() ? model["type"].get<std::string>() : "";
    if (vocab->is_object()) {
        read_id_map(*vocab, vocabulary, source);
    } else if (vocab->is_array()) {
        // Unigram: the id is the position; each entry is [piece, score].
        const std::size_t entries = vocab->size();
        for (std::size_t id = 0; id < entries; ++id) {
            const Json& entry = (*vocab)[id];
            if (!entry.is_array() || entry.empty() || !entry[0].is_string()) {
                source.fail("\"model\".\"vocab\" entry " + std::to_string(id) + " is not a [piece, score] pair");
            }
            place_token(vocabulary, id, entry[0].get<std::string>(), false, entries, source);
        }
        if (type.empty()) type = "Unigram";
    } else {
        source.fail("\"model\".\"vocab\" is neither a {token: id} map nor a [[piece, score], ...] list");
    }

    const std::size_t model_entries = vocabulary.size();
    if (doc.contains("added_tokens") && !doc["added_tokens"].is_null()) {
        const Json& added = doc["added_tokens"];
        if (!added.is_array()) source.fail("\"added_tokens\" is not a list");
        for (const auto& token : added) {
            if (!token.is_object() || !token.contains("id") || !token.contains("content") || !token["content"].is_string()) {
                source.fail("an \"added_tokens\" entry lacks \"id\" or \"content\"");
            }
            const std::string content = token["content"].get<std::string>();
            // Added tokens may repeat a model id: what the tokenizer emits is the added one.
            place_token(vocabulary, id_of(token["id"], content, source), content, true, model_entries + added.size(), source);
        }
    }
    if (vocabulary.size() == 0) source.fail("the tokenizer's vocabulary is empty");

    const Json empty;
    const Json& pre = doc.contains("pre_tokenizer") ? doc["pre_tokenizer"] : empty;
    const Json& decoder = doc.contains("decoder") ? doc["decoder"] : empty;
    if (has_type(pre, "ByteLevel") || has_type(decoder, "ByteLevel")) {
        vocabulary.encoding = TokenEncoding::ByteLevel;
    } else if (type == "Unigram" || has_type(pre, "Metaspace") || has_type(decoder, "Metaspace") ||
               has_type(decoder, "ByteFallback")) {
        vocabulary.encoding = TokenEncoding::SentencePiece;
    } else if (type == "WordPiece" || type == "WordLevel") {
        vocabulary.encoding = TokenEncoding::Plain;
    } else {
        vocabulary.encoding = guess_encoding(vocabulary);
    }
    return vocabulary;
}

}  // namespace samplescope::detail
