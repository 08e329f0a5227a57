// llama.cpp's /completion answer, whole or streamed (tools/server/README.md,
// "completion_probabilities"; ggml-org/llama.cpp tools/server/server-task.cpp
// completion_token_output::probs_vector_to_json and to_json):
//   current: [{id, token, bytes, logprob, top_logprobs: [{id, token, bytes, logprob}]}], with
//            post_sampling_probs: prob and top_probs instead (the chain's output, 0 filtered).
//            A probability of 0 is written as log(FLT_MIN) = -FLT_MAX (completion_token_output::logarithm).
//   older:   [{content, probs: [{tok_str, prob}]}] (examples/server/utils.hpp probs_vector_to_json of
//            2023-2024 releases), the probabilities the sampler's candidates held after the chain, 0 for
//            filtered ids; a lone byte of a longer character was written "byte: \xNN"
//            (tokens_to_output_formatted_string).
// The final answer carries generation_settings: the settings the server used.
#include "engine/base/number_text.h"
#include "engine/responses/response_readers.h"

namespace samplescope::response_detail {

namespace {

enum class Shape { Logprob, Prob, Legacy };

// "byte: \xE2" of the older server: the one byte it stands for.
std::string legacy_text(const std::string& text) {
    constexpr std::string_view prefix = "byte: \\x";
    if (text.size() == prefix.size() + 2 && std::string_view(text).substr(0, prefix.size()) == prefix) {
        const auto hex = [](char c) -> int {
            if (c >= '0' && c <= '9') return c - '0';
            if (c >= 'a' && c <= 'f') return c - 'a' + 10;
            if (c >= 'A' && c <= 'F') return c - 'A' + 10;
            return -1;
        };
        const int hi = hex(text[prefix.size()]);
        const int lo = hex(text[prefix.size() + 1]);
        if (hi >= 0 && lo >= 0) return std::string(1, static_cast<char>(hi * 16 + lo));
    }
    return text;
}

Shape shape_of(const Json& entry, const std::string& source, const std::string& where) {
    if (!entry.is_object()) fail(source, where + " must be an object, got " + type_name(entry));
    if (entry.contains("probs")) return Shape::Legacy;
    if (entry.contains("prob") || entry.contains("top_probs")) return Shape::Prob;
    if (entry.contains("logprob") || entry.contains("top_logprobs")) return Shape::Logprob;
    fail(source, where + " has neither logprob, prob nor probs");
}

struct EntryReader {
    const std::string& source;
    Shape shape;
    bool logits;

    double value(const Json& number, const std::string& where) const {
        const double x = number_value(number, source, where);
        if (shape != Shape::Logprob) return checked_probability(x, source, where);
        return logits ? checked_logit(x, source, where) : checked_logprob(x, source, where);
    }

