// .npy: magic, version, a Python-literal dict header, then the raw array.
// Format reference: numpy.lib.format (NEP 1). The header is read with a small
// parser of its own because it is a tiny fixed grammar (a dict of a string, a
// bool and a tuple of ints) and pulling in a Python-literal library for it
// would add more surface than it removes.
#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <variant>

#include "engine/io/logits_readers.h"

namespace samplescope::detail {

namespace {

constexpr std::uint64_t kMaxHeaderBytes = 1u << 20;

using HeaderValue = std::variant<std::string, bool, std::vector<std::uint64_t>>;

class HeaderParser {
public:
    HeaderParser(std::string_view text, const ByteSource& source) : text_(text), source_(source) {}

    std::map<std::string, HeaderValue> parse_dict() {
        std::map<std::string, HeaderValue> dict;
        expect('{');
        while (true) {
            skip_space();
            if (peek() == '}') break;
            std::string key = parse_string();
            expect(':');
            skip_space();
            HeaderValue value = parse_value(key);
            if (!dict.emplace(key, std::move(value)).second) bad("the key '" + key + "' appears twice");
            skip_space();
            if (peek() == ',') {
                ++at_;
                continue;
            }
            if (peek() != '}') bad("expected ',' or '}'");
        }
        ++at_;
        skip_space();
        if (at_ != text_.size()) bad("text after the closing '}'");
        return dict;
    }

private:
    [[noreturn]] void bad(const std::string& problem) const {
        source_.fail("malformed .npy header (" + problem + " at character " + std::to_string(at_) + ")");
    }
    char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
    void skip_space() {
        while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
    }
    void expect(char c) {
        skip_space();
        if (peek() != c) bad(std::string("expected '") + c + "'");
        ++at_;
    }
    std::string parse_string() {
        skip_space();
        const char quote = peek();
        if (quote != '\'' && quote != '"') bad("expected a quoted string");
        const auto end = text_.find(quote, at_ + 1);
        if (end == std::string_view::npos) bad("unterminated string");
        std::string value(text_.substr(at_ + 1, end - at_ - 1));
        at_ = end + 1;
        return value;
    }
    std::uint64_t parse_int() {
        skip_space();
        std::uint64_t value = 0;
        const std::size_t start = at_;
        while (std::isdigit(static_cast<unsigned char>(peek()))) {
            const auto digit = static_cast<std::uint64_t>(peek() - '0');
            if (value > (~0ull - digit) / 10) bad("a dimension too large");
            value = value * 10 + digit;
            ++at_;
        }
        if (at_ == start) bad("expected a non-negative integer");
        if (peek() == 'L') ++at_;  // Python 2 long
        return value;
    }
    HeaderValue parse_value(const std::string& key) {
        const char c = peek();
        if (c == '\'' || c == '"') return parse_string();
        if (text_.substr(at_, 4) == "True") {
            at_ += 4;
            return true;
        }
        if (text_.substr(at_, 5) == "False") {
            at_ += 5;
            return false;
        }
        if (c == '(') {
            ++at_;
            std::vector<std::uint64_t> dims;
            while (true) {
                skip_space();
                if (peek() == ')') break;
                if (dims.size() == 32) bad("more than 32 dimensions");
                dims.push_back(parse_int());
                skip_space();
                if (peek() == ',') {
                    ++at_;
                } else if (peek() != ')') {
                    bad("expected ',' or ')' in the shape");
                }
            }
            ++at_;
            return dims;
        }
        if (c == '[' && key == "descr") source_.fail("unsupported dtype: a structured (record) array");
        bad("unexpected value for '" + key + "'");
    }

