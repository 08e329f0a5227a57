#include "engine/responses/response_loader.h"

#include <algorithm>

#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/io/token_display.h"
#include "engine/responses/response_readers.h"

namespace samplescope {

namespace response_detail {

void fail(const std::string& source, const std::string& message) {
    throw InputError("response", source + ": " + message);
}

std::string type_name(const Json& value) {
    if (value.is_null()) return "null";
    if (value.is_string()) return "a string";
    if (value.is_boolean()) return "a boolean";
    if (value.is_array()) return "an array";
    if (value.is_object()) return "an object";
    return "a number";
}

bool reads_logits(const ResponseLoadOptions& options, bool format_logits) {
    if (options.logprobs_mode.empty()) return format_logits;
    const LogprobModeInfo* mode = find_logprob_mode(options.logprobs_mode);
    return mode && mode->kind == LogprobKind::Logit;
}

std::string byte_array(const Json& value, const std::string& source, const std::string& where) {
    if (!value.is_array()) fail(source, where + " must be an array of bytes, got " + type_name(value));
    std::string out;
    out.reserve(value.size());
    for (std::size_t i = 0; i < value.size(); ++i) {
        const Json& b = value[i];
        if (!b.is_number_integer() || b.get<std::int64_t>() < 0 || b.get<std::int64_t>() > 255) {
            fail(source, at(where, i) + " must be a byte (an integer in [0, 255]), got " +
                             (b.is_number() ? b.dump() : type_name(b)));
        }
        out.push_back(static_cast<char>(b.get<std::int64_t>()));
    }
    return out;
}

const std::string& string_member(const Json& object, const char* key, const std::string& source, const std::string& where) {
    const auto it = object.find(key);
    if (it == object.end()) fail(source, where + " has no \"" + key + "\"");
    if (!it->is_string()) fail(source, at(where, key) + " must be a string, got " + type_name(*it));
    return it->get_ref<const std::string&>();
}

std::int64_t integer_value(const Json& value, const std::string& source, const std::string& where) {
    if (value.is_number_integer()) return value.get<std::int64_t>();
    if (value.is_number_unsigned()) fail(source, where + " is too large for an id: " + value.dump());
    fail(source, where + " must be an integer, got " + (value.is_number() ? value.dump() : type_name(value)));
}

double number_value(const Json& value, const std::string& source, const std::string& where) {
    if (!value.is_number()) fail(source, where + " must be a number, got " + type_name(value));
    return value.get<double>();
}

const Json& array_member(const Json& object, const char* key, const std::string& source, const std::string& where) {
    const auto it = object.find(key);
    if (it == object.end()) fail(source, where + " has no \"" + key + "\"");
    if (!it->is_array()) fail(source, at(where, key) + " must be an array, got " + type_name(*it));
    return *it;
}

void assemble_text(Response& response) {
    response.text.clear();
    for (auto& position : response.positions) {
        position.text_offset = response.text.size();
        response.text += position.token.bytes;
    }
}

namespace {

std::string_view trim_left(std::string_view text) {
    // A UTF-8 byte order mark, then white space.
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r' || text.front() == '\n')) {
        text.remove_prefix(1);
    }
    return text;
}

bool is_stream(std::string_view text) {
    text = trim_left(text);
    return text.substr(0, 5) == "data:" || text.substr(0, 6) == "event:" || text.substr(0, 1) == ":";
}

// Server-sent events (the `data:` lines servers stream): each data line one
// JSON chunk, `data: [DONE]` the end. Lines that are not data (event:, id:,
// comments) are skipped; a data line whose JSON is cut off is refused with its line.
ChunkStream parse_event_stream(std::string_view text, const std::string& source) {
    ChunkStream stream;
    std::size_t line_number = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        std::string_view line = text.substr(start, end - start);
        ++line_number;
        start = end + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.substr(0, 5) == "data:") {
            std::string_view payload = line.substr(5);
            while (!payload.empty() && payload.front() == ' ') payload.remove_prefix(1);
            const std::string where = "line " + std::to_string(line_number);
            if (stream.done) fail(source, where + ": a data line after data: [DONE]");
            if (payload == "[DONE]") {
                stream.done = true;
            } else {
                stream.chunks.push_back(Chunk{parse_json(payload, source, where), line_number, where});
                if (!stream.chunks.back().value.is_object()) {
                    fail(source, where + ": a chunk must be a JSON object, got " + type_name(stream.chunks.back().value));
                }
                stream.last_where = where;
            }
        }
        if (end == text.size()) break;
    }
    if (stream.chunks.empty()) fail(source, "the stream holds no data: chunks");
    return stream;
}

