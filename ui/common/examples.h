// The built-in examples of the Examples menu; the app opens on one of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/sampling_params.h"
#include "engine/core/synthetic_logits.h"
#include "engine/stages/pipeline.h"

namespace samplescope::ui {

struct Example {
    std::string name;         // menu text
    std::string description;  // status-bar text: where the numbers come from
    std::vector<double> logits;
    std::vector<std::string> labels;  // empty: shown as tok_<id>
    SamplingParams params;
    std::vector<std::int64_t> prompt_ids;
    std::vector<std::int64_t> output_ids;
};

// The sampling contract's worked example: V = 5, x = [1, 3, 2, 3, -1], T = 1,
// top_k = 3, top_p = 0.8, seed 0 (token 3, logprob -0.92487).
Example workedExample();

// The teaching page's four tokens A, B, C, D with logits [3, 2, 1, 0], shown
// with its top-p setting (top_p = 0.9 keeps A, B, C at T = 1).
Example abcdExample();

// A deterministic full-size row, V = 128,256: peaked, with a long tail, every
// stage of the pipeline switched on, and a short history for the penalties;
// its top ranks and its history carry English words ("and the cat sat" "very very still").
inline constexpr std::size_t kRealisticVocab = kLlama3VocabSize;
Example realisticExample();

// All of them, in menu order.
std::vector<Example> builtInExamples();

// One of llama.cpp's extra samplers (or the order of two) on a row where its
// effect is plain, opened in Compare pipelines: a pipeline that runs it beside
// one that does not (or the two orders), with the stage plots of `stages_side`.
struct SamplerExample {
    std::string key;          // short id, e.g. "dry" (the --sampler-example flag)
    std::string title;        // menu text
    std::string description;  // status-bar text: what to look at
    std::vector<double> logits;
    std::vector<std::string> labels;
    SamplingParams params;    // seed set, so a run replays
    std::vector<std::int64_t> prompt_ids;
    std::vector<std::int64_t> output_ids;
    std::string pipeline_a;   // a preset's name, or a custom step list (custom_pipeline's syntax)
    std::string pipeline_b;
    int stages_side = 1;      // 0: A's stage plots, 1: B's
};

// In menu order: DRY, XTC, mirostat 2, mirostat 1, dynamic temperature,
// typical-p, top-n-sigma, then top-k before vs after XTC.
const std::vector<SamplerExample>& samplerExamples();

// A preset by name, else a custom pipeline from the step list.
Pipeline samplerExamplePipeline(const std::string& name_or_steps);

}  // namespace samplescope::ui
