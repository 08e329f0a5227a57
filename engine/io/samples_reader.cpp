#include "engine/io/samples_reader.h"

#include <charconv>
#include <cstring>

#include "engine/base/input_error.h"
#include "engine/io/logits_readers.h"

namespace samplescope {

namespace {

// The largest file of draws read: 2^31 bytes of int64 is 268 million draws.
constexpr std::uint64_t kSamplesLimitBytes = 1ull << 31;

SampleRows read_npy_samples(const ByteSource& source) {
    const detail::NpyHeader header = detail::read_npy_header(source);
    const std::string& descr = header.descr;
    std::size_t width = 0;
    bool big = false;
    if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '>' || descr[0] == '=' || descr[0] == '|') &&
        descr[1] == 'i' && (descr[2] == '4' || descr[2] == '8')) {
        width = descr[2] == '4' ? 4 : 8;
        big = descr[0] == '>';
    } else {
        source.fail("samples dtype '" + descr + "' is not int32 or int64 (expected <i4, <i8, >i4 or >i8)");
    }
    if (header.shape.empty() || header.shape.size() > 2) {
        source.fail("samples shape " + detail::shape_text(header.shape) + " is not [N] or [B, N]");
    }
    const std::uint64_t b = header.shape.size() == 2 ? header.shape[0] : 1;
    const std::uint64_t n = header.shape.back();
    if (b == 0 || n == 0) source.fail("samples shape " + detail::shape_text(header.shape) + " holds no draws");
    if (n > kSamplesLimitBytes / width || b > kSamplesLimitBytes / width / n) {
        source.fail("samples shape " + detail::shape_text(header.shape) + " is larger than the 2 GiB read at most");
    }
    const std::uint64_t bytes = b * n * width;
    const std::uint64_t available = source.size() - header.data_offset;
    if (available != bytes) {
        source.fail("samples data is " + std::to_string(available) + " bytes, the shape " +
                    detail::shape_text(header.shape) + " needs " + std::to_string(bytes));
    }
    SampleRows out;
    out.rows.assign(static_cast<std::size_t>(b), std::vector<std::int64_t>(static_cast<std::size_t>(n)));
    SequentialReader reader(source, header.data_offset);
    const std::size_t per_take = reader.window() / width;
    const std::uint64_t total = b * n;
    for (std::uint64_t at = 0; at < total;) {
        const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(per_take, total - at));
        const std::byte* data = reader.take(count * width, "samples");
        for (std::size_t i = 0; i < count; ++i, ++at) {
            unsigned char raw[8];
            std::memcpy(raw, data + i * width, width);
            std::uint64_t bits = 0;
            for (std::size_t k = 0; k < width; ++k) {
                const std::size_t shift = big ? 8 * (width - 1 - k) : 8 * k;
                bits |= std::uint64_t{raw[k]} << shift;
            }
            std::int64_t value = 0;
            if (width == 4) {
                value = static_cast<std::int32_t>(static_cast<std::uint32_t>(bits));
            } else {
                value = static_cast<std::int64_t>(bits);
            }
            // C order: element at = r * n + j; Fortran order: at = j * b + r.
            const std::uint64_t r = header.fortran_order ? at % b : at / n;
            const std::uint64_t j = header.fortran_order ? at / b : at % n;
            out.rows[static_cast<std::size_t>(r)][static_cast<std::size_t>(j)] = value;
        }
    }
    return out;
}

bool is_separator(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\r' || c == ';'; }

}  // namespace

SampleRows parse_samples_text(std::string_view text, const std::string& source) {
    SampleRows out;
    std::vector<std::int64_t> single;  // used while every line holds one id
    bool one_per_line = true;
    std::size_t line_number = 0;
    std::size_t start = 0;
    std::vector<std::vector<std::int64_t>> lines;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        ++line_number;
        std::string_view line = text.substr(start, end - start);
        const auto hash = line.find('#');
        if (hash != std::string_view::npos) line = line.substr(0, hash);
        std::vector<std::int64_t> ids;
        std::size_t at = 0;
        while (at < line.size()) {
            while (at < line.size() && is_separator(line[at])) ++at;
            if (at >= line.size()) break;
            std::size_t stop = at;
            while (stop < line.size() && !is_separator(line[stop])) ++stop;
            const std::string_view item = line.substr(at, stop - at);
            std::int64_t value = 0;
            const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
            if (ec != std::errc() || ptr != item.data() + item.size()) {
                throw InputError("samples", source + ": line " + std::to_string(line_number) +
                                                ": a sample must be an integer token id, got \"" +
                                                std::string(item) + "\"");
            }
            ids.push_back(value);
            at = stop;
        }
        if (!ids.empty()) {
            if (ids.size() > 1) one_per_line = false;
            lines.push_back(std::move(ids));
        }
        if (end == text.size()) break;
        start = end + 1;
    }
    if (lines.empty()) throw InputError("samples", source + ": no samples (expected token ids, one a line or one row a line)");
    if (one_per_line) {
        single.reserve(lines.size());
        for (const auto& l : lines) single.push_back(l[0]);
        out.rows.push_back(std::move(single));
    } else {
        out.rows = std::move(lines);
    }
    return out;
}

SampleRows load_samples_bytes(std::string_view bytes, const std::string& source) {
    if (has_extension(source, ".npy")) {
        MemorySource memory(bytes, source);
        return read_npy_samples(memory);
    }
    if (bytes.size() > kSamplesLimitBytes) {
        throw InputError("samples", source + ": " + std::to_string(bytes.size()) + " bytes, larger than the 2 GiB read at most");
    }
    return parse_samples_text(bytes, source);
}

SampleRows load_samples_file(const std::string& path) {
    FileSource file(path);
    if (has_extension(path, ".npy")) return read_npy_samples(file);
    return parse_samples_text(file.read_all(kSamplesLimitBytes), path);
}

}  // namespace samplescope
