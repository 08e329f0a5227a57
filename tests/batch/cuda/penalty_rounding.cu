// Compiled to PTX by test_penalty_rounding (tests/CMakeLists.txt): the
// presence/frequency penalty as the exact kernels compute it. Every f64
// multiply and subtract in the PTX must carry a rounding mode (.rn), which
// ptxas never fuses into a multiply-add; without one, nvcc's default
// --fmad=true lets it, and the GPU's penalised logit differs from the host's.
#include "engine/core/element_math.h"

__global__ void penalty_rounding(double* logits, const double* counts, double frequency, double presence) {
    const unsigned i = threadIdx.x;
    logits[i] = samplescope::apply_presence_frequency(logits[i], counts[i], frequency, presence);
}
