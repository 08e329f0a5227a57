#include "ui/common/examples.h"

#include <cmath>

#include "engine/core/synthetic_logits.h"

namespace samplescope::ui {

Example workedExample() {
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

Example abcdExample() {
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

Example realisticExample() {
    Example example;
    example.name = "Realistic row (V = 128,256)";
    example.description = "A generated full-size row: Zipf-like (logit falls with log rank) plus small "
                          "deterministic noise, every stage switched on.";
    example.logits = realistic_logits(kRealisticVocab);
    example.params.temperature = 0.8;
    example.params.repetition_penalty = 1.1;
    example.params.presence_penalty = 0.3;
    example.params.frequency_penalty = 0.2;
    example.params.top_k = 100;
    example.params.top_p = 0.9;
    example.params.min_p = 0.02;
    example.params.seed = 42;
    // The history names a few of the most likely tokens, so the penalties visibly move them.
    const auto id_of_rank = [](std::size_t rank) { return realistic_id_of_rank(rank, kRealisticVocab); };
    example.prompt_ids = {id_of_rank(0), id_of_rank(3), id_of_rank(17), id_of_rank(250)};
    example.output_ids = {id_of_rank(1), id_of_rank(1), id_of_rank(5)};
    return example;
}

std::vector<Example> builtInExamples() { return {workedExample(), abcdExample(), realisticExample()}; }

}  // namespace samplescope::ui
