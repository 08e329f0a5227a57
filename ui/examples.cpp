#include "ui/examples.h"

#include <cmath>

#include "engine/generator.h"

namespace samplescope::ui {

Example worked_example() {
    Example example;
    example.name = "Contract worked example (V = 5)";
    example.description = "The sampling contract's worked example: x = [1, 3, 2, 3, -1], T = 1, top_k = 3, "
                          "top_p = 0.8, seed 0; the token is 3 with logprob -0.92487.";
    example.logits = {1.0, 3.0, 2.0, 3.0, -1.0};
    example.params.top_k = 3;
    example.params.top_p = 0.8;
    example.params.seed = 0;
    return example;
}

Example abcd_example() {
    Example example;
    example.name = "Four tokens A, B, C, D";
    example.description = "The teaching page's logits [3, 2, 1, 0] for A, B, C, D at T = 1 with top_p = 0.9: "
                          "A, B and C survive (cumulative 0.6439, 0.8808, 0.9679).";
    example.logits = {3.0, 2.0, 1.0, 0.0};
    example.labels = {"A", "B", "C", "D"};
    example.params.top_p = 0.9;
    example.params.seed = 0;
    return example;
}

Example realistic_example() {
    Example example;
    example.name = "Realistic row (V = 128,256)";
    example.description = "A generated full-size row: Zipf-like (logit falls with log rank) plus small "
                          "deterministic noise, every stage switched on.";
    const std::size_t vocab = kRealisticVocab;
    example.logits.resize(vocab);
    // Rank r lands on id (r x 7919 + 1234) mod V: 7919 is prime and shares no
    // factor with V = 2^8 x 3 x 167, so this is a permutation and the top
    // tokens are scattered over the id range as in a real vocabulary.
    for (std::size_t rank = 0; rank < vocab; ++rank) {
        const std::size_t id = (rank * 7919 + 1234) % vocab;
        // mix64 is used here as a hash, not as a sampling stream: the row is the
        // same on every machine and takes no random-number label.
        const double noise = static_cast<double>(mix64(rank + 0x5EED) >> 11) * 0x1.0p-53 - 0.5;
        example.logits[id] = 14.0 - 1.35 * std::log1p(static_cast<double>(rank)) + 0.3 * noise;
    }
    example.params.temperature = 0.8;
    example.params.repetition_penalty = 1.1;
    example.params.presence_penalty = 0.3;
    example.params.frequency_penalty = 0.2;
    example.params.top_k = 100;
    example.params.top_p = 0.9;
    example.params.min_p = 0.02;
    example.params.seed = 42;
    // The history names a few of the most likely tokens, so the penalties visibly move them.
    const auto id_of_rank = [vocab](std::size_t rank) { return static_cast<std::int64_t>((rank * 7919 + 1234) % vocab); };
    example.prompt_ids = {id_of_rank(0), id_of_rank(3), id_of_rank(17), id_of_rank(250)};
    example.output_ids = {id_of_rank(1), id_of_rank(1), id_of_rank(5)};
    return example;
}

std::vector<Example> built_in_examples() { return {worked_example(), abcd_example(), realistic_example()}; }

}  // namespace samplescope::ui
