// libFuzzer target: the JSON logits reader.
#include "tests/fuzz/fuzz_logits.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    samplescope::fuzz::load_logits_or_refuse(data, size, samplescope::LogitsFormat::Json);
    return 0;
}
