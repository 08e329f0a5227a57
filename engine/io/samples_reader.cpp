#include "engine/io/samples_reader.h"

#include <charconv>
#include <cstring>

#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/io/logits_readers.h"

namespace samplescope {

namespace {

// The largest file of draws read: 2^31 bytes of int64 is 268 million draws.
constexpr std::uint64_t kSamplesLimitBytes = 1ull << 31;

// "the draws in F (N ids)", and the logits when the run holds them too.
std::string draws_what(const std::string& source, std::uint64_t ids, std::uint64_t held) {
    return "reading the draws in " + source + " (" + std::to_string(ids) + " ids" + (held > 0 ? ", with the logits" : "") +
           ")";
}

SampleRows read_npy_samples(const ByteSource& source, std::uint64_t memory_budget, std::uint64_t held) {
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
    check_memory(saturating_add(held, samples_memory_estimate(b * n, b, 0)), memory_budget,
                 draws_what(source.name(), b * n, held));
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

// Calls fn(line_number, line) for every line of `text`, its comment cut off.
template <typename Fn>
void for_each_line(std::string_view text, Fn&& fn) {
    std::size_t line_number = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        ++line_number;
        std::string_view line = text.substr(start, end - start);
        const auto hash = line.find('#');
        if (hash != std::string_view::npos) line = line.substr(0, hash);
        fn(line_number, line);
        if (end == text.size()) break;
        start = end + 1;
    }
}

// The ids of one line, each passed to fn; the count returned.
template <typename Fn>
std::size_t read_ids(std::string_view line, std::size_t line_number, const std::string& source, Fn&& fn) {
    std::size_t count = 0;
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
                                            ": a sample must be an integer token id, got \"" + std::string(item) + "\"");
        }
        fn(value);
        ++count;
        at = stop;
    }
    return count;
}

}  // namespace

std::uint64_t samples_memory_estimate(std::uint64_t draws, std::uint64_t rows, std::uint64_t text_bytes) {
    // Each row's vector: its 24-byte handle and the allocator's header and rounding.
    return saturating_add(saturating_add(saturating_mul(draws, 16), saturating_mul(rows, 64)), text_bytes);
}

SampleRows parse_samples_text(std::string_view text, const std::string& source, std::uint64_t memory_budget,
                              std::uint64_t held) {
    // Pass 1: every id checked and counted, nothing stored.
    std::uint64_t total = 0;
    std::uint64_t lines = 0;
    bool one_per_line = true;
    for_each_line(text, [&](std::size_t number, std::string_view line) {
        const std::size_t count = read_ids(line, number, source, [](std::int64_t) {});
        if (count == 0) return;
        ++lines;
        total += count;
        if (count > 1) one_per_line = false;
    });
    if (lines == 0) throw InputError("samples", source + ": no samples (expected token ids, one a line or one row a line)");
    check_memory(saturating_add(held, samples_memory_estimate(total, one_per_line ? 1 : lines, text.size())),
                 memory_budget, draws_what(source, total, held));
    // Pass 2: stored in vectors of exactly their size.
    SampleRows out;
    if (one_per_line) {
        out.rows.emplace_back().reserve(static_cast<std::size_t>(total));
        auto& row = out.rows.back();
        for_each_line(text, [&](std::size_t number, std::string_view line) {
            read_ids(line, number, source, [&row](std::int64_t id) { row.push_back(id); });
        });
        return out;
    }
    out.rows.reserve(static_cast<std::size_t>(lines));
    for_each_line(text, [&](std::size_t number, std::string_view line) {
        const std::size_t count = read_ids(line, number, source, [](std::int64_t) {});
        if (count == 0) return;
        auto& row = out.rows.emplace_back();
        row.reserve(count);
        read_ids(line, number, source, [&row](std::int64_t id) { row.push_back(id); });
    });
    return out;
}

SampleRows load_samples_bytes(std::string_view bytes, const std::string& source, std::uint64_t memory_budget,
                              std::uint64_t held) {
    if (has_extension(source, ".npy")) {
        MemorySource memory(bytes, source);
        return read_npy_samples(memory, memory_budget, held);
    }
    if (bytes.size() > kSamplesLimitBytes) {
        throw InputError("samples", source + ": " + std::to_string(bytes.size()) + " bytes, larger than the 2 GiB read at most");
    }
    return parse_samples_text(bytes, source, memory_budget, held);
}

SampleRows load_samples_file(const std::string& path, std::uint64_t memory_budget, std::uint64_t held) {
    FileSource file(path);
    if (has_extension(path, ".npy")) return read_npy_samples(file, memory_budget, held);
    // The text is held while it is read: counted before it is.
    check_memory(saturating_add(held, file.size()), memory_budget,
                 "reading the draws in " + path + " (" + std::to_string(file.size()) + " bytes of text" +
                     (held > 0 ? ", with the logits" : "") + ")");
    return parse_samples_text(file.read_all(kSamplesLimitBytes), path, memory_budget, held);
}

}  // namespace samplescope