ChunkStream chunk_array(const Json& array, const std::string& source, const std::string& path) {
    ChunkStream stream;
    for (std::size_t i = 0; i < array.size(); ++i) {
        const std::string where = at(path, i);
        if (!array[i].is_object()) fail(source, where + " must be a JSON object (a chunk), got " + type_name(array[i]));
        stream.chunks.push_back(Chunk{array[i], 0, where});
        stream.last_where = where;
    }
    if (stream.chunks.empty()) fail(source, path + " is an empty array: no chunks");
    return stream;
}

bool is_llamacpp(const Json& object) {
    return object.contains("completion_probabilities") ||
           (object.contains("content") && object.contains("stop") && !object.contains("choices"));
}

Response read_stream(const ChunkStream& stream, const std::string& source, const ResponseLoadOptions& options) {
    const Json& first = stream.chunks.front().value;
    Response response;
    if (first.contains("choices")) {
        response = read_openai_chunks(stream, source, options);
    } else if (is_llamacpp(first)) {
        response = read_llamacpp_chunks(stream, source, options);
    } else {
        fail(source, stream.chunks.front().where + ": a chunk of no known server: expected OpenAI's \"choices\" or "
                                                   "llama.cpp's \"content\" and \"completion_probabilities\"");
    }
    response.streamed = true;
    return response;
}

Response read_document(const Json& document, const std::string& source, const ResponseLoadOptions& options,
                       const std::string& path) {
    if (document.is_array()) {
        if (!document.empty() && document.front().is_object() && document.front().contains("outputs")) {
            if (document.size() != 1) {
                fail(source, "holds " + std::to_string(document.size()) +
                                 " RequestOutputs; save the one to explain on its own (one request per file)");
            }
            return read_vllm(document.front(), source, options);
        }
        return read_stream(chunk_array(document, source, path.empty() ? "chunks" : path), source, options);
    }
    if (document.is_string()) {
        const auto& text = document.get_ref<const std::string&>();
        if (!is_stream(text)) fail(source, path + " is a string that is not a data: stream");
        return read_stream(parse_event_stream(text, source), source, options);
    }
    if (!document.is_object()) fail(source, "expected a JSON object or array, got " + type_name(document));
    if (document.contains("choices")) return read_openai(document, source, options);
    if (is_llamacpp(document)) return read_llamacpp(document, source, options);
    if (document.contains("outputs")) return read_vllm(document, source, options);
    fail(source, "not a response with logprobs this reader knows: expected OpenAI's \"choices\", llama.cpp's "
                 "\"completion_probabilities\", a vLLM RequestOutput's \"outputs\", or {\"request\", \"response\"}");
}

Response read_text(std::string_view text, const std::string& source, const ResponseLoadOptions& options) {
    if (is_stream(text)) return read_stream(parse_event_stream(text, source), source, options);
    const Json document = parse_json(text, source, "the response");
    if (document.is_object() && document.contains("response") && document.contains("request")) {
        Response response = read_document(document.at("response"), source, options, "response");
        // The request beside the response: what was asked. What the response
        // records itself (llama.cpp's generation_settings) is what the server
        // used, so it wins where both name a key.
        RequestSettings merged = read_request_settings(document.at("request"), source, "request");
        if (response.settings) {
            const RequestSettings& used = *response.settings;
            merged.values.insert(merged.values.end(), used.values.begin(), used.values.end());
            if (used.seed) merged.seed = used.seed;
            if (used.penalty_last_n) merged.penalty_last_n = used.penalty_last_n;
            if (used.post_sampling_probs) merged.post_sampling_probs = used.post_sampling_probs;
            if (used.logprobs_mode) merged.logprobs_mode = used.logprobs_mode;
            if (used.top_logprobs) merged.top_logprobs = used.top_logprobs;
            if (used.samplers) merged.samplers = used.samplers;
            merged.unmodelled.insert(merged.unmodelled.end(), used.unmodelled.begin(), used.unmodelled.end());
            merged.source = used.source + " over " + merged.source;
        }
        response.settings = std::move(merged);
        return response;
    }
    return read_document(document, source, options, "");
}

