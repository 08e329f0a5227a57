// A request's history as the penalties see it: the distinct ids of prompt and
// output (repetition penalty) and the count of each generated id (presence and
// frequency). Sized by the history, never by the vocabulary.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace samplescope {

struct HistoryCounts {
    std::vector<std::int32_t> context_ids;  // distinct ids of prompt and output, ascending
    std::vector<std::pair<std::int32_t, std::uint32_t>> output_counts;  // (id, count > 0), ascending id
};

// Parses ids typed as "1, 2 2" (commas and/or whitespace); throws InputError
// naming the field and the first item that is not an integer.
std::vector<std::int64_t> parse_id_list(std::string_view text, const char* field);

// Throws InputError naming the first id outside [0, vocab_size).
void check_history_ids(std::span<const std::int64_t> ids, std::size_t vocab_size, const char* field);

HistoryCounts count_history(std::span<const std::int64_t> prompt_ids, std::span<const std::int64_t> output_ids,
                            std::size_t vocab_size);

}  // namespace samplescope
