// libFuzzer target: the one number parser (engine/base/number_text.h) and the
// message escaping (engine/base/input_error.h).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace samplescope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto real = parse_real(text);
    if (real) {
        if (text.empty()) std::abort();
        if (text.find_first_of("xX") != std::string_view::npos) std::abort();  // never hex
        if (text.size() >= 2 && (text[0] == '+' || text[0] == '-') && (text[1] == '+' || text[1] == '-')) std::abort();
        if (real_overflows(text) != (std::isinf(*real) && text.find_first_of("iI") == std::string_view::npos)) std::abort();
    }
    if (const auto integer = parse_integer_text(text)) {
        if (!real) std::abort();  // every integer is a real too
        if (integer->negative && integer->magnitude == 0) std::abort();
    }
    try {
        const auto value = parse_int_in_range(text, "f", "--f", -5, 1000);
        if (value < -5 || value > 1000 || !parse_integer_text(text)) std::abort();
    } catch (const InputError&) {
    }
    try {
        const auto value = parse_uint_in_range(text, "f", "--f", 3, std::numeric_limits<std::uint64_t>::max());
        if (value < 3 || !parse_integer_text(text) || parse_integer_text(text)->negative) std::abort();
    } catch (const InputError&) {
    }
    const std::string escaped = escape_text(text);
    for (const char c : escaped) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) std::abort();
    }
    if (escape_text(escaped) != escaped) std::abort();  // escaping twice changes nothing
    return 0;
}
