#include "engine/io/logits_loader.h"

#include <cctype>
#include <cstring>
#include <new>

#include "engine/base/input_error.h"
#include "engine/io/logits_readers.h"

namespace samplescope {

namespace {

LogitsFormat format_by_extension(const std::string& name) {
    if (has_extension(name, ".npy")) return LogitsFormat::Npy;
    if (has_extension(name, ".safetensors")) return LogitsFormat::Safetensors;
    if (has_extension(name, ".json")) return LogitsFormat::Json;
    if (has_extension(name, ".txt") || has_extension(name, ".csv") || has_extension(name, ".tsv")) return LogitsFormat::Text;
    return LogitsFormat::Auto;
}

// For files whose name does not say: the first bytes do.
LogitsFormat format_by_content(const ByteSource& source) {
    std::byte head[16]{};
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof head, source.size()));
    source.read(0, std::span(head, n));
    if (n >= 6 && std::memcmp(head, "\x93NUMPY", 6) == 0) return LogitsFormat::Npy;
    if (n >= 9 && std::to_integer<char>(head[8]) == '{' && std::to_integer<unsigned>(head[7]) == 0) {
        return LogitsFormat::Safetensors;
    }
    for (std::size_t i = 0; i < n; ++i) {
        const char c = std::to_integer<char>(head[i]);
        if (std::isspace(static_cast<unsigned char>(c))) continue;
        if (c == '[' || c == '{') return LogitsFormat::Json;
        break;
    }
    return LogitsFormat::Text;
}

LogitsMatrix load_from(const ByteSource& source, const LoadOptions& options) {
    if (source.size() == 0) source.fail("the file is empty");
    LogitsFormat format = options.format;
    if (format == LogitsFormat::Auto) format = format_by_extension(source.name());
    if (format == LogitsFormat::Auto) format = format_by_content(source);
    LogitsMatrix matrix;
    // .npy and .safetensors check NaN and +inf as they convert (the last
    // thing they do, so errors come in the same order); the text formats here.
    bool checked = false;
    try {
        switch (format) {
            case LogitsFormat::Npy: matrix = detail::read_npy(source, options); checked = true; break;
            case LogitsFormat::Safetensors: matrix = detail::read_safetensors(source, options); checked = true; break;
            case LogitsFormat::Json: matrix = detail::read_json_logits(source, options); break;
            case LogitsFormat::Auto:
            case LogitsFormat::Text: matrix = detail::read_text_logits(source, options); break;
        }
    } catch (const std::bad_alloc&) {
        source.fail("not enough memory to load the file");
    } catch (const std::length_error&) {
        source.fail("not enough memory to load the file");
    }
    if (!checked) detail::check_finite_or_minus_inf(matrix, source);
    return matrix;
}

}  // namespace

const char* logits_format_name(LogitsFormat format) {
    switch (format) {
        case LogitsFormat::Auto: return "auto";
        case LogitsFormat::Npy: return "npy";
        case LogitsFormat::Safetensors: return "safetensors";
        case LogitsFormat::Json: return "json";
        case LogitsFormat::Text: return "text";
    }
    return "?";
}

LogitsMatrix load_logits_file(const std::string& path) { return load_logits_file(path, LoadOptions{}); }

LogitsMatrix load_logits_file(const std::string& path, const LoadOptions& options) {
    const FileSource source(path);
    return load_from(source, options);
}

std::vector<std::string> safetensors_float_tensors(const std::string& path) {
    const FileSource source(path);
    return detail::safetensors_float_tensors(source);
}

LogitsMatrix load_logits_bytes(std::string_view bytes, const std::string& source, const LoadOptions& options) {
    const MemorySource memory(bytes, source);
    return load_from(memory, options);
}

LogitsMatrix parse_logits_text(const std::string& text, const std::string& source) {
    const MemorySource memory(text, source);
    LogitsMatrix matrix = detail::parse_text_logits(text, memory);
    detail::check_finite_or_minus_inf(matrix, memory);
    return matrix;
}

}  // namespace samplescope
