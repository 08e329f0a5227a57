// The parameters the benchmarks call "every stage": every contract stage on,
// with values a serving stack would take (temperature 0.7, top-k 50, top-p
// 0.9, min-p 0.05, the three penalties), seed 1.
#pragma once

#include "engine/core/sampling_params.h"

namespace samplescope::bench {

inline SamplingParams every_stage() {
    SamplingParams p;
    p.temperature = 0.7;
    p.top_k = 50;
    p.top_p = 0.9;
    p.min_p = 0.05;
    p.repetition_penalty = 1.1;
    p.presence_penalty = 0.2;
    p.frequency_penalty = 0.1;
    p.seed = 1;
    return p;
}

}  // namespace samplescope::bench
