// libFuzzer target: the label mapping. The first byte picks the encoding, the
// rest is the piece. Whatever the piece, a label must be valid UTF-8 with no
// control character left in it (that is the point of the mapping).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/io/token_display.h"

namespace {

// Checks well-formed UTF-8 and no C0/C1 control or DEL code points.
bool visible_utf8(const std::string& text) {
    for (std::size_t at = 0; at < text.size();) {
        const auto lead = static_cast<unsigned char>(text[at]);
        std::size_t extra = 0;
        char32_t cp = lead;
        if (lead >= 0xF0 && lead <= 0xF4) extra = 3, cp = lead & 0x07;
        else if (lead >= 0xE0) extra = 2, cp = lead & 0x0F;
        else if (lead >= 0xC2 && lead < 0xE0) extra = 1, cp = lead & 0x1F;
        else if (lead >= 0x80) return false;
        if (extra > 0 && at + extra >= text.size()) return false;
        for (std::size_t i = 1; i <= extra; ++i) {
            const auto next = static_cast<unsigned char>(text[at + i]);
            if ((next & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (next & 0x3F);
        }
        if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
        at += extra + 1;
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const auto encoding = static_cast<samplescope::TokenEncoding>(data[0] % 3);
    const std::string piece(reinterpret_cast<const char*>(data + 1), size - 1);
    const std::string label = samplescope::display_token(piece, encoding);
    if (!visible_utf8(label)) std::abort();
    return 0;
}