void check_memory_for_text(std::uint64_t bytes, const ResponseLoadOptions& options, const std::string& source) {
    const std::uint64_t budget = options.memory_limit_bytes ? options.memory_limit_bytes : default_memory_budget();
    // A parsed JSON document takes several times its text (a 9.6 MB response peaks at 76 MB
    // resident, docs/responses.md); 16 times leaves a margin.
    check_memory(saturating_mul(bytes, 16), budget, "reading " + source);
}

void check_options(const ResponseLoadOptions& options) {
    if (!options.logprobs_mode.empty() && !find_logprob_mode(options.logprobs_mode)) {
        std::string known;
        for (const auto& info : kLogprobModes) known += (known.empty() ? "" : ", ") + std::string(info.mode);
        throw InputError("logprobs_mode",
                         "unknown logprobs mode \"" + options.logprobs_mode + "\"; known: " + known);
    }
}

Response finish(Response response) {
    if (response.positions.empty()) fail(response.source, "holds no generated tokens with logprobs");
    // vLLM's OpenAI server lists the sampled token first and then the top N-1
    // (vllm/entrypoints/openai/serving_chat.py _get_top_logprobs over the
    // {sampled, top 1..N} dict of vllm/v1/engine/logprobs.py _make_logprob_dict):
    // seen as the token first everywhere, and somewhere first without being the largest.
    bool first_everywhere = true;
    bool first_below_top = false;
    for (const auto& position : response.positions) {
        // A dump with ranks says where the token stands; its order need not.
        if (position.top.empty() || position.rank) continue;
        first_everywhere = first_everywhere && position.token_listed_first;
        if (position.token_listed_first && position.token_in_top && *position.token_in_top > 0 &&
            *position.top[*position.token_in_top].value < *position.top.front().value) {
            first_below_top = true;
        }
    }
    response.sampled_listed_first = response.sampled_listed_first || (first_everywhere && first_below_top);
    if (response.sampled_listed_first) {
        response.notes.push_back("every alternatives list leads with the sampled token (vLLM's OpenAI server): a "
                                 "token listed last may sit anywhere below the others");
    }
    if (const auto vocab = response.vocab_size()) check_ids(response, *vocab);
    assemble_text(response);
    return response;
}

}  // namespace

}  // namespace response_detail

Response load_response_bytes(std::string_view bytes, const std::string& source, const ResponseLoadOptions& options) {
    using namespace response_detail;
    check_options(options);
    if (has_extension(source, ".npy") || has_extension(source, ".safetensors")) {
        return finish(read_hf_rows(nullptr, bytes, source, options));
    }
    check_memory_for_text(bytes.size(), options, source);
    Response response = read_text(bytes, source, options);
    response.source = source;
    return finish(std::move(response));
}

Response load_response_file(const std::string& path, const ResponseLoadOptions& options) {
    using namespace response_detail;
    check_options(options);
    const FileSource file(path);
    if (has_extension(path, ".npy") || has_extension(path, ".safetensors")) {
        return finish(read_hf_rows(&file, {}, path, options));
    }
    check_memory_for_text(file.size(), options, path);
    // A response is text; one of 1 GiB is far past any real one.
    const std::string text = file.read_all(1ULL << 30);
    Response response = read_text(text, path, options);
    response.source = path;
    return finish(std::move(response));
}

void label_response(Response& response, const Vocabulary& vocabulary) {
    const auto label = [&vocabulary](ResponseToken& token) {
        if (!token.bytes.empty() || !token.id || *token.id < 0 || static_cast<std::size_t>(*token.id) >= vocabulary.size()) return;
        token.bytes = token_bytes(vocabulary.pieces[static_cast<std::size_t>(*token.id)], vocabulary.encoding);
    };
    for (auto& position : response.positions) {
        label(position.token);
        for (auto& alternative : position.top) label(alternative);
    }
    response_detail::assemble_text(response);
}

}  // namespace samplescope
