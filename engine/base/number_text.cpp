#include "engine/base/number_text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "engine/base/input_error.h"

namespace samplescope {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
    }
    return true;
}

// Whether `body` (no sign) is digits[.digits][e[+-]digits] or .digits[...].
bool is_decimal_body(std::string_view body) {
    std::size_t i = 0;
    std::size_t digits = 0;
    while (i < body.size() && is_digit(body[i])) ++i, ++digits;
    if (i < body.size() && body[i] == '.') {
        ++i;
        while (i < body.size() && is_digit(body[i])) ++i, ++digits;
    }
    if (digits == 0) return false;
    if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
        ++i;
        if (i < body.size() && (body[i] == '+' || body[i] == '-')) ++i;
        std::size_t exponent_digits = 0;
        while (i < body.size() && is_digit(body[i])) ++i, ++exponent_digits;
        if (exponent_digits == 0) return false;
    }
    return i == body.size();
}

enum class RealStatus { ok, not_a_number, overflow };

RealStatus read_real(std::string_view text, double& value) {
    if (text.empty()) return RealStatus::not_a_number;
    bool negative = false;
    std::string_view body = text;
    if (body.front() == '+' || body.front() == '-') {
        negative = body.front() == '-';
        body.remove_prefix(1);
    }
    constexpr double kInf = std::numeric_limits<double>::infinity();
    if (equals_ignoring_case(body, "inf") || equals_ignoring_case(body, "infinity")) {
        value = negative ? -kInf : kInf;
        return RealStatus::ok;
    }
    if (equals_ignoring_case(body, "nan")) {
        value = std::numeric_limits<double>::quiet_NaN();
        return RealStatus::ok;
    }
    if (!is_decimal_body(body)) return RealStatus::not_a_number;
    double magnitude = 0.0;
    const auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), magnitude);
    if (ec == std::errc::result_out_of_range) {
        // Too small when the exponent is negative (or, without one, when no
        // digit before the point is non-zero); too large otherwise.
        const auto exponent_at = body.find_first_of("eE");
        const std::string_view mantissa = body.substr(0, exponent_at);
        const bool tiny = exponent_at != std::string_view::npos
                              ? body.substr(exponent_at + 1).starts_with('-')
                              : mantissa.substr(0, mantissa.find('.')).find_first_of("123456789") == std::string_view::npos;
        value = negative ? -(tiny ? 0.0 : kInf) : (tiny ? 0.0 : kInf);
        return tiny ? RealStatus::ok : RealStatus::overflow;
    }
    if (ec != std::errc() || ptr != body.data() + body.size()) return RealStatus::not_a_number;
    value = negative ? -magnitude : magnitude;
    return RealStatus::ok;
}

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

}  // namespace

std::optional<double> parse_real(std::string_view text) {
    double value = 0.0;
    if (read_real(text, value) == RealStatus::not_a_number) return std::nullopt;
    return value;
}

bool real_overflows(std::string_view text) {
    double value = 0.0;
    return read_real(text, value) == RealStatus::overflow;
}

std::optional<IntegerText> parse_integer_text(std::string_view text) {
    IntegerText out;
    if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
        out.negative = text.front() == '-';
        text.remove_prefix(1);
    }
    if (text.empty() || !is_digit(text.front())) return std::nullopt;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out.magnitude, 10);
    if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
    if (out.magnitude == 0) out.negative = false;  // "-0" is 0
    return out;
}

std::optional<IntegerText> parse_exact_integer(std::string_view text, bool* too_large) {
    if (too_large) *too_large = false;
    IntegerText out;
    std::string_view body = text;
    if (!body.empty() && (body.front() == '+' || body.front() == '-')) {
        out.negative = body.front() == '-';
        body.remove_prefix(1);
    }
    if (!is_decimal_body(body)) return std::nullopt;
    // The significant digits (no point) and the power of ten they are scaled by.
    std::string digits;
    std::int64_t scale = 0;
    std::size_t i = 0;
    for (; i < body.size() && is_digit(body[i]); ++i) digits.push_back(body[i]);
    if (i < body.size() && body[i] == '.') {
        for (++i; i < body.size() && is_digit(body[i]); ++i) {
            digits.push_back(body[i]);
            --scale;
        }
    }
    if (i < body.size()) {  // the exponent, saturated far beyond any digit count
        ++i;
        const bool minus = body[i] == '-';
        if (body[i] == '+' || body[i] == '-') ++i;
        std::int64_t exponent = 0;
        for (; i < body.size(); ++i) exponent = std::min<std::int64_t>(exponent * 10 + (body[i] - '0'), 1'000'000'000);
        scale += minus ? -exponent : exponent;
    }
    const auto first = digits.find_first_not_of('0');
    if (first == std::string::npos) return IntegerText{};  // zero, whatever its sign or exponent
    digits.erase(0, first);
    // Trailing zeros moved into the scale; a negative scale left means a fraction.
    while (digits.back() == '0') {
        digits.pop_back();
        ++scale;
    }
    if (scale < 0) return std::nullopt;
    if (static_cast<std::int64_t>(digits.size()) + scale > 20) {
        if (too_large) *too_large = true;
        return std::nullopt;
    }
    digits.append(static_cast<std::size_t>(scale), '0');
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out.magnitude, 10);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) {
        if (too_large) *too_large = true;
        return std::nullopt;
    }
    return out;
}

std::int64_t parse_int_in_range(std::string_view text, const std::string& field, const std::string& name,
                                std::int64_t lo, std::int64_t hi) {
    const auto parsed = parse_integer_text(text);
    const auto refuse = [&]() -> std::int64_t {
        throw InputError(field, name + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                    "], got " + quoted(text));
    };
    if (!parsed) return refuse();
    constexpr auto kMaxMagnitude = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    std::int64_t value = 0;
    if (parsed->negative) {
        if (parsed->magnitude > kMaxMagnitude + 1) return refuse();
        value = parsed->magnitude == kMaxMagnitude + 1 ? std::numeric_limits<std::int64_t>::min()
                                                       : -static_cast<std::int64_t>(parsed->magnitude);
    } else {
        if (parsed->magnitude > kMaxMagnitude) return refuse();
        value = static_cast<std::int64_t>(parsed->magnitude);
    }
    if (value < lo || value > hi) return refuse();
    return value;
}

std::uint64_t parse_uint_in_range(std::string_view text, const std::string& field, const std::string& name,
                                  std::uint64_t lo, std::uint64_t hi) {
    const auto parsed = parse_integer_text(text);
    if (!parsed || parsed->negative || parsed->magnitude < lo || parsed->magnitude > hi) {
        throw InputError(field, name + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                    "], got " + quoted(text));
    }
    return parsed->magnitude;
}

void check_draw_counter(std::uint64_t skip, std::uint64_t draws, const std::string& field) {
    if (draws > std::numeric_limits<std::uint64_t>::max() - skip) {
        throw InputError(field, "skip_draws " + std::to_string(skip) + " and " + std::to_string(draws) +
                                    " more draws pass the draw counter's limit of 18446744073709551615");
    }
}

std::string format_count(std::uint64_t count) {
    std::string digits = std::to_string(count);
    for (std::size_t at = digits.size(); at > 3; at -= 3) digits.insert(at - 3, 1, ',');
    return digits;
}

}  // namespace samplescope
