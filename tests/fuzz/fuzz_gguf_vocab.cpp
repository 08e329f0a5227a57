// libFuzzer target: the GGUF metadata reader.
#include "tests/fuzz/fuzz_vocabulary.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    samplescope::fuzz::load_vocabulary_or_refuse(data, size, samplescope::VocabularyFormat::Gguf);
    return 0;
}
