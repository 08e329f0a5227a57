#include "engine/token_history.h"

#include <algorithm>
#include <string>

#include "engine/input_error.h"

namespace samplescope {

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
