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
        case Param::MinKeep: return static_cast<double>(params.min_keep);
        case Param::DynatempRange: return params.dynatemp_range;
        case Param::DynatempExponent: return params.dynatemp_exponent;
        case Param::XtcProbability: return params.xtc_probability;
        case Param::XtcThreshold: return params.xtc_threshold;
        case Param::DryMultiplier: return params.dry_multiplier;
        case Param::DryBase: return params.dry_base;
        case Param::DryAllowedLength: return static_cast<double>(params.dry_allowed_length);
        case Param::DryPenaltyLastN: return static_cast<double>(params.dry_penalty_last_n);
        case Param::Mirostat: return static_cast<double>(params.mirostat);
        case Param::MirostatTau: return params.mirostat_tau;
        case Param::MirostatEta: return params.mirostat_eta;
    }
    return 0.0;
}

std::optional<std::string> param_error(Param param, double value) {
    const auto& info = param_info(param);
    bool ok = std::isfinite(value);
    const bool whole = value == std::floor(value) && std::fabs(value) <= 9.0e15;
    switch (param) {
        case Param::RepetitionPenalty: ok = ok && value > 0.0; break;
        case Param::PresencePenalty:
        case Param::FrequencyPenalty:
        case Param::TopNSigma: break;
        case Param::Temperature: ok = ok && value >= 0.0; break;
        case Param::TopK:
        case Param::MinKeep:
        case Param::DryAllowedLength: ok = ok && whole && value >= 0.0; break;
        case Param::DryPenaltyLastN: ok = ok && whole && value >= -1.0; break;
        case Param::Mirostat: ok = ok && (value == 0.0 || value == 1.0 || value == 2.0); break;
        case Param::TopP:
        case Param::MinP:
        case Param::TypicalP:
        case Param::XtcProbability:
        case Param::XtcThreshold: ok = ok && value >= 0.0 && value <= 1.0; break;
        case Param::DynatempRange:
        case Param::DynatempExponent:
        case Param::DryMultiplier:
        case Param::MirostatTau:
        case Param::MirostatEta: ok = ok && value >= 0.0; break;
        case Param::DryBase: ok = ok && value >= 1.0; break;
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
        case Param::MinKeep: params.min_keep = static_cast<std::int64_t>(value); break;
        case Param::DynatempRange: params.dynatemp_range = value; break;
        case Param::DynatempExponent: params.dynatemp_exponent = value; break;
        case Param::XtcProbability: params.xtc_probability = value; break;
        case Param::XtcThreshold: params.xtc_threshold = value; break;
        case Param::DryMultiplier: params.dry_multiplier = value; break;
        case Param::DryBase: params.dry_base = value; break;
        case Param::DryAllowedLength: params.dry_allowed_length = static_cast<std::int64_t>(value); break;
        case Param::DryPenaltyLastN: params.dry_penalty_last_n = static_cast<std::int64_t>(value); break;
        case Param::Mirostat: params.mirostat = static_cast<std::int64_t>(value); break;
        case Param::MirostatTau: params.mirostat_tau = value; break;
        case Param::MirostatEta: params.mirostat_eta = value; break;
    }
}

