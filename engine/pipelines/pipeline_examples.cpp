#include "engine/pipelines/pipeline_examples.h"

#include <cmath>

namespace samplescope {

namespace {

// Logits whose softmax is the given distribution (up to rounding).
std::vector<double> log_of(std::initializer_list<double> probs) {
    std::vector<double> logits;
    for (const double p : probs) logits.push_back(std::log(p));
    return logits;
}

SamplingParams seeded() {
    SamplingParams params;
    params.seed = 0;
    return params;
}

std::vector<PipelineExample> build() {
    std::vector<PipelineExample> list;
    {
        PipelineExample e{"A", "A. Top-p boundary with ties",
                          "Four equal tokens, top_p 0.5: vLLM, HF and llama.cpp keep 2, SGLang keeps 3 (a prefix of "
                          "exactly p stays), FlashInfer keeps 4 (no mass lies strictly above a tied token).",
                          {0, 0, 0, 0}, {}, seeded(), {}, {}, "vllm", "sglang"};
        e.params.top_p = 0.5;
        list.push_back(e);
    }
    {
        PipelineExample e{"B", "B. Joint vs sequential top-k + top-p",
                          "q = [.4, .3, .2, .1], top_k 2, top_p 0.5: sequential stacks renormalise after top-k and "
                          "keep {0}; SGLang's joint filter sees .4 above token 1 and keeps {0, 1}.",
                          log_of({0.4, 0.3, 0.2, 0.1}), {}, seeded(), {}, {}, "vllm", "sglang"};
        e.params.top_k = 2;
        e.params.top_p = 0.5;
        list.push_back(e);
    }
    {
        PipelineExample e{"C", "C. Min-p before vs after top-p",
                          "q = [.4, .3, .2, .1], min_p 0.3, top_p 0.75: vLLM runs min-p first and keeps {0, 1}; HF, "
                          "SGLang and llama.cpp keep {0, 1, 2}.",
                          log_of({0.4, 0.3, 0.2, 0.1}), {}, seeded(), {}, {}, "vllm", "hf"};
        e.params.min_p = 0.3;
        e.params.top_p = 0.75;
        list.push_back(e);
    }
    {
        PipelineExample e{"D1", "D1. Top-p at T = 1 (llama.cpp) vs at T",
                          "Logits [2, 1, 0, -1], T 0.5, top_p 0.9: at T the others keep {0, 1}; llama.cpp truncates "
                          "at T = 1 and keeps {0, 1, 2}.",
                          {2, 1, 0, -1}, {}, seeded(), {}, {}, "vllm", "llamacpp"};
        e.params.temperature = 0.5;
        e.params.top_p = 0.9;
        list.push_back(e);
    }
    {
        PipelineExample e{"D2", "D2. Min-p at T = 1 (llama.cpp) vs at T",
                          "Logits [2, 1, 0, -1], T 2, min_p 0.1: at T the others keep all four; llama.cpp drops "
                          "token 3 at T = 1.",
                          {2, 1, 0, -1}, {}, seeded(), {}, {}, "vllm", "llamacpp"};
        e.params.temperature = 2.0;
        e.params.min_p = 0.1;
        list.push_back(e);
    }
    {
        PipelineExample e{"E", "E. Penalty order",
                          "Tokens 0 (logit 2) and 1 (logit -1) generated once, repetition 2, presence 1: vLLM and "
                          "llama.cpp give 0 and -3; SGLang subtracts first and gives 0.5 and -4.",
                          {2, -1, 0.5, 0.25}, {}, seeded(), {}, {0, 1}, "vllm", "sglang"};
        e.params.repetition_penalty = 2.0;
        e.params.presence_penalty = 1.0;
        list.push_back(e);
    }
    {
        PipelineExample e{"F", "F. Repetition-penalty scope",
                          "Token 0 is in the prompt only, repetition 2, top_k 1: vLLM, HF and llama.cpp penalise it "
                          "(1.5 -> 0.75) and keep {1}; SGLang penalises output ids only and keeps {0}.",
                          {1.5, 1, 0.5, 0}, {}, seeded(), {0}, {}, "vllm", "sglang"};
        e.params.repetition_penalty = 2.0;
        e.params.top_k = 1;
        list.push_back(e);
    }
    {
        PipelineExample e{"G", "G. Top-k ties",
                          "Logits [1, 1, 1, 0], top_k 2: vLLM, HF and FlashInfer keep every id tied with the 2nd "
                          "value, {0, 1, 2}; SGLang and llama.cpp keep exactly 2.",
                          {1, 1, 1, 0}, {}, seeded(), {}, {}, "vllm", "sglang"};
        e.params.top_k = 2;
        list.push_back(e);
    }
    {
        PipelineExample e{"order", "Order A / order B (temperature and top-p)",
                          "Logits [3, 2, 1, 0], T 2, top_p 0.9: temperature first (order A) keeps all four; top-p at "
                          "T = 1 first, as llama.cpp's chain does (order B), keeps {A, B, C}.",
                          {3, 2, 1, 0}, {"A", "B", "C", "D"}, seeded(), {}, {}, "spec", "llamacpp"};
        e.params.temperature = 2.0;
        e.params.top_p = 0.9;
        list.push_back(e);
    }
    return list;
}

}  // namespace

const std::vector<PipelineExample>& pipeline_examples() {
    static const std::vector<PipelineExample> examples = build();
    return examples;
}

}  // namespace samplescope
