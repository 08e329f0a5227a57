// libFuzzer target: the response readers (engine/responses/), and the
// explanation of whatever they accept. The input's first bytes pick the name
// a file would have (an .npy or .safetensors signature, else JSON or a
// stream); an InputError is the expected answer to a bad response, anything
// else escaping is a finding, and an accepted one must explain consistently.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "engine/base/input_error.h"
#include "engine/responses/explain_setup.h"
#include "engine/responses/response_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace samplescope;
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    std::string name = "fuzz.json";
    if (bytes.substr(0, 6) == "\x93NUMPY") name = "fuzz.npy";
    if (size > 8 && bytes[8] == '{') name = "fuzz.safetensors";
    ResponseLoadOptions options;
    options.memory_limit_bytes = 256u << 20;  // inside libFuzzer's default 2 GB RSS limit
    if (name == "fuzz.npy") options.logprobs_mode = "output_scores";
    if (name != "fuzz.json") options.generated_ids = {0, 1};
    try {
        const Response response = load_response_bytes(bytes, name, options);
        if (response.positions.empty()) std::abort();
        for (const char* pipeline : {"", "sglang", "llamacpp"}) {
            ExplainRequest request;
            request.pipeline = pipeline;
            request.vocab_size = 1000;
            ExplainSetup setup;
            try {
                setup = resolve_explain(response, request);
            } catch (const InputError&) {
                continue;  // a pipeline without modes, a mode that contradicts it
            }
            const ResponseExplanation explanation = explain_response(response, setup.settings);
            if (explanation.kept + explanation.excluded + explanation.undecidable != response.positions.size()) std::abort();
            for (const auto& token : explanation.tokens) {
                if (token.rank_lo < 1 || (token.rank_hi && *token.rank_hi < token.rank_lo)) std::abort();
                for (const auto& stage : token.stages) {
                    if (stage.lo && std::isnan(*stage.lo)) std::abort();
                    if (stage.hi && std::isnan(*stage.hi)) std::abort();
                }
            }
        }
    } catch (const InputError&) {
    }
    return 0;
}