    ResponseToken token(const Json& entry, const std::string& where, bool needs_value) const {
        if (!entry.is_object()) fail(source, where + " must be an object, got " + type_name(entry));
        ResponseToken token;
        if (shape == Shape::Legacy) {
            token.bytes = legacy_text(string_member(entry, "tok_str", source, where));
            token.value = value(entry.contains("prob") ? entry.at("prob") : Json(), at(where, "prob"));
            return token;
        }
        const std::string& text = string_member(entry, "token", source, where);
        const auto bytes = entry.find("bytes");
        token.bytes = bytes != entry.end() && !bytes->is_null() ? byte_array(*bytes, source, at(where, "bytes")) : text;
        if (const auto id = entry.find("id"); id != entry.end()) token.id = integer_value(*id, source, at(where, "id"));
        const char* key = shape == Shape::Prob ? "prob" : "logprob";
        const auto number = entry.find(key);
        if (number != entry.end() && !number->is_null()) {
            token.value = value(*number, at(where, key));
        } else if (needs_value) {
            fail(source, where + " has no \"" + key + "\"");
        }
        return token;
    }
};

void append_entries(Response& response, const Json& entries, const std::string& source, const std::string& where,
                    const ResponseLoadOptions& options, std::optional<Shape>& shape) {
    if (!entries.is_array()) fail(source, where + " must be an array, got " + type_name(entries));
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const std::string entry_where = at(where, i);
        const Shape this_shape = shape_of(entries[i], source, entry_where);
        if (shape && *shape != this_shape) {
            fail(source, entry_where + " mixes the forms of completion_probabilities (logprob, prob and the older probs)");
        }
        shape = this_shape;
        const EntryReader reader{source, this_shape, reads_logits(options, false)};
        ResponsePosition position;
        position.where = entry_where;
        const Json& entry = entries[i];
        if (this_shape == Shape::Legacy) {
            position.token.bytes = legacy_text(string_member(entry, "content", source, entry_where));
        } else {
            position.token = reader.token(entry, entry_where, true);
        }
        const char* list_key = this_shape == Shape::Legacy ? "probs" : this_shape == Shape::Prob ? "top_probs" : "top_logprobs";
        if (const auto list = entry.find(list_key); list != entry.end() && !list->is_null()) {
            if (!list->is_array()) fail(source, at(entry_where, list_key) + " must be an array, got " + type_name(*list));
            for (std::size_t k = 0; k < list->size(); ++k) {
                const std::string alt_where = at(at(entry_where, list_key), k);
                ResponseToken alternative = reader.token((*list)[k], alt_where, true);
                if (this_shape == Shape::Legacy && !(*list)[k].contains("prob")) fail(source, alt_where + " has no \"prob\"");
                position.top.push_back(std::move(alternative));
            }
        }
        finish_position(position, source);
        response.positions.push_back(std::move(position));
    }
}

void set_mode(Response& response, const std::optional<Shape>& shape) {
    if (!shape) return;
    response.format = *shape == Shape::Legacy ? ResponseFormat::LlamaCppLegacy : ResponseFormat::LlamaCpp;
    if (*shape == Shape::Logprob) {
        response.mode = "n_probs";
        response.mode_source = "its logprob and top_logprobs keys (post_sampling_probs false)";
    } else if (*shape == Shape::Prob) {
        response.mode = "post_sampling_probs";
        response.mode_source = "its prob and top_probs keys (post_sampling_probs true)";
    } else {
        response.mode = "post_sampling_probs";
        response.mode_source = "the older server's probs, taken from the sampler's candidates after the chain";
    }
}

void read_settings(Response& response, const Json& object, const std::string& source) {
    if (const auto settings = object.find("generation_settings"); settings != object.end() && settings->is_object()) {
        response.settings = read_request_settings(*settings, source, "generation_settings");
    }
    if (const auto stop = object.find("stop_type"); stop != object.end() && stop->is_string()) {
        response.finish_reason = stop->get<std::string>();
    }
}

}  // namespace

Response read_llamacpp(const Json& document, const std::string& source, const ResponseLoadOptions& options) {
    Response response;
    response.source = source;
    std::optional<Shape> shape;
    const Json& entries = array_member(document, "completion_probabilities", source, "the response");
    append_entries(response, entries, source, "completion_probabilities", options, shape);
    set_mode(response, shape);
    response.normalised = shape != Shape::Logprob || !reads_logits(options, false);
    read_settings(response, document, source);
    if (response.finish_reason.empty()) response.finish_reason = "stop";
    return response;
}

Response read_llamacpp_chunks(const ChunkStream& stream, const std::string& source, const ResponseLoadOptions& options) {
    Response response;
    response.source = source;
    std::optional<Shape> shape;
    bool stopped = false;
    for (const Chunk& chunk : stream.chunks) {
        const Json& value = chunk.value;
        if (value.contains("choices")) fail(source, chunk.where + ": an OpenAI chunk in a llama.cpp stream");
        const std::size_t before = response.positions.size();
        if (const auto entries = value.find("completion_probabilities"); entries != value.end() && !entries->is_null()) {
            append_entries(response, *entries, source, chunk.where + ": completion_probabilities", options, shape);
        }
        const auto content = value.find("content");
        const bool stop = value.contains("stop") && value.at("stop").is_boolean() && value.at("stop").get<bool>();
        // In a stream the final answer's content is "" (its text went out in the partial ones).
        if (!stop && content != value.end() && content->is_string() && !content->get<std::string>().empty() &&
            response.positions.size() == before) {
            fail(source, chunk.where + " carries text but no completion_probabilities for it");
        }
        if (stop) {
            stopped = true;
            read_settings(response, value, source);
        }
    }
    if (!stopped && !stream.done) {
        fail(source, "the stream stops before its end: no chunk with \"stop\": true (the last chunk is " +
                         stream.last_where + ")");
    }
    set_mode(response, shape);
    response.normalised = shape != Shape::Logprob || !reads_logits(options, false);
    if (response.finish_reason.empty()) response.finish_reason = "stop";
    return response;
}

}  // namespace samplescope::response_detail
