// libFuzzer target: labels of any bytes (one per line of the input) in the
// trace JSON: the output is always valid JSON, and every message escaped.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/base/input_error.h"
#include "engine/json/trace_json.h"
#include "engine/json/trace_labels.h"
#include "engine/pipelines/sampler.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace samplescope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> labels;
    std::size_t start = 0;
    while (start <= text.size() && labels.size() < 64) {
        const auto end = text.find('\n', start);
        labels.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos) break;
        start = end + 1;
    }
    std::vector<double> logits(labels.size());
    for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<double>((i * 7919) % 13) / 4.0;
    SamplingParams params;
    params.seed = size;
    const SampleTrace trace = trace_once(logits, params);
    auto json = trace_to_json(trace, TraceJsonOptions{false});
    add_token_text(json, trace, labels);
    const std::string out = json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    if (nlohmann::json::parse(out, nullptr, false).is_discarded()) std::abort();
    const InputError error("label", labels.front());
    for (const char c : std::string_view(error.what())) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) std::abort();
    }
    return 0;
}
