// OpenAI's two response shapes, whole and streamed, as OpenAI documents them
// and as vLLM, SGLang and llama.cpp's OpenAI endpoints write them:
//   chat:        choices[].logprobs.content[] = {token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}
//                (openai/openai-python src/openai/types/chat/chat_completion_token_logprob.py; streamed as
//                chat.completion.chunk with choices[].delta, chat_completion_chunk.py)
//   completions: choices[].logprobs = {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}
//                (src/openai/types/completion_choice.py)
// llama.cpp's endpoint adds "id" to each entry; vLLM with return_tokens_as_token_ids writes "token_id:N".
#include <cmath>

#include "engine/responses/response_readers.h"

namespace samplescope::response_detail {

namespace {

struct ValueReader {
    const std::string& source;
    bool logits;
    std::optional<double> operator()(const Json& value, const std::string& where) const {
        if (value.is_null()) return std::nullopt;
        const double x = number_value(value, source, where);
        return logits ? checked_logit(x, source, where) : checked_logprob(x, source, where);
    }
};

ResponseToken chat_entry(const Json& item, const std::string& source, const std::string& where, const ValueReader& read) {
    if (!item.is_object()) fail(source, where + " must be an object, got " + type_name(item));
    ResponseToken token;
    const std::string& text = string_member(item, "token", source, where);
    const auto bytes = item.find("bytes");
    token.bytes = bytes != item.end() && !bytes->is_null() ? byte_array(*bytes, source, at(where, "bytes")) : text;
    if (const auto id = item.find("id"); id != item.end() && !id->is_null()) {
        token.id = integer_value(*id, source, at(where, "id"));
    } else {
        token.id = token_id_text(text);
    }
    if (const auto value = item.find("logprob"); value != item.end()) token.value = read(*value, at(where, "logprob"));
    return token;
}

ResponsePosition chat_position(const Json& item, const std::string& source, const std::string& where,
                               const ValueReader& read) {
    ResponsePosition position;
    position.where = where;
    position.token = chat_entry(item, source, where, read);
    if (const auto top = item.find("top_logprobs"); top != item.end() && !top->is_null()) {
        if (!top->is_array()) fail(source, at(where, "top_logprobs") + " must be an array, got " + type_name(*top));
        for (std::size_t i = 0; i < top->size(); ++i) {
            const std::string entry_where = at(at(where, "top_logprobs"), i);
            position.top.push_back(chat_entry((*top)[i], source, entry_where, read));
            if (!position.top.back().value) fail(source, at(entry_where, "logprob") + " is missing or null");
        }
    }
    return position;
}

void append_chat_content(Response& response, const Json& logprobs, const std::string& source, const std::string& where,
                         const ValueReader& read) {
    if (!logprobs.is_object()) fail(source, where + " must be an object, got " + type_name(logprobs));
    const auto content = logprobs.find("content");
    if (content == logprobs.end() || content->is_null()) return;
    if (!content->is_array()) fail(source, at(where, "content") + " must be an array, got " + type_name(*content));
    for (std::size_t i = 0; i < content->size(); ++i) {
        response.positions.push_back(chat_position((*content)[i], source, at(at(where, "content"), i), read));
    }
}

void append_completion_logprobs(Response& response, const Json& logprobs, const std::string& source,
                                const std::string& where, const ValueReader& read) {
    if (!logprobs.is_object()) fail(source, where + " must be an object, got " + type_name(logprobs));
    const Json& tokens = array_member(logprobs, "tokens", source, where);
    const Json& values = array_member(logprobs, "token_logprobs", source, where);
    const auto top_it = logprobs.find("top_logprobs");
    const bool has_top = top_it != logprobs.end() && !top_it->is_null();
    if (has_top && !top_it->is_array()) {
        fail(source, at(where, "top_logprobs") + " must be an array, got " + type_name(*top_it));
    }
    const auto count_check = [&](const Json& array, const char* key) {
        if (array.size() != tokens.size()) {
            fail(source, at(where, key) + " has " + std::to_string(array.size()) + " entries for " +
                             std::to_string(tokens.size()) + " tokens");
        }
    };
    count_check(values, "token_logprobs");
    if (has_top) count_check(*top_it, "top_logprobs");
    if (const auto offsets = logprobs.find("text_offset"); offsets != logprobs.end() && offsets->is_array()) {
        count_check(*offsets, "text_offset");
    }
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        ResponsePosition position;
        position.where = at(at(where, "tokens"), i);
        if (!tokens[i].is_string()) fail(source, position.where + " must be a string, got " + type_name(tokens[i]));
        const auto& text = tokens[i].get_ref<const std::string&>();
        position.token.bytes = text;
        position.token.id = token_id_text(text);
        position.token.value = read(values[i], at(at(where, "token_logprobs"), i));
        if (has_top && !(*top_it)[i].is_null()) {
            const Json& entries = (*top_it)[i];
            const std::string entries_where = at(at(where, "top_logprobs"), i);
            if (!entries.is_object()) fail(source, entries_where + " must be an object of token: logprob, got " + type_name(entries));
            for (const auto& [key, value] : entries.items()) {
                ResponseToken entry;
                entry.bytes = key;
                entry.id = token_id_text(key);
                entry.value = read(value, at(entries_where, key));
                if (!entry.value) fail(source, at(entries_where, key) + " is null");
                position.top.push_back(std::move(entry));
            }
        }
        response.positions.push_back(std::move(position));
    }
}

// The choice asked for: the entry whose "index" is `choice` (positionally when entries carry none).
const Json* find_choice(const Json& choices, std::size_t choice, const std::string& source, const std::string& where) {
    for (std::size_t i = 0; i < choices.size(); ++i) {
        const Json& entry = choices[i];
        if (!entry.is_object()) fail(source, at(where, i) + " must be an object, got " + type_name(entry));
        const auto index = entry.find("index");
        if (index == entry.end() ? i == choice : (index->is_number_integer() && index->get<std::int64_t>() >= 0 &&
                                                  static_cast<std::size_t>(index->get<std::int64_t>()) == choice)) {
            return &entry;
        }
    }
    return nullptr;
}

void finish_all(Response& response, const std::string& source) {
    for (auto& position : response.positions) finish_position(position, source);
}

}  // namespace

