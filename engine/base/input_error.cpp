#include "engine/base/input_error.h"

#include <charconv>
#include <cmath>

namespace samplescope {

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF), or 0.
std::size_t utf8_sequence(std::string_view text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    std::size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) low = 0xA0;
        if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) low = 0x90;
        if (lead == 0xF4) high = 0x8F;
    } else {
        return 0;
    }
    if (text.size() - i < length) return 0;
    if (byte(i + 1) < low || byte(i + 1) > high) return 0;
    for (std::size_t k = 2; k < length; ++k) {
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
    }
    return length;
}

void append_hex(std::string& out, unsigned char c) {
    static constexpr char kDigits[] = "0123456789ABCDEF";
    out += "\\x";
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xF]);
}

// The length of the character at text[i] when it is kept as it is; 0 when
// its bytes are escaped (a control byte, U+0080..U+009F's C1 controls, or a
// byte that is not part of well-formed UTF-8).
std::size_t kept_length(std::string_view text, std::size_t i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) return (c < 0x20 || c == 0x7F) ? 0 : 1;
    const std::size_t length = utf8_sequence(text, i);
    const bool c1 = length == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    return c1 ? 0 : length;
}

}  // namespace

std::string escape_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t length = kept_length(text, i);
        if (length != 0) {
            out.append(text.substr(i, length));
            i += length;
            continue;
        }
        // A C1 control is one well-formed character: both its bytes are escaped.
        const std::size_t n = utf8_sequence(text, i) == 2 ? 2 : 1;
        for (std::size_t k = 0; k < n; ++k) append_hex(out, static_cast<unsigned char>(text[i + k]));
        i += n;
    }
    return out;
}

std::size_t first_escaped_byte(std::string_view text, std::string_view allowed) {
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t length = kept_length(text, i);
        if (length == 0 && allowed.find(text[i]) == std::string_view::npos) return i;
        i += length == 0 ? 1 : length;
    }
    return text.size();
}

std::size_t utf8_valid_prefix(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size()) {
        if (static_cast<unsigned char>(text[i]) < 0x80) {
            ++i;
            continue;
        }
        const std::size_t length = utf8_sequence(text, i);
        if (length == 0) break;
        i += length;
    }
    return i;
}

std::string format_number(double value) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    char buffer[32];
    const auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    return ec == std::errc() ? std::string(buffer, ptr) : std::string("?");
}

}  // namespace samplescope
