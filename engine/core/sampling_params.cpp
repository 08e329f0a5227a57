#include "engine/core/sampling_params.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"
#include "engine/core/stage.h"

namespace samplescope {

const ParamInfo& param_info(Param param) { return kParams[static_cast<std::size_t>(param)]; }

std::optional<Param> param_from_key(std::string_view key) {
    for (const auto& info : kParams) {
        if (info.key == key) return info.param;
    }
    return std::nullopt;
}

const ListParamInfo* list_param_from_key(std::string_view key) {
    for (const auto& info : kListParams) {
        if (info.key == key) return &info;
    }
    return nullptr;
}

double param_value(const SamplingParams& params, Param param) {
    const auto& info = param_info(param);
    return info.whole ? static_cast<double>(params.*info.whole) : params.*info.real;
}

bool param_is_default(const SamplingParams& params, Param param) {
    const auto& info = param_info(param);
    // An integer field is compared as an integer: no lossy trip through double.
    if (info.whole) return params.*info.whole == static_cast<std::int64_t>(info.default_value);
    return params.*info.real == info.default_value;
}

namespace {

// The range test of a row (finiteness and wholeness are the caller's).
bool in_range(const ParamInfo& info, double value) {
    return (info.min_open ? value > info.min : value >= info.min) && value <= info.max;
}

}  // namespace

std::optional<std::string> param_error(Param param, double value) {
    const auto& info = param_info(param);
    const bool whole = value == std::floor(value) && std::fabs(value) <= 9.0e15;
    const bool ok = std::isfinite(value) && (!info.integer() || whole) && in_range(info, value);
    if (ok) return std::nullopt;
    return std::string(info.key) + " must be " + std::string(info.valid_range) + ", got " + format_number(value);
}

void set_param(SamplingParams& params, Param param, double value) {
    if (auto error = param_error(param, value)) throw InputError(std::string(param_info(param).key), *error);
    const auto& info = param_info(param);
    if (info.whole) {
        params.*info.whole = static_cast<std::int64_t>(value);
    } else {
        params.*info.real = value;
    }
}

namespace {

std::optional<std::string> integer_param_error(Param param, std::int64_t value) {
    const auto& info = param_info(param);
    // The bounds are small whole numbers or infinite: every int64 compares
    // with them exactly after the conversion.
    const auto v = static_cast<double>(value);
    if ((info.min_open ? v > info.min : v >= info.min) && v <= info.max) return std::nullopt;
    return std::string(info.key) + " must be " + std::string(info.valid_range) + ", got " + std::to_string(value);
}

}  // namespace

std::int64_t integer_param(const SamplingParams& params, Param param) {
    const auto& info = param_info(param);
    if (!info.whole) throw std::logic_error("integer_param: " + std::string(info.key) + " is not an integer parameter");
    return params.*info.whole;
}

void set_integer_param(SamplingParams& params, Param param, std::int64_t value) {
    const auto& info = param_info(param);
    if (!info.whole) {
        throw std::logic_error("set_integer_param: " + std::string(info.key) + " is not an integer parameter");
    }
    if (auto error = integer_param_error(param, value)) throw InputError(std::string(info.key), *error);
    params.*info.whole = value;
}

void set_param_text(SamplingParams& params, Param param, std::string_view text) {
    const auto& info = param_info(param);
    const std::string key(info.key);
    const auto value = parse_real(text);
    if (!value) throw InputError(key, key + " must be a number, got \"" + std::string(text) + "\"");
    if (real_overflows(text)) {
        throw InputError(key, key + " must be a number, got \"" + std::string(text) + "\" (outside the range of a double)");
    }
    if (!info.integer()) {
        set_param(params, param, *value);
        return;
    }
    bool too_large = false;
    const auto whole = parse_exact_integer(text, &too_large);
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (!whole || whole->magnitude > kMax + (whole->negative ? 1 : 0)) {
        throw InputError(key, key + " must be " + std::string(info.valid_range) + ", got " + std::string(text) +
                                  (too_large || whole ? " (beyond the 64-bit range)" : ""));
    }
    const std::int64_t exact = whole->negative ? static_cast<std::int64_t>(0 - whole->magnitude)
                                               : static_cast<std::int64_t>(whole->magnitude);
    set_integer_param(params, param, exact);
}

void validate(const SamplingParams& params) {
    for (const auto& info : kParams) {
        if (info.integer()) {
            // An integer field: checked without a lossy trip through double.
            if (auto error = integer_param_error(info.param, integer_param(params, info.param))) {
                throw InputError(std::string(info.key), *error);
            }
            continue;
        }
        if (auto error = param_error(info.param, params.*info.real)) throw InputError(std::string(info.key), *error);
    }
    for (const auto& list : kListParams) list.validate(params);
}

ParamBadge switch_badge(bool set, bool on, std::string_view blocked, std::string_view summary) {
    if (on) return {"on", true, std::string(summary)};
    return {set && !blocked.empty() ? std::string(blocked) : std::string("off"), false, {}};
}

ParamBadge shapes_badge(bool on) { return {on ? "used" : "unused", on, {}}; }

ParamBadge param_badge(const ParamInfo& info, const SamplingParams& params, std::size_t vocab) {
    if (info.badge) return info.badge(params, vocab);
    const bool on = info.on(params, vocab);
    if (info.role == ParamRole::Shapes) return shapes_badge(on);
    return switch_badge(!param_is_default(params, info.param), on, info.blocked, info.summary);
}

ParamBadge list_param_badge(const ListParamInfo& info, const SamplingParams& params, std::size_t vocab) {
    if (info.badge) return info.badge(params, vocab);
    const bool on = info.on(params, vocab);
    if (info.role == ParamRole::Shapes) return shapes_badge(on);
    return switch_badge(info.set(params), on, {}, info.summary);
}

std::optional<ParamSetting> outside_contract_switch(const SamplingParams& params, std::size_t vocab) {
    for (const auto& info : kParams) {
        if (!info.contract && info.role == ParamRole::Switch && info.on(params, vocab)) {
            return ParamSetting{std::string(info.key), format_number(param_value(params, info.param))};
        }
    }
    for (const auto& list : kListParams) {
        if (list.role == ParamRole::Switch && list.on(params, vocab)) {
            return ParamSetting{std::string(list.key), list.text(params)};
        }
    }
    return std::nullopt;
}

bool is_greedy(const SamplingParams& params) { return stage_on(Stage::Greedy, params, 0); }
bool uses_repetition_penalty(const SamplingParams& params) { return stage_on(Stage::RepetitionPenalty, params, 0); }
bool uses_presence_frequency(const SamplingParams& params) { return stage_on(Stage::PresenceFrequency, params, 0); }
bool uses_temperature(const SamplingParams& params) { return stage_on(Stage::Temperature, params, 0); }
bool uses_top_k(const SamplingParams& params, std::size_t vocab_size) { return stage_on(Stage::TopK, params, vocab_size); }
bool uses_top_p(const SamplingParams& params) { return stage_on(Stage::TopP, params, 0); }
bool uses_min_p(const SamplingParams& params) { return stage_on(Stage::MinP, params, 0); }
bool uses_typical_p(const SamplingParams& params) { return stage_on(Stage::TypicalP, params, 0); }
bool uses_top_n_sigma(const SamplingParams& params) { return stage_on(Stage::TopNSigma, params, 0); }
bool uses_dynatemp(const SamplingParams& params) { return param_info(Param::DynatempRange).on(params, 0); }
bool uses_xtc(const SamplingParams& params) { return stage_on(Stage::Xtc, params, 0); }
bool uses_dry(const SamplingParams& params) { return stage_on(Stage::Dry, params, 0); }
bool uses_mirostat(const SamplingParams& params) { return stage_on(Stage::Mirostat, params, 0); }
bool uses_logit_bias(const SamplingParams& params) { return stage_on(Stage::LogitBias, params, 0); }

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

void validate_logit_bias(const std::vector<LogitBias>& bias) {
    for (const auto& entry : bias) {
        if (entry.id < 0) {
            throw InputError("logit_bias", "logit_bias id must be an integer >= 0, got " + std::to_string(entry.id));
        }
        if (!std::isfinite(entry.bias) && entry.bias != -HUGE_VAL) {
            throw InputError("logit_bias",
                             "logit_bias bias must be a finite number or -inf, got " + format_number(entry.bias));
        }
    }
}

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

void validate_dry_sequence_breakers(const std::vector<std::vector<std::int64_t>>& breakers) {
    for (const auto& breaker : breakers) {
        if (breaker.empty()) throw InputError("dry_sequence_breakers", "dry_sequence_breakers has an empty breaker");
        for (const auto id : breaker) {
            if (id < 0) {
                throw InputError("dry_sequence_breakers",
                                 "dry_sequence_breakers id must be an integer >= 0, got " + std::to_string(id));
            }
        }
    }
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

std::uint64_t seed_or_chosen(const std::optional<std::uint64_t>& seed) { return seed ? *seed : choose_seed(); }

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
