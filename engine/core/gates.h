// The on/off gates of the stages as functions of plain values, written once for
// the reference (engine/core/sampling_params.h's uses_*()) and the batch
// engine's row parameters (kernels/row_params.h), host and device alike. Also
// the one conversion between the two encodings of "top-k off": 0 in a request,
// V in the batch engine's rows (so a kernel compares k < V and nothing else).
#pragma once

#include <cstdint>

#include "engine/base/portable.h"

namespace samplescope {

SS_HD constexpr bool gate_greedy(double temperature) { return temperature == 0.0; }
SS_HD constexpr bool gate_repetition(double repetition_penalty) { return repetition_penalty != 1.0; }
SS_HD constexpr bool gate_presence_frequency(double presence, double frequency) {
    return presence != 0.0 || frequency != 0.0;
}
SS_HD constexpr bool gate_temperature(double temperature) {
    return temperature != 1.0 && !gate_greedy(temperature);
}
SS_HD constexpr bool gate_top_k(std::int64_t top_k, std::int64_t vocab) { return top_k > 0 && top_k < vocab; }
SS_HD constexpr bool gate_top_p(double top_p) { return top_p < 1.0; }
SS_HD constexpr bool gate_min_p(double min_p) { return min_p > 0.0; }
// llama.cpp's extra samplers (reference only; the batch engine has none).
SS_HD constexpr bool gate_typical_p(double typical_p) { return typical_p < 1.0; }
SS_HD constexpr bool gate_top_n_sigma(double n) { return n > 0.0; }
SS_HD constexpr bool gate_dynatemp(double range) { return range > 0.0; }
// llama_sample_xtc_apply returns at probability <= 0 or threshold > 0.5.
SS_HD constexpr bool gate_xtc(double probability, double threshold) { return probability > 0.0 && threshold <= 0.5; }
// llama_sampler_dry_apply returns at multiplier 0 or a window of 0 (base < 1 is refused here).
SS_HD constexpr bool gate_dry(double multiplier, std::int64_t last_n) { return multiplier != 0.0 && last_n != 0; }
SS_HD constexpr bool gate_mirostat(std::int64_t version) { return version != 0; }

// A request's top_k (0 = off) as the batch engine's rows hold it (V = off), and back.
SS_HD constexpr std::int64_t top_k_to_row(std::int64_t top_k, std::int64_t vocab) {
    return gate_top_k(top_k, vocab) ? top_k : vocab;
}
SS_HD constexpr std::int64_t top_k_from_row(std::int64_t top_k, std::int64_t vocab) {
    return gate_top_k(top_k, vocab) ? top_k : 0;
}

}  // namespace samplescope
