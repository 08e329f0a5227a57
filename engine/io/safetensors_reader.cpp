// .safetensors: an 8-byte little-endian header length, a JSON header mapping
// tensor names to {dtype, shape, data_offsets}, then the data. Format
// reference: the safetensors README (huggingface/safetensors).
#include <algorithm>
#include <utility>
#include <nlohmann/json.hpp>

#include "engine/io/logits_readers.h"

namespace samplescope::detail {

namespace {

// The safetensors reference implementation refuses headers above 100 MB too.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
constexpr std::uint64_t kMaxIds = 1u << 24;

struct TensorEntry {
    std::string dtype;
    std::vector<std::uint64_t> shape;
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
};

TensorEntry entry_of(const std::string& name, const nlohmann::json& value, const ByteSource& source) {
    const auto bad = [&](const std::string& problem) { source.fail("tensor \"" + name + "\": " + problem); };
    if (!value.is_object()) bad("its header entry is not an object");
    TensorEntry entry;
    const auto dtype = value.find("dtype");
    if (dtype == value.end() || !dtype->is_string()) bad("no \"dtype\" string in its header entry");
    entry.dtype = dtype->get<std::string>();
    const auto shape = value.find("shape");
    if (shape == value.end() || !shape->is_array()) bad("no \"shape\" array in its header entry");
    for (const auto& dim : *shape) {
        if (!dim.is_number_unsigned()) bad("its shape holds something other than non-negative integers");
        entry.shape.push_back(dim.get<std::uint64_t>());
    }
    const auto offsets = value.find("data_offsets");
    if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned()) {
        bad("\"data_offsets\" must be two non-negative integers [begin, end]");
    }
    entry.begin = (*offsets)[0].get<std::uint64_t>();
    entry.end = (*offsets)[1].get<std::uint64_t>();
    if (entry.end < entry.begin) bad("data_offsets end before they begin");
    return entry;
}

std::optional<FloatType> float_type_of(const std::string& dtype) {
    if (dtype == "F16") return FloatType::F16;
    if (dtype == "BF16") return FloatType::BF16;
    if (dtype == "F32") return FloatType::F32;
    if (dtype == "F64") return FloatType::F64;
    return std::nullopt;
}

std::vector<std::int64_t> read_ids(const std::string& name, const TensorEntry& entry, std::uint64_t data_start,
                                   const ByteSource& source) {
    std::size_t size = 0;
    if (entry.dtype == "I64") size = 8;
    if (entry.dtype == "I32") size = 4;
    if (size == 0) source.fail("tensor \"" + name + "\" must be I64 or I32 ids, not " + entry.dtype);
    std::uint64_t count = 1;
    for (const auto dim : entry.shape) {
        if (dim != 0 && count > kMaxIds / dim) source.fail("tensor \"" + name + "\" holds too many ids");
        count *= dim;
    }
    if (entry.end - entry.begin != count * size) {
        source.fail("tensor \"" + name + "\": data_offsets span " + std::to_string(entry.end - entry.begin) +
                    " bytes, its shape " + shape_text(entry.shape) + " needs " + std::to_string(count * size));
    }
    std::vector<std::byte> bytes(static_cast<std::size_t>(count * size));
    source.read(data_start + entry.begin, bytes);
    std::vector<std::int64_t> ids(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        std::uint64_t value = 0;
        for (std::size_t b = 0; b < size; ++b) value |= std::uint64_t{std::to_integer<unsigned>(bytes[i * size + b])} << (8 * b);
        if (size == 4) value = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(value)));
        ids[i] = static_cast<std::int64_t>(value);
    }
    return ids;
}

std::string name_list(const std::vector<std::string>& names) {
    std::string text;
    for (std::size_t i = 0; i < names.size() && i < 8; ++i) text += (i ? ", " : "") + names[i];
    if (names.size() > 8) text += ", ... (" + std::to_string(names.size()) + " in all)";
    return text;
}

// The JSON header; `data_start` receives where the data begins.
nlohmann::json read_header(const ByteSource& source, std::uint64_t& data_start) {
    if (source.size() < 8) source.fail("not a .safetensors file (" + std::to_string(source.size()) + " bytes, too short for the header)");
    std::byte prefix[8];
    source.read(0, prefix);
    std::uint64_t header_length = 0;
    for (int i = 0; i < 8; ++i) header_length |= std::uint64_t{std::to_integer<unsigned>(prefix[i])} << (8 * i);
    if (header_length > kMaxHeaderBytes) {
        source.fail("not a .safetensors file (the first 8 bytes give a header of " + std::to_string(header_length) + " bytes)");
    }
    if (header_length > source.size() - 8) {
        source.fail("truncated .safetensors header: it claims " + std::to_string(header_length) + " bytes, the file has " +
                    std::to_string(source.size() - 8) + " after the length");
    }
    std::string header(static_cast<std::size_t>(header_length), '\0');
    source.read(8, std::as_writable_bytes(std::span(header.data(), header.size())));
    if (header.empty() || header.front() != '{') source.fail("not a .safetensors file (the header is not a JSON object)");
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(header);
    } catch (const nlohmann::json::exception&) {
        source.fail("malformed .safetensors header (not valid JSON)");
    }
    if (!doc.is_object()) source.fail("not a .safetensors file (the header is not a JSON object)");
    data_start = 8 + header_length;
    return doc;
}

