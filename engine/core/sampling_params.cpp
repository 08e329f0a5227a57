#include "engine/core/sampling_params.h"

#include <charconv>
#include <cmath>
#include <random>

#include "engine/core/gates.h"
#include "engine/base/input_error.h"

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
    }
    return 0.0;
}

std::optional<std::string> param_error(Param param, double value) {
    const auto& info = param_info(param);
    bool ok = std::isfinite(value);
    switch (param) {
        case Param::RepetitionPenalty: ok = ok && value > 0.0; break;
        case Param::PresencePenalty:
        case Param::FrequencyPenalty: break;
        case Param::Temperature: ok = ok && value >= 0.0; break;
        case Param::TopK: ok = ok && value >= 0.0 && value == std::floor(value) && value <= 9.0e15; break;
        case Param::TopP:
        case Param::MinP: ok = ok && value >= 0.0 && value <= 1.0; break;
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
