#include "engine/responses/response.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"

namespace samplescope {

const char* response_format_name(ResponseFormat format) {
    switch (format) {
        case ResponseFormat::OpenAiChat: return "openai_chat";
        case ResponseFormat::OpenAiCompletion: return "openai_completion";
        case ResponseFormat::LlamaCpp: return "llamacpp";
        case ResponseFormat::LlamaCppLegacy: return "llamacpp_legacy";
        case ResponseFormat::VllmOffline: return "vllm_offline";
        case ResponseFormat::HfRows: return "hf_rows";
    }
    return "?";
}

namespace response_detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

[[noreturn]] void fail(const std::string& source, const std::string& message) {
    throw InputError("response", source + ": " + message);
}

// Two numbers of one token read from two places of a response: equal as
// printed, within float32's rounding.
bool same_value(double a, double b) {
    if (a == b) return true;
    if (std::isinf(a) || std::isinf(b)) return false;
    return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::max(std::fabs(a), std::fabs(b)));
}

std::string shown(const std::string& bytes) {
    const std::string text = escape_text(bytes);
    return text.size() <= 40 ? text : text.substr(0, 37) + "...";
}

bool plain_text(const std::string& bytes) {
    // U+FFFD: a server's stand-in for bytes that are not whole characters,
    // which several distinct tokens share.
    return utf8_valid_prefix(bytes) == bytes.size() && bytes.find("\xEF\xBF\xBD") == std::string::npos;
}

}  // namespace