void validate(const SamplingParams& params) {
    for (const auto& info : kParams) {
        if (info.integer) {
            // An integer field: checked without a lossy trip through double.
            std::int64_t value = 0;
            switch (info.param) {
                case Param::TopK: value = params.top_k; break;
                case Param::MinKeep: value = params.min_keep; break;
                case Param::DryAllowedLength: value = params.dry_allowed_length; break;
                case Param::DryPenaltyLastN: value = params.dry_penalty_last_n; break;
                case Param::Mirostat: value = params.mirostat; break;
                default: break;
            }
            const bool ok = info.param == Param::Mirostat          ? value >= 0 && value <= 2
                            : info.param == Param::DryPenaltyLastN ? value >= -1
                                                                   : value >= 0;
            if (!ok) {
                throw InputError(std::string(info.key), std::string(info.key) + " must be " +
                                                            std::string(info.valid_range) + ", got " +
                                                            std::to_string(value));
            }
            continue;
        }
        if (auto error = param_error(info.param, param_value(params, info.param))) {
            throw InputError(std::string(info.key), *error);
        }
    }
    for (const auto& breaker : params.dry_sequence_breakers) {
        if (breaker.empty()) throw InputError("dry_sequence_breakers", "dry_sequence_breakers has an empty breaker");
        for (const auto id : breaker) {
            if (id < 0) {
                throw InputError("dry_sequence_breakers",
                                 "dry_sequence_breakers id must be an integer >= 0, got " + std::to_string(id));
            }
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
bool uses_dynatemp(const SamplingParams& params) { return gate_dynatemp(params.dynatemp_range); }
bool uses_xtc(const SamplingParams& params) { return gate_xtc(params.xtc_probability, params.xtc_threshold); }
bool uses_dry(const SamplingParams& params) { return gate_dry(params.dry_multiplier, params.dry_penalty_last_n); }
bool uses_mirostat(const SamplingParams& params) { return gate_mirostat(params.mirostat); }

std::optional<std::string_view> extra_sampler_on(const SamplingParams& params) {
    if (uses_typical_p(params)) return "typical_p";
    if (uses_top_n_sigma(params)) return "top_n_sigma";
    if (uses_dynatemp(params)) return "dynatemp_range";
    if (uses_xtc(params)) return "xtc_probability";
    if (uses_dry(params)) return "dry_multiplier";
    if (uses_mirostat(params)) return "mirostat";
    if (uses_logit_bias(params)) return "logit_bias";
    return std::nullopt;
}

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

std::vector<std::vector<std::int64_t>> parse_dry_sequence_breakers(std::string_view text) {
    std::vector<std::vector<std::int64_t>> out;
    if (trim_blank(text).empty()) return out;
    const auto bad = [&](const std::string& what) {
        return InputError("dry_sequence_breakers",
                          "dry_sequence_breakers " + what + " in \"" + std::string(text) + "\"");
    };
    // Split on `separator`, each piece trimmed; an empty piece is refused.
    const auto split = [](std::string_view whole, char separator) {
        std::vector<std::string_view> pieces;
        std::size_t start = 0;
        while (true) {
            const auto end = whole.find(separator, start);
            pieces.push_back(trim_blank(whole.substr(start, end == std::string_view::npos ? end : end - start)));
            if (end == std::string_view::npos) break;
            start = end + 1;
        }
        return pieces;
    };
    const auto sequences = split(text, ';');
    for (std::size_t s = 0; s < sequences.size(); ++s) {
        if (sequences[s].empty()) throw bad("has an empty breaker at position " + std::to_string(s));
        std::vector<std::int64_t> ids;
        for (const auto id_text : split(sequences[s], ',')) {
            const auto id = parse_integer_text(id_text);
            if (id_text.empty() || !id || id->negative || id->magnitude > static_cast<std::uint64_t>(INT64_MAX)) {
                throw bad("id must be an integer >= 0, got \"" + std::string(id_text) + "\"");
            }
            ids.push_back(static_cast<std::int64_t>(id->magnitude));
        }
        out.push_back(std::move(ids));
    }
    return out;
}

std::string format_dry_sequence_breakers(const std::vector<std::vector<std::int64_t>>& breakers) {
    std::string out;
    for (std::size_t s = 0; s < breakers.size(); ++s) {
        if (s > 0) out += ";";
        for (std::size_t i = 0; i < breakers[s].size(); ++i) {
            if (i > 0) out += ",";
            out += std::to_string(breakers[s][i]);
        }
    }
    return out;
}

void check_dry_sequence_breakers(const std::vector<std::vector<std::int64_t>>& breakers, std::size_t vocab_size) {
    for (const auto& breaker : breakers) {
        for (const auto id : breaker) {
            if (static_cast<std::uint64_t>(id) >= vocab_size) {
                throw InputError("dry_sequence_breakers", "dry_sequence_breakers id " + std::to_string(id) +
                                                              " is outside [0, " + std::to_string(vocab_size) +
                                                              ") for V = " + std::to_string(vocab_size));
            }
        }
    }
}

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
