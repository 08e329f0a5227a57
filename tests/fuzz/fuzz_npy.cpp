// libFuzzer target: the .npy reader. The input's length picks whether uint16
// data reads as bfloat16, so both paths are reached.
#include "tests/fuzz/fuzz_logits.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    samplescope::LoadOptions options;
    options.u2_as_bfloat16 = size % 2 == 1;
    samplescope::fuzz::load_logits_or_refuse(data, size, samplescope::LogitsFormat::Npy, options);
    return 0;
}
