// libFuzzer target: the n-gram model reader (engine/models/ngram_trie.h) and
// the successor index and rows built on what it accepts. An input that starts
// like a model file is read as one; any other input is a list of patches
// (4-byte offset, 1-byte value) and a length applied to a small valid trigram
// model, so short inputs reach the checks deep inside the bit arrays.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/input_error.h"
#include "engine/models/ngram_model.h"
#include "tests/support/ngram_builder.h"

namespace {

std::string patched(const std::uint8_t* data, std::size_t size) {
    static const std::string model = samplescope::testing::write_ngram_trie(samplescope::testing::tiny_trigram_model());
    std::string bytes = model;
    std::size_t i = 0;
    for (; i + 5 <= size; i += 5) {
        const std::uint32_t at = static_cast<std::uint32_t>(data[i]) | static_cast<std::uint32_t>(data[i + 1]) << 8 |
                                 static_cast<std::uint32_t>(data[i + 2]) << 16 |
                                 static_cast<std::uint32_t>(data[i + 3]) << 24;
        bytes[at % bytes.size()] = static_cast<char>(data[i + 4]);
    }
    if (i < size) bytes.resize(bytes.size() - data[i] % 64);  // a leftover byte cuts the end
    return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view raw(reinterpret_cast<const char*>(data), size);
    const bool file = raw.substr(0, 4) == "Trie";
    try {
        auto trie = samplescope::NgramTrie::parse(file ? std::string(raw) : patched(data, size), "fuzz.lm.bin");
        const auto model = samplescope::NgramModel::from_trie(std::move(trie), "fuzz.lm.bin");
        std::vector<double> row;
        const auto vocab = static_cast<std::uint32_t>(model->vocab_size());
        for (std::uint32_t h = 0; h < vocab && h < 8; ++h) {
            const std::uint32_t history[] = {h, (h * 7 + 1) % vocab};
            model->row_for_history(history, row);
            model->row_for_history(std::span(history).first(1), row);
        }
    } catch (const samplescope::InputError&) {
    }
    return 0;
}