    std::string_view text_;
    std::size_t at_ = 0;
    const ByteSource& source_;
};

ElementFormat element_format_of(const std::string& descr, const ByteSource& source, const LoadOptions& options) {
    if (descr == "bfloat16") return {FloatType::BF16, false};
    if (descr.size() >= 2) {
        const char order = descr[0];
        const std::string kind = descr.substr(1);
        const bool big = order == '>';
        const bool known_order = order == '<' || order == '>' || order == '=' || order == '|';
        if (known_order) {
            if (kind == "f2" && order != '|') return {FloatType::F16, big};
            if (kind == "f4" && order != '|') return {FloatType::F32, big};
            if (kind == "f8" && order != '|') return {FloatType::F64, big};
            // ml_dtypes' bfloat16 saves as a 2-byte void; its bytes are the
            // host's (little-endian) order.
            if (kind == "V2") return {FloatType::BF16, false};
            if (kind == "u2" && order != '|') {
                if (options.u2_as_bfloat16) return {FloatType::BF16, big};
                source.fail("dtype '" + descr +
                            "' is uint16: if it holds bfloat16 bits, load it with " + options.u2_as_bfloat16_option);
            }
        }
    }
    source.fail("unsupported dtype '" + descr + "' (expected f16, bf16, f32 or f64: <f2, <V2, <f4, <f8 or big-endian >)");
}

}  // namespace

NpyHeader read_npy_header(const ByteSource& source) {
    if (source.size() < 10) source.fail("not a .npy file (" + std::to_string(source.size()) + " bytes, too short for the header)");
    std::byte prefix[12]{};
    source.read(0, std::span(prefix, std::min<std::uint64_t>(12, source.size())));
    if (std::memcmp(prefix, "\x93NUMPY", 6) != 0) source.fail("not a .npy file (bad magic: expected \\x93NUMPY)");
    const auto major = std::to_integer<unsigned>(prefix[6]);
    std::uint64_t header_length = 0;
    std::uint64_t header_start = 0;
    if (major == 1) {
        header_length = std::to_integer<unsigned>(prefix[8]) | (std::to_integer<unsigned>(prefix[9]) << 8);
        header_start = 10;
    } else if (major == 2 || major == 3) {
        if (source.size() < 12) source.fail("truncated .npy header");
        for (int i = 0; i < 4; ++i) header_length |= std::uint64_t{std::to_integer<unsigned>(prefix[8 + i])} << (8 * i);
        header_start = 12;
    } else {
        source.fail("unsupported .npy version " + std::to_string(major) + " (expected 1, 2 or 3)");
    }
    if (header_length > kMaxHeaderBytes) source.fail("the .npy header claims " + std::to_string(header_length) + " bytes, far more than any array needs");
    if (header_length > source.size() - header_start) {
        source.fail("truncated .npy header: it claims " + std::to_string(header_length) + " bytes, the file has " +
                    std::to_string(source.size() - header_start) + " after the prefix");
    }
    std::string header(static_cast<std::size_t>(header_length), '\0');
    source.read(header_start, std::as_writable_bytes(std::span(header.data(), header.size())));

    const auto dict = HeaderParser(header, source).parse_dict();
    const auto get = [&](const char* key) -> const HeaderValue& {
        const auto found = dict.find(key);
        if (found == dict.end()) source.fail(std::string("malformed .npy header (no '") + key + "')");
        return found->second;
    };
    for (const auto& entry : dict) {
        if (entry.first != "descr" && entry.first != "fortran_order" && entry.first != "shape") {
            source.fail("malformed .npy header (unexpected key '" + entry.first + "')");
        }
    }
    const auto* descr = std::get_if<std::string>(&get("descr"));
    const auto* fortran = std::get_if<bool>(&get("fortran_order"));
    const auto* shape = std::get_if<std::vector<std::uint64_t>>(&get("shape"));
    if (!descr) source.fail("malformed .npy header ('descr' is not a string)");
    if (!fortran) source.fail("malformed .npy header ('fortran_order' is not True or False)");
    if (!shape) source.fail("malformed .npy header ('shape' is not a tuple)");
    NpyHeader out;
    out.descr = *descr;
    out.fortran_order = *fortran;
    out.shape = *shape;
    out.data_offset = header_start + header_length;
    return out;
}

LogitsMatrix read_npy(const ByteSource& source, const LoadOptions& options) {
    const NpyHeader header = read_npy_header(source);
    if (header.shape.empty()) source.fail("the array is a 0-D scalar, not a row of logits");

    ArrayLayout layout;
    layout.shape = header.shape;
    layout.format = element_format_of(header.descr, source, options);
    layout.fortran_order = header.fortran_order;
    layout.data_offset = header.data_offset;
    layout.data_bytes = source.size() - layout.data_offset;
    std::size_t first_bad = kAllFinite;
    LogitsMatrix matrix = read_float_array(source, layout, options, first_bad);
    if (first_bad != kAllFinite) fail_not_finite(matrix, first_bad, source);
    return matrix;
}

}  // namespace samplescope::detail
