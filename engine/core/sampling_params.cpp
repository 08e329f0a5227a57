#include "engine/core/sampling_params.h"

#include <charconv>
#include <cmath>
#include <random>

#include "engine/core/gates.h"
#include "engine/base/input_error.h"
#include "engine/base/number_text.h"

namespace samplescope {

std::optional<Param> param_from_key(std::string_view key) {
    for (const auto& info : kParams) {
        if (info.key == key) return info.param;
    }
    return std::nullopt;
}

double param_value(const SamplingParams& params, Param param) {
    switch (param) {
        case Param::RepetitionPenalty: return params.repetition_penalty;
        case Param::PresencePenalty: return params.presence_penalty;
        case Param::FrequencyPenalty: return params.frequency_penalty;
        case Param::Temperature: return params.temperature;
        case Param::TopK: return static_cast<double>(params.top_k);
        case Param::TopP: return params.top_p;
        case Param::MinP: return params.min_p;
        case Param::TypicalP: return params.typical_p;
        case Param::TopNSigma: return params.top_n_sigma;
    }
    return 0.0;
}

std::optional<std::string> param_error(Param param, double value) {
    const auto& info = param_info(param);
    bool ok = std::isfinite(value);
    switch (param) {
        case Param::RepetitionPenalty: ok = ok && value > 0.0; break;
        case Param::PresencePenalty:
        case Param::FrequencyPenalty:
        case Param::TopNSigma: break;
        case Param::Temperature: ok = ok && value >= 0.0; break;
        case Param::TopK: ok = ok && value >= 0.0 && value == std::floor(value) && value <= 9.0e15; break;
        case Param::TopP:
        case Param::MinP:
        case Param::TypicalP: ok = ok && value >= 0.0 && value <= 1.0; break;
    }
    if (ok) return std::nullopt;
    return std::string(info.key) + " must be " + std::string(info.valid_range) + ", got " + format_number(value);
}

void set_param(SamplingParams& params, Param param, double value) {
    if (auto error = param_error(param, value)) throw InputError(std::string(param_info(param).key), *error);
    switch (param) {
        case Param::RepetitionPenalty: params.repetition_penalty = value; break;
        case Param::PresencePenalty: params.presence_penalty = value; break;
        case Param::FrequencyPenalty: params.frequency_penalty = value; break;
        case Param::Temperature: params.temperature = value; break;
        case Param::TopK: params.top_k = static_cast<std::int64_t>(value); break;
        case Param::TopP: params.top_p = value; break;
        case Param::MinP: params.min_p = value; break;
        case Param::TypicalP: params.typical_p = value; break;
        case Param::TopNSigma: params.top_n_sigma = value; break;
    }
}

void validate(const SamplingParams& params) {
    for (const auto& info : kParams) {
        if (info.param == Param::TopK) {
            // top_k is an integer field: check it without a lossy trip through double.
            if (params.top_k < 0) {
                throw InputError("top_k", "top_k must be an integer >= 0, got " + std::to_string(params.top_k));
            }
            continue;
        }
        if (auto error = param_error(info.param, param_value(params, info.param))) {
            throw InputError(std::string(info.key), *error);
        }
    }
    for (const auto& entry : params.logit_bias) {
        if (entry.id < 0) {
            throw InputError("logit_bias", "logit_bias id must be an integer >= 0, got " + std::to_string(entry.id));
        }
        if (!std::isfinite(entry.bias) && entry.bias != -HUGE_VAL) {
            throw InputError("logit_bias",
                             "logit_bias bias must be a finite number or -inf, got " + format_number(entry.bias));
        }
    }
}

bool is_greedy(const SamplingParams& params) { return gate_greedy(params.temperature); }
bool uses_repetition_penalty(const SamplingParams& params) { return gate_repetition(params.repetition_penalty); }
bool uses_presence_frequency(const SamplingParams& params) {
    return gate_presence_frequency(params.presence_penalty, params.frequency_penalty);
}
bool uses_temperature(const SamplingParams& params) { return gate_temperature(params.temperature); }
bool uses_top_k(const SamplingParams& params, std::size_t vocab_size) {
    return vocab_size <= static_cast<std::size_t>(INT64_MAX) &&
           gate_top_k(params.top_k, static_cast<std::int64_t>(vocab_size));
}
bool uses_top_p(const SamplingParams& params) { return gate_top_p(params.top_p); }
bool uses_min_p(const SamplingParams& params) { return gate_min_p(params.min_p); }
bool uses_typical_p(const SamplingParams& params) { return gate_typical_p(params.typical_p); }
bool uses_top_n_sigma(const SamplingParams& params) { return gate_top_n_sigma(params.top_n_sigma); }

namespace {

std::string_view trim_blank(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

}  // namespace

std::vector<LogitBias> parse_logit_bias(std::string_view text) {
    std::vector<LogitBias> out;
    if (trim_blank(text).empty()) return out;
    const auto bad = [&](const std::string& what) {
        return InputError("logit_bias", "logit_bias " + what + " in \"" + std::string(text) + "\"");
    };
    std::size_t start = 0;
    std::size_t position = 0;
    while (true) {
        const auto comma = text.find(',', start);
        const std::string_view item =
            trim_blank(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        if (item.empty()) throw bad("has an empty item at position " + std::to_string(position));
        const auto colon = item.find(':');
        if (colon == std::string_view::npos) {
            throw bad("item \"" + std::string(item) + "\" must be id:bias");
        }
        const std::string_view id_text = trim_blank(item.substr(0, colon));
        const std::string_view bias_text = trim_blank(item.substr(colon + 1));
        const auto id = parse_integer_text(id_text);
        if (!id || id->negative || id->magnitude > static_cast<std::uint64_t>(INT64_MAX)) {
            throw bad("id must be an integer >= 0, got \"" + std::string(id_text) + "\"");
        }
        const auto bias = parse_real(bias_text);
        const bool ok = bias && !real_overflows(bias_text) && (std::isfinite(*bias) || *bias == -HUGE_VAL);
        if (!ok) throw bad("bias must be a finite number or -inf, got \"" + std::string(bias_text) + "\"");
        out.push_back(LogitBias{static_cast<std::int64_t>(id->magnitude), *bias});
        if (comma == std::string_view::npos) break;
        start = comma + 1;
        ++position;
    }
    return out;
}

std::string format_logit_bias(const std::vector<LogitBias>& bias) {
    std::string out;
    for (const auto& entry : bias) {
        if (!out.empty()) out += ",";
        out += std::to_string(entry.id) + ":" + format_number(entry.bias);
    }
    return out;
}

void check_logit_bias(const std::vector<LogitBias>& bias, std::size_t vocab_size) {
    for (const auto& entry : bias) {
        if (static_cast<std::uint64_t>(entry.id) >= vocab_size) {
            throw InputError("logit_bias", "logit_bias id " + std::to_string(entry.id) + " is outside [0, " +
                                               std::to_string(vocab_size) + ") for V = " +
                                               std::to_string(vocab_size));
        }
    }
}

bool uses_logit_bias(const SamplingParams& params) { return !params.logit_bias.empty(); }

std::uint64_t choose_seed() {
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) | device();
}

std::uint64_t parse_seed(std::string_view text) {
    std::uint64_t value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end) {
        throw InputError("seed", "seed must be a decimal integer in [0, 18446744073709551615], got \"" +
                                     std::string(text) + "\"");
    }
    return value;
}

}  // namespace samplescope
