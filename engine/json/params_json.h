// Sampling parameters and history to and from JSON objects whose keys are the
// parameter table's keys (temperature, top_k, ..., seed as a decimal string,
// prompt_ids, output_ids, skip_draws).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/row_request.h"
#include "engine/core/sampling_params.h"

namespace samplescope {

// Throws InputError naming the key (and `where`, e.g. "row 3") for an unknown
// key, a wrong type or an invalid value.
RowRequest row_request_from_json(const nlohmann::json& object, const std::string& where);

// A params file: a JSON list with one object per row, `rows` of them. Throws
// InputError naming `source` (the file) and the row for any problem.
std::vector<RowRequest> row_requests_from_json(const nlohmann::json& list, std::size_t rows, const std::string& source);
// A params file larger than this is refused before it is read.
inline constexpr std::uint64_t kParamsFileLimitBytes = 256ULL << 20;
std::vector<RowRequest> load_row_requests_file(const std::string& path, std::size_t rows);

// The parameters that differ from their default (in table order, then the
// lists), and the seed (null when none was chosen yet): what
// row_request_from_json reads back into the same SamplingParams.
nlohmann::ordered_json params_to_json(const SamplingParams& params);

}  // namespace samplescope
