// Deterministic synthetic logits for examples, benchmarks and tests: a
// realistic-looking row (peaked head, long Zipf-like tail) of any size,
// identical on every machine because it is built from the SplitMix64 finaliser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace samplescope {

// The vocabulary size of Llama 3, the size every "full-size" example uses.
inline constexpr std::size_t kLlama3VocabSize = 128256;

// Id i gets a random rank r in [0, V) and logit -1.1 * ln(1 + r) plus a little
// noise, so a few ids hold most of the mass and the tail is long.
std::vector<double> realistic_logits(std::size_t vocab_size, std::uint64_t seed = 0);

}  // namespace samplescope
