#include "engine/core/synthetic_logits.h"

#include <cmath>

#include "engine/core/generator.h"

namespace samplescope {

std::int64_t realistic_id_of_rank(std::size_t rank, std::size_t vocab_size) {
    return static_cast<std::int64_t>((rank * 7919 + 1234) % vocab_size);
}

std::vector<double> realistic_logits(std::size_t vocab_size) {
    std::vector<double> logits(vocab_size);
    for (std::size_t rank = 0; rank < vocab_size; ++rank) {
        const double noise = static_cast<double>(mix64(rank + 0x5EED) >> 11) * 0x1.0p-53 - 0.5;
        logits[static_cast<std::size_t>(realistic_id_of_rank(rank, vocab_size))] =
            14.0 - 1.35 * std::log1p(static_cast<double>(rank)) + 0.3 * noise;
    }
    return logits;
}

}  // namespace samplescope