bool is_float_entry(const nlohmann::json& value) {
    return value.is_object() && value.contains("dtype") && value["dtype"].is_string() &&
           float_type_of(value["dtype"].get<std::string>()).has_value();
}

}  // namespace

std::vector<std::string> safetensors_float_tensors(const ByteSource& source) {
    std::uint64_t data_start = 0;
    const nlohmann::json doc = read_header(source, data_start);
    std::vector<std::string> names;
    for (const auto& [name, value] : doc.items()) {
        if (name != "__metadata__" && is_float_entry(value)) names.push_back(name);
    }
    return names;
}

LogitsMatrix read_safetensors(const ByteSource& source, const LoadOptions& options) {
    std::uint64_t data_start = 0;
    nlohmann::json doc = read_header(source, data_start);
    const std::uint64_t data_size = source.size() - data_start;

    std::vector<std::string> names;
    std::vector<std::string> float_names;
    for (const auto& [name, value] : doc.items()) {
        if (name == "__metadata__") continue;
        names.push_back(name);
        if (is_float_entry(value)) float_names.push_back(name);
    }
    if (names.empty()) source.fail("the .safetensors file holds no tensors");
    // Tensors share one data section: two whose bytes overlap mean the header
    // lies about at least one of them, so none is trusted.
    {
        std::vector<std::pair<TensorEntry, std::string>> spans;
        spans.reserve(names.size());
        for (const auto& name : names) spans.emplace_back(entry_of(name, doc[name], source), name);
        std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
            return a.first.begin != b.first.begin ? a.first.begin < b.first.begin : a.first.end < b.first.end;
        });
        const std::pair<TensorEntry, std::string>* previous = nullptr;
        for (const auto& span : spans) {
            if (span.first.begin == span.first.end) continue;  // an empty tensor holds no bytes
            if (previous && span.first.begin < previous->first.end) {
                const auto range = [](const TensorEntry& e) {
                    return "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + ")";
                };
                source.fail("tensors \"" + previous->second + "\" " + range(previous->first) + " and \"" + span.second +
                            "\" " + range(span.first) + " overlap in the data");
            }
            previous = &span;
        }
    }
    std::string chosen = options.tensor;
    if (chosen.empty()) {
        if (names.size() == 1) {
            chosen = names[0];
        } else if (doc.contains("logits")) {
            chosen = "logits";
        } else if (float_names.size() == 1) {
            chosen = float_names[0];
        } else {
            source.fail("holds " + std::to_string(names.size()) + " tensors; pick one with --tensor NAME: " + name_list(names));
        }
    } else if (!doc.contains(chosen) || chosen == "__metadata__") {
        source.fail("has no tensor \"" + chosen + "\"; it holds: " + name_list(names));
    }

    const TensorEntry entry = entry_of(chosen, doc[chosen], source);
    const auto type = float_type_of(entry.dtype);
    if (!type) source.fail("tensor \"" + chosen + "\" has unsupported dtype " + entry.dtype + " (expected F16, BF16, F32 or F64)");
    if (entry.end > data_size) {
        source.fail("truncated data: tensor \"" + chosen + "\" ends at byte " + std::to_string(entry.end) +
                    " of the data, the file has " + std::to_string(data_size));
    }
    ArrayLayout layout;
    layout.shape = entry.shape;
    layout.format = {*type, false};
    layout.data_offset = data_start + entry.begin;
    layout.data_bytes = entry.end - entry.begin;
    std::size_t first_bad = kAllFinite;
    LogitsMatrix matrix = read_float_array(source, layout, options, first_bad);
    if (names.size() > 1) matrix.notes.insert(matrix.notes.begin(), "tensor \"" + chosen + "\" " + shape_text(entry.shape) + " " + entry.dtype);

    for (const auto* ids_name : {"prompt_ids", "output_ids"}) {
        if (chosen == ids_name || !doc.contains(ids_name)) continue;
        const TensorEntry ids_entry = entry_of(ids_name, doc[ids_name], source);
        if (ids_entry.end > data_size) source.fail(std::string("truncated data: tensor \"") + ids_name + "\" ends past the file");
        auto ids = read_ids(ids_name, ids_entry, data_start, source);
        (std::string(ids_name) == "prompt_ids" ? matrix.prompt_ids : matrix.output_ids) = std::move(ids);
    }
    // Last, as when the check was a pass of its own after the whole load.
    if (first_bad != kAllFinite) fail_not_finite(matrix, first_bad, source);
    return matrix;
}

}  // namespace samplescope::detail
