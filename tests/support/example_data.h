// The small example files under examples/data/ and the fuzz seed corpora under
// tests/fuzz/corpus/, made by the project's own writers. make_example_data
// writes them; test_example_data checks the committed copies still match.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace samplescope::testing {

// (path relative to the repository root, bytes), in a fixed order.
using GeneratedFiles = std::vector<std::pair<std::string, std::string>>;

GeneratedFiles example_data_files();
GeneratedFiles fuzz_seed_files();

// The example logits: two rows over the example vocabulary's 16 ids.
std::vector<double> example_logits();
inline constexpr std::size_t kExampleRows = 2;
inline constexpr std::size_t kExampleVocab = 16;

}  // namespace samplescope::testing
