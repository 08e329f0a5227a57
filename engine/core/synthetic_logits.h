// Deterministic synthetic logits for examples, benchmarks and tests: a
// realistic-looking row (a few strong candidates, a long Zipf-like tail),
// identical on every machine because its noise comes from the SplitMix64
// finaliser used as a hash (no random-number label is taken).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace samplescope {

// The vocabulary size of Llama 3, the size every "full-size" example uses.
inline constexpr std::size_t kLlama3VocabSize = 128256;

// The id that holds rank r (0 = the largest logit) in realistic_logits(V):
// (r x 7919 + 1234) mod V. 7919 is prime; for V = 128,256 = 2^8 x 3 x 167 it
// shares no factor with V, so ranks map to distinct ids scattered over the
// range, as in a real vocabulary.
std::int64_t realistic_id_of_rank(std::size_t rank, std::size_t vocab_size);

// Rank r gets 14 - 1.35 ln(1 + r) plus noise in [-0.15, 0.15).
std::vector<double> realistic_logits(std::size_t vocab_size = kLlama3VocabSize);

}  // namespace samplescope
