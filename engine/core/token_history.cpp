#include "engine/core/token_history.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "engine/base/input_error.h"

namespace samplescope {

std::vector<std::int64_t> parse_id_list(std::string_view text, const char* field) {
    std::vector<std::int64_t> ids;
    std::size_t i = 0;
    while (i < text.size()) {
        const auto is_separator = [](char c) { return c == ',' || std::isspace(static_cast<unsigned char>(c)); };
        while (i < text.size() && is_separator(text[i])) ++i;
        std::size_t end = i;
        while (end < text.size() && !is_separator(text[end])) ++end;
        if (end == i) break;
        const std::string_view item = text.substr(i, end - i);
        std::int64_t value = 0;
        const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
        if (ec != std::errc() || ptr != item.data() + item.size()) {
            throw InputError(field, std::string(field) + " must be integer ids, got \"" + std::string(item) + "\"");
        }
        ids.push_back(value);
        i = end;
    }
    return ids;
}

void check_history_ids(std::span<const std::int64_t> ids, std::size_t vocab_size, const char* field) {
    for (const auto id : ids) {
        if (id < 0 || static_cast<std::uint64_t>(id) >= vocab_size) {
            throw InputError(field, std::string(field) + " has id " + std::to_string(id) + " outside [0, " +
                                        std::to_string(vocab_size) + ")");
        }
    }
}

HistoryCounts count_history(std::span<const std::int64_t> prompt_ids, std::span<const std::int64_t> output_ids,
                            std::size_t vocab_size) {
    check_history_ids(prompt_ids, vocab_size, "prompt_ids");
    check_history_ids(output_ids, vocab_size, "output_ids");
    HistoryCounts counts;

    std::vector<std::int32_t> output(output_ids.begin(), output_ids.end());
    std::sort(output.begin(), output.end());
    for (std::size_t i = 0; i < output.size();) {
        std::size_t j = i;
        while (j < output.size() && output[j] == output[i]) ++j;
        counts.output_counts.emplace_back(output[i], static_cast<std::uint32_t>(j - i));
        i = j;
    }

    counts.context_ids.assign(prompt_ids.begin(), prompt_ids.end());
    counts.context_ids.insert(counts.context_ids.end(), output.begin(), output.end());
    std::sort(counts.context_ids.begin(), counts.context_ids.end());
    counts.context_ids.erase(std::unique(counts.context_ids.begin(), counts.context_ids.end()),
                             counts.context_ids.end());
    return counts;
}

}  // namespace samplescope
