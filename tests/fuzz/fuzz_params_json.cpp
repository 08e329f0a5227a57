// libFuzzer target: the batch params reader (engine/json/params_json.h). A bad
// list is an InputError; a good one gives one request per row, each valid.
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/base/input_error.h"
#include "engine/json/params_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace samplescope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
    if (json.is_discarded()) return 0;
    const std::size_t rows = json.is_array() ? json.size() : 1;
    try {
        const auto requests = row_requests_from_json(json, rows, "fuzz");
        if (requests.size() != rows) std::abort();
        for (const auto& request : requests) {
            validate(request.params);  // throws if the reader let a bad value through
            if (request.skip_draws == std::numeric_limits<std::uint64_t>::max()) std::abort();
            for (const auto id : request.prompt_ids) {
                if (id < 0) std::abort();
            }
        }
    } catch (const InputError& error) {
        for (const char c : std::string_view(error.what())) {
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) std::abort();  // messages are escaped
        }
    }
    return 0;
}
