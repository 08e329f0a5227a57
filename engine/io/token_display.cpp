#include "engine/io/token_display.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <optional>

namespace samplescope {

namespace {

// GPT-2's table: bytes that are printable Latin-1 keep their code point; the
// other 68 bytes, in increasing order, take code points 256, 257, ...
constexpr bool printable_latin1(unsigned byte) {
    return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
}

struct ByteLevelTable {
    std::array<std::int16_t, 324> byte_of_code_point{};  // -1 where the code point is not in the table
    constexpr ByteLevelTable() {
        for (auto& entry : byte_of_code_point) entry = -1;
        unsigned next = 256;
        for (unsigned byte = 0; byte < 256; ++byte) {
            const unsigned code_point = printable_latin1(byte) ? byte : next++;
            byte_of_code_point[code_point] = static_cast<std::int16_t>(byte);
        }
    }
};
constexpr ByteLevelTable kByteLevel;

// Decodes one UTF-8 sequence at text[at]; nullopt when it is not well formed
// (overlong, surrogate, out of range or cut short). `length` gets its size.
std::optional<char32_t> decode_utf8(std::string_view text, std::size_t at, std::size_t& length) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned lead = byte(at);
    length = 1;
    if (lead < 0x80) return lead;
    std::size_t extra;
    char32_t cp;
    char32_t minimum;
    if ((lead & 0xE0) == 0xC0) {
        extra = 1, cp = lead & 0x1F, minimum = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        extra = 2, cp = lead & 0x0F, minimum = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        extra = 3, cp = lead & 0x07, minimum = 0x10000;
    } else {
        return std::nullopt;
    }
    if (at + extra >= text.size()) return std::nullopt;
    for (std::size_t i = 1; i <= extra; ++i) {
        const unsigned next = byte(at + i);
        if ((next & 0xC0) != 0x80) return std::nullopt;
        cp = (cp << 6) | (next & 0x3F);
    }
    if (cp < minimum || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
    length = extra + 1;
    return cp;
}

std::string hex_byte(unsigned byte) {
    char text[8];
    std::snprintf(text, sizeof text, "<0x%02X>", byte & 0xFFu);
    return text;
}

std::string code_point_mark(char32_t cp) {
    char text[16];
    std::snprintf(text, sizeof text, "<U+%04X>", static_cast<unsigned>(cp));
    return text;
}

bool invisible(char32_t cp) {
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0xA0 || cp == 0xAD || cp == 0x034F || cp == 0x061C || cp == 0x115F ||
           cp == 0x1160 || cp == 0x180E || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
           (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0x3164 || cp == 0xFEFF || cp == 0xFFA0 ||
           (cp >= 0xFFF0 && cp <= 0xFFFB) || (cp >= 0xE0000 && cp <= 0xE007F);
}

// "<0x0A>" -> 0x0A: SentencePiece's byte-fallback pieces.
std::optional<unsigned> byte_piece(std::string_view piece) {
    if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return std::nullopt;
    unsigned value = 0;
    for (const char c : piece.substr(3, 2)) {
        value <<= 4;
        if (c >= '0' && c <= '9') value |= static_cast<unsigned>(c - '0');
        else if (c >= 'A' && c <= 'F') value |= static_cast<unsigned>(c - 'A' + 10);
        else if (c >= 'a' && c <= 'f') value |= static_cast<unsigned>(c - 'a' + 10);
        else return std::nullopt;
    }
    return value;
}

}  // namespace

const char* token_encoding_name(TokenEncoding encoding) {
    switch (encoding) {
        case TokenEncoding::Plain: return "plain";
        case TokenEncoding::ByteLevel: return "byte-level BPE";
        case TokenEncoding::SentencePiece: return "SentencePiece";
    }
    return "?";
}

std::string token_bytes(std::string_view piece, TokenEncoding encoding) {
    std::string out;
    switch (encoding) {
        case TokenEncoding::Plain: return std::string(piece);
        case TokenEncoding::ByteLevel:
            for (std::size_t at = 0; at < piece.size();) {
                std::size_t length = 1;
                const auto cp = decode_utf8(piece, at, length);
                if (cp && *cp < kByteLevel.byte_of_code_point.size() && kByteLevel.byte_of_code_point[*cp] >= 0) {
                    out.push_back(static_cast<char>(kByteLevel.byte_of_code_point[*cp]));
                } else {
                    out.append(piece.substr(at, length));  // not from the table: keep as written
                }
                at += length;
            }
            return out;
        case TokenEncoding::SentencePiece: {
            if (const auto byte = byte_piece(piece)) return std::string(1, static_cast<char>(*byte));
            constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581
            for (std::size_t at = 0; at < piece.size();) {
                if (piece.substr(at, 3) == kSpaceMark) {
                    out.push_back(' ');
                    at += 3;
                } else {
                    out.push_back(piece[at++]);
                }
            }
            return out;
        }
    }
    return out;
}

std::string visible_text(std::string_view bytes) {
    std::string out;
    for (std::size_t at = 0; at < bytes.size();) {
        std::size_t length = 1;
        const auto cp = decode_utf8(bytes, at, length);
        if (!cp) {
            out += hex_byte(static_cast<unsigned char>(bytes[at]));
        } else if (*cp == ' ') {
            out += "\xE2\x90\xA3";  // ␣
        } else if (*cp == '\n') {
            out += "\xE2\x86\xB5";  // ↵
        } else if (*cp == '\t') {
            out += "\xE2\x87\xA5";  // ⇥
        } else if (*cp < 0x20 || *cp == 0x7F || invisible(*cp)) {
            // Not Unicode's control pictures (U+2400 block): common fonts (DejaVu) lack them and draw boxes.
            out += code_point_mark(*cp);
        } else {
            out.append(bytes.substr(at, length));
        }
        at += length;
    }
    return out;
}

std::string display_token(std::string_view piece, TokenEncoding encoding) {
    return visible_text(token_bytes(piece, encoding));
}

std::string token_display_label(const std::vector<std::string>& labels, std::int64_t id) {
    if (id >= 0 && static_cast<std::size_t>(id) < labels.size() && !labels[static_cast<std::size_t>(id)].empty()) {
        return labels[static_cast<std::size_t>(id)];
    }
    return "tok_" + std::to_string(id);
}

}  // namespace samplescope
