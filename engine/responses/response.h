// A server's answer with logprobs, read into one shape whatever its format
// (docs/responses.md): the generated tokens and, for each, the numbers the
// response shows for it and for the top alternatives at its position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/io/logits_loader.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/responses/request_settings.h"

namespace samplescope {

enum class ResponseFormat {
    OpenAiChat,        // choices[].logprobs.content[] (token, logprob, bytes, top_logprobs)
    OpenAiCompletion,  // choices[].logprobs {tokens, token_logprobs, top_logprobs, text_offset}
    LlamaCpp,          // /completion completion_probabilities[] {id, token, bytes, logprob | prob, top_logprobs | top_probs}
    LlamaCppLegacy,    // older /completion completion_probabilities[] {content, probs: [{tok_str, prob}]}
    VllmOffline,       // a RequestOutput's logprobs: [{id: {logprob, rank, decoded_token}}]
    HfRows,            // generate()'s scores or logits, [T, V], and the generated ids
};
// "openai_chat", "openai_completion", "llamacpp", "llamacpp_legacy", "vllm_offline", "hf_rows".
const char* response_format_name(ResponseFormat format);

// One token as a response names it.
struct ResponseToken {
    std::optional<std::int64_t> id;
    std::string bytes;  // its text as bytes: the format's bytes array where it has one, else its string
    // Its number as a natural log: a logprob as given, log(p) for a probability,
    // the logit itself for a logit. -inf for a probability of 0 and for the
    // servers' stand-ins for -inf (-9999 of OpenAI and vLLM, -FLT_MAX of
    // llama.cpp). Absent where the response gives none (null).
    std::optional<double> value;
};

struct ResponsePosition {
    ResponseToken token;             // the generated token
    std::vector<ResponseToken> top;  // the alternatives shown, by value descending (ties in the order given)
    std::optional<std::size_t> token_in_top;  // the token's entry in `top`, when listed
    bool token_listed_first = false;          // the file listed the token first among the alternatives
    std::optional<std::int64_t> rank;  // the engine's own 1-based rank of the token (vLLM's Logprob.rank)
    std::size_t text_offset = 0;       // where its bytes start in Response::text
    std::string where;                 // where the file holds it, for messages: "choices[0].logprobs.content[12]"
};

struct Response {
    ResponseFormat format = ResponseFormat::OpenAiChat;
    std::string source;                 // the file, as errors name it
    bool streamed = false;              // read from `data:` chunks
    std::string text;                   // every token's bytes in order
    std::vector<ResponsePosition> positions;
    // The numbers are probabilities or log probabilities (normalised) rather
    // than logits, as the format's keys say (a logprobs mode may say otherwise).
    bool normalised = true;
    // The logprobs mode the file itself names (engine/pipelines/pipeline_presets.h
    // kLogprobModes): vLLM's logprobs_mode, llama.cpp's prob keys, the HF tensor.
    std::string mode;
    std::string mode_source;            // where the file says it
    // A top list that always holds the sampled token first, then the top N-1
    // (vLLM's OpenAI server takes the first N entries of {sampled, top 1..N}).
    bool sampled_listed_first = false;
    // generate()'s rows ([T, V], row t the position t): the whole distribution.
    std::shared_ptr<const LogitsMatrix> rows;
    std::vector<std::int64_t> prompt_ids;  // the prompt's ids, where the file carries them
    std::string finish_reason;
    std::optional<RequestSettings> settings;  // sampling settings the file records
    std::vector<std::string> notes;           // what the reader chose or mapped, one line each

    std::optional<std::size_t> vocab_size() const {
        return rows ? std::optional<std::size_t>(rows->cols) : std::nullopt;
    }
};

namespace response_detail {

// Where each field sits, for messages: "choices[0].logprobs.content[12].top_logprobs[3].logprob".
std::string at(const std::string& path, std::size_t index);
std::string at(const std::string& path, const std::string& key);

// The stand-ins servers write for -inf, read back as -inf.
inline constexpr double kOpenAiMinusInf = -9999.0;           // OpenAI, vLLM: max(logprob, -9999.0)
inline constexpr double kLlamaCppMinusInf = -3.4028234663852886e38;  // llama.cpp: std::numeric_limits<float>::lowest()

// A logprob as a response gives it: a finite number <= 0, or a stand-in for
// -inf. Throws InputError(source) naming `where` for NaN, inf or a positive value.
double checked_logprob(double value, const std::string& source, const std::string& where);
// A probability in [0, 1], as its natural log.
double checked_probability(double value, const std::string& source, const std::string& where);
// A logit: any finite number or -inf.
double checked_logit(double value, const std::string& source, const std::string& where);

// Sorts the top list, finds the token in it and checks the two agree. Throws
// InputError naming the source and position.where for a duplicate id, a
// token whose number differs from its own entry, or one above the listed
// values but absent from them.
void finish_position(ResponsePosition& position, const std::string& source);

// Parses JSON text (an object or array nested at most 64 deep); InputError
// "SOURCE: WHAT: malformed JSON at byte N" otherwise.
nlohmann::ordered_json parse_json(std::string_view text, const std::string& source, const std::string& what);

// Checks every id of the response against a vocabulary of `vocab_size`.
void check_ids(const Response& response, std::size_t vocab_size);

// The id a token text names: "token_id:123" (vLLM's return_tokens_as_token_ids).
std::optional<std::int64_t> token_id_text(std::string_view text);

}  // namespace response_detail

}  // namespace samplescope
