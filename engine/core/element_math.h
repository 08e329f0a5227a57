// Per-element arithmetic of the pipeline, written once and compiled by both the
// host compiler and nvcc. The reference engine and every kernel call these, so
// a rule such as the repetition penalty's sign test exists in one place only.
#pragma once

#include <cmath>
#include <cstdint>

#include "engine/base/portable.h"

namespace samplescope {

// Step 2 (HF semantics): divide positive logits by r, multiply the others.
SS_HD inline double apply_repetition_penalty(double logit, double r) { return logit > 0.0 ? logit / r : logit * r; }

// A product and a difference rounded one at a time, on the device too: nvcc
// (by default --fmad=true) may fuse a * b - c into one fused multiply-add,
// which rounds once where the host rounds twice, so the GPU's penalised
// logits differed from the reference's by an ulp. The _rn intrinsics are
// never contracted; host code is built with -ffp-contract=off.
SS_HD inline double mul_rounded(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
SS_HD inline double sub_rounded(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
}

// Step 3 (OpenAI semantics): an id generated count > 0 times.
SS_HD inline double apply_presence_frequency(double logit, double count, double frequency, double presence) {
    return sub_rounded(sub_rounded(logit, mul_rounded(frequency, count)), presence);
}

// Step 5.
SS_HD inline double apply_temperature(double logit, double temperature) { return logit / temperature; }

// The ranking every truncation and greedy use: logit descending, then id ascending.
SS_HD inline bool ranks_before(double logit_a, std::int64_t id_a, double logit_b, std::int64_t id_b) {
    return logit_a > logit_b || (logit_a == logit_b && id_a < id_b);
}

// Step 7: walking in rank order, the id whose running mass s first reaches p is
// the last one kept (it stays).
SS_HD inline bool top_p_reached(double running_mass, double top_p) { return running_mass >= top_p; }

// Step 8: the floor min_p x max q.
SS_HD inline double min_p_floor(double max_prob, double min_p) { return min_p * max_prob; }
SS_HD inline bool min_p_keeps(double prob, double floor) { return prob >= floor; }

// log_softmax(l)[id] = (l[id] - M) - log(Z). Taking the log of the pieces rather
// than log(q) keeps a finite logprob for ids whose q underflows to zero.
SS_HD inline double log_softmax_at(double logit, double max_logit, double partition) {
    return (logit - max_logit) - ::log(partition);
}

// Step 9's numerator: e = exp(l - M). The host's exp is the platform's f64 exp.
SS_HD inline double softmax_numerator(double logit, double max_logit) { return ::exp(logit - max_logit); }

}  // namespace samplescope
