// libFuzzer target: the .safetensors reader, with the tensor chosen
// automatically and by name.
#include "tests/fuzz/fuzz_logits.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    samplescope::fuzz::load_logits_or_refuse(data, size, samplescope::LogitsFormat::Safetensors);
    samplescope::LoadOptions named;
    named.tensor = std::string("x");
    samplescope::fuzz::load_logits_or_refuse(data, size, samplescope::LogitsFormat::Safetensors, named);
    return 0;
}
