// The one parser for numbers typed in a flag or held in a file: decimal only
// (no hex, no octal, no empty text, one optional sign, no "+-"), read without
// the locale. Counts and indices are read as a signed value first and then
// checked against their range, so "-1" is refused as typed, never wrapped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace samplescope {

// A decimal real: [+-]digits[.digits][e[+-]digits], ".5", or inf / infinity /
// nan in any case; nullopt for anything else. A value beyond a double's range
// rounds as IEEE 754 says: too large to +-inf (which the contract's checks then
// refuse, naming the id), too small to +-0.
std::optional<double> parse_real(std::string_view text);

// Whether `text` is a decimal real whose magnitude is too large for a double
// (1e999): a flag refuses it quoting the text rather than reporting "inf".
bool real_overflows(std::string_view text);

// A decimal integer with an optional sign, as its sign and magnitude (so both
// -2^63 and 2^64-1 are read exactly); nullopt when it is not one or its
// magnitude passes 2^64-1.
struct IntegerText {
    bool negative = false;
    std::uint64_t magnitude = 0;
};
std::optional<IntegerText> parse_integer_text(std::string_view text);

// The integer a decimal real denotes exactly: "12", "-3", "1e18", "2.0",
// "1.5e1" (15); nullopt for a text that is not a decimal real, or one whose
// value is not a whole number ("1.5", "1e-3", inf, nan). `too_large` is set
// when the text is a whole number whose magnitude passes 2^64-1. Read from
// the digits, never through a double, so 2^63-1 stays 2^63-1.
std::optional<IntegerText> parse_exact_integer(std::string_view text, bool* too_large = nullptr);

// The integer in [lo, hi] that `text` spells, else InputError(field) with
// "NAME must be an integer in [lo, hi], got "TEXT"" (NAME is a flag, "--row",
// or a key).
std::int64_t parse_int_in_range(std::string_view text, const std::string& field, const std::string& name,
                                std::int64_t lo, std::int64_t hi);
std::uint64_t parse_uint_in_range(std::string_view text, const std::string& field, const std::string& name,
                                  std::uint64_t lo, std::uint64_t hi);

// `skip` draws skipped and then `draws` more taken must fit the 64-bit draw
// counter; throws InputError(field) naming both numbers when they do not.
void check_draw_counter(std::uint64_t skip, std::uint64_t draws, const std::string& field);

// A count with its thousands grouped by commas, as the plots print counts: 128,256.
std::string format_count(std::uint64_t count);

}  // namespace samplescope
