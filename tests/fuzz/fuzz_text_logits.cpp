// libFuzzer target: the plain text / CSV / TSV logits reader.
#include "tests/fuzz/fuzz_logits.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    samplescope::fuzz::load_logits_or_refuse(data, size, samplescope::LogitsFormat::Text);
    return 0;
}