std::string at(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }
std::string at(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

double checked_logprob(double value, const std::string& source, const std::string& where) {
    if (std::isnan(value)) fail(source, where + " is NaN, not a log probability");
    if (value == kOpenAiMinusInf || value == kLlamaCppMinusInf || value == -kInf) return -kInf;
    if (std::isinf(value)) fail(source, where + " is +inf, not a log probability");
    if (value > 0.0) fail(source, where + " is " + format_number(value) + ": a log probability is at most 0");
    return value;
}

double checked_probability(double value, const std::string& source, const std::string& where) {
    if (std::isnan(value)) fail(source, where + " is NaN, not a probability");
    if (!(value >= 0.0 && value <= 1.0)) {
        fail(source, where + " is " + format_number(value) + ": a probability is in [0, 1]");
    }
    return value == 0.0 ? -kInf : std::log(value);
}

double checked_logit(double value, const std::string& source, const std::string& where) {
    if (std::isnan(value)) fail(source, where + " is NaN, not a logit");
    if (value == kOpenAiMinusInf || value == kLlamaCppMinusInf) return -kInf;
    if (value == kInf) fail(source, where + " is +inf, not a logit");
    return value;
}

void finish_position(ResponsePosition& position, const std::string& source) {
    auto& top = position.top;
    const std::string where = position.where;
    std::set<std::int64_t> ids;
    for (std::size_t i = 0; i < top.size(); ++i) {
        if (!top[i].value) fail(source, where + ": alternative " + std::to_string(i) + " has no number");
        if (top[i].id && !ids.insert(*top[i].id).second) {
            fail(source, where + ": the alternatives list id " + std::to_string(*top[i].id) + " twice");
        }
    }
    // As given, before sorting: vLLM's lists lead with the sampled token (Response::sampled_listed_first).
    if (!top.empty()) {
        const ResponseToken& first = top.front();
        position.token_listed_first = position.token.id ? first.id == position.token.id
                                                        : (!first.id && first.bytes == position.token.bytes &&
                                                           (!position.token.value || same_value(*first.value, *position.token.value)));
    }
    std::stable_sort(top.begin(), top.end(),
                     [](const ResponseToken& a, const ResponseToken& b) { return *a.value > *b.value; });
    auto& token = position.token;
    position.token_in_top.reset();
    const auto describe = [&token]() {
        return token.id ? "the token (id " + std::to_string(*token.id) + ")" : "the token \"" + shown(token.bytes) + "\"";
    };
    if (token.id) {
        for (std::size_t i = 0; i < top.size(); ++i) {
            if (top[i].id != token.id) continue;
            if (token.value && !same_value(*token.value, *top[i].value)) {
                fail(source, where + ": " + describe() + " has " + format_number(*token.value) +
                                 " but its entry among the alternatives has " + format_number(*top[i].value));
            }
            position.token_in_top = i;
        }
    } else {
        std::vector<std::size_t> candidates;
        for (std::size_t i = 0; i < top.size(); ++i) {
            if (!top[i].id && top[i].bytes == token.bytes) candidates.push_back(i);
        }
        for (const std::size_t i : candidates) {
            if (!token.value || same_value(*token.value, *top[i].value)) {
                if (!position.token_in_top) position.token_in_top = i;
            }
        }
        if (token.value && !position.token_in_top && candidates.size() == 1 && plain_text(token.bytes)) {
            fail(source, where + ": " + describe() + " has " + format_number(*token.value) +
                             " but its entry among the alternatives has " + format_number(*top[candidates[0]].value));
        }
        // Without a number of its own, a token named once among the alternatives is that entry.
        if (!token.value && candidates.size() > 1) position.token_in_top.reset();
    }
    if (position.token_in_top) {
        if (!token.value) token.value = top[*position.token_in_top].value;
        if (!token.id) token.id = top[*position.token_in_top].id;
    } else if (token.value && !top.empty() && *token.value > *top.back().value &&
               !same_value(*token.value, *top.back().value)) {
        fail(source, where + ": " + describe() + " has " + format_number(*token.value) +
                         ", above the lowest alternative shown (" + format_number(*top.back().value) +
                         "), but is not among the alternatives");
    }
}

void check_ids(const Response& response, std::size_t vocab_size) {
    const auto check = [&](const std::optional<std::int64_t>& id, const std::string& where) {
        if (id && (*id < 0 || static_cast<std::uint64_t>(*id) >= vocab_size)) {
            fail(response.source, where + ": id " + std::to_string(*id) + " is outside the vocabulary [0, " +
                                      std::to_string(vocab_size) + ")");
        }
    };
    for (const auto& position : response.positions) {
        check(position.token.id, position.where);
        for (const auto& alternative : position.top) check(alternative.id, position.where + " (an alternative)");
    }
}

std::optional<std::int64_t> token_id_text(std::string_view text) {
    constexpr std::string_view prefix = "token_id:";
    if (text.substr(0, prefix.size()) != prefix) return std::nullopt;
    const auto integer = parse_integer_text(text.substr(prefix.size()));
    if (!integer || integer->negative || integer->magnitude > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<std::int64_t>(integer->magnitude);
}

nlohmann::ordered_json parse_json(std::string_view text, const std::string& source, const std::string& what) {
    constexpr int kMaxDepth = 64;
    // The callback sees each nesting step as it is parsed: a hostile depth is
    // refused at its 65th level rather than built.
    const nlohmann::ordered_json::parser_callback_t depth_check =
        [&](int depth, nlohmann::ordered_json::parse_event_t, nlohmann::ordered_json&) {
            if (depth > kMaxDepth) {
                fail(source, what + " is nested more than " + std::to_string(kMaxDepth) + " levels deep");
            }
            return true;
        };
    try {
        return nlohmann::ordered_json::parse(text, depth_check);
    } catch (const nlohmann::ordered_json::parse_error& error) {
        // Python's json module writes NaN and Infinity, which JSON does not have.
        const std::size_t from = error.byte > 10 ? error.byte - 10 : 0;
        const std::string_view near = text.substr(std::min(from, text.size()), 20);
        if (near.find("NaN") != std::string_view::npos || near.find("Infinity") != std::string_view::npos) {
            fail(source, what + ": a NaN or Infinity number at byte " + std::to_string(error.byte) +
                             ", which JSON does not have and no logprob may be");
        }
        const bool at_end = error.byte >= text.size();
        fail(source, what + ": malformed JSON at byte " + std::to_string(error.byte) + (at_end ? " (it ends early)" : ""));
    } catch (const nlohmann::ordered_json::out_of_range&) {
        // The parser's one range error (406): a number such as 1e999.
        fail(source, what + " holds a number outside the range of a double");
    }
}

}  // namespace response_detail

}  // namespace samplescope