Response read_openai(const Json& document, const std::string& source, const ResponseLoadOptions& options) {
    Response response;
    response.source = source;
    const ValueReader read{source, reads_logits(options, false)};
    response.normalised = !read.logits;
    const Json& choices = array_member(document, "choices", source, "the response");
    const Json* choice = find_choice(choices, options.choice, source, "choices");
    if (!choice) {
        fail(source, "choices has no choice " + std::to_string(options.choice) + " (it holds " +
                         std::to_string(choices.size()) + ")");
    }
    const std::string where = at("choices", options.choice);
    const auto logprobs = choice->find("logprobs");
    if (logprobs == choice->end() || logprobs->is_null()) {
        fail(source, at(where, "logprobs") + " is missing or null: the request did not ask for logprobs");
    }
    if (const auto reason = choice->find("finish_reason"); reason != choice->end() && reason->is_string()) {
        response.finish_reason = reason->get<std::string>();
    }
    if (logprobs->is_object() && logprobs->contains("tokens")) {
        response.format = ResponseFormat::OpenAiCompletion;
        append_completion_logprobs(response, *logprobs, source, at(where, "logprobs"), read);
    } else {
        response.format = ResponseFormat::OpenAiChat;
        append_chat_content(response, *logprobs, source, at(where, "logprobs"), read);
        if (response.positions.empty()) fail(source, at(at(where, "logprobs"), "content") + " holds no tokens");
    }
    finish_all(response, source);
    return response;
}

Response read_openai_chunks(const ChunkStream& stream, const std::string& source, const ResponseLoadOptions& options) {
    Response response;
    response.source = source;
    const ValueReader read{source, reads_logits(options, false)};
    response.normalised = !read.logits;
    std::optional<ResponseFormat> format;
    for (const Chunk& chunk : stream.chunks) {
        const auto choices = chunk.value.find("choices");
        if (choices == chunk.value.end()) fail(source, chunk.where + ": a chunk without \"choices\" in an OpenAI stream");
        if (!choices->is_array()) fail(source, chunk.where + ": choices must be an array, got " + type_name(*choices));
        const Json* choice = find_choice(*choices, options.choice, source, chunk.where + ": choices");
        if (!choice) continue;  // another choice's chunk, or the usage chunk
        const std::string where = chunk.where + ": " + at("choices", options.choice);
        const bool chat = choice->contains("delta");
        const ResponseFormat this_format = chat ? ResponseFormat::OpenAiChat : ResponseFormat::OpenAiCompletion;
        if (format && *format != this_format) fail(source, where + " mixes chat and completion chunks");
        format = this_format;
        const auto logprobs = choice->find("logprobs");
        const bool has_logprobs = logprobs != choice->end() && !logprobs->is_null();
        // Text that arrives without its logprobs would leave the tokens short.
        std::string text;
        if (chat) {
            const Json& delta = choice->at("delta");
            if (const auto content = delta.find("content"); content != delta.end() && content->is_string()) {
                text = content->get<std::string>();
            }
        } else if (const auto t = choice->find("text"); t != choice->end() && t->is_string()) {
            text = t->get<std::string>();
        }
        const std::size_t before = response.positions.size();
        if (has_logprobs) {
            if (chat) {
                append_chat_content(response, *logprobs, source, at(where, "logprobs"), read);
            } else {
                append_completion_logprobs(response, *logprobs, source, at(where, "logprobs"), read);
            }
        }
        if (!text.empty() && response.positions.size() == before) {
            fail(source, where + " carries text but no logprobs for it");
        }
        if (const auto reason = choice->find("finish_reason"); reason != choice->end() && reason->is_string()) {
            response.finish_reason = reason->get<std::string>();
        }
    }
    if (!format) fail(source, "the stream holds no chunk of choice " + std::to_string(options.choice));
    response.format = *format;
    if (!stream.done && response.finish_reason.empty()) {
        fail(source, "the stream stops before its end: no data: [DONE] and no finish_reason (the last chunk is " +
                         stream.last_where + ")");
    }
    finish_all(response, source);
    return response;
}

}  // namespace samplescope::response_detail
