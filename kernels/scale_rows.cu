// Divides each row of a [B, V] logits matrix by that row's temperature, using
// the engine's shared per-element rule. The smallest real kernel of the batch engine.
#include <cuda_runtime.h>

#include "engine/element_math.h"
#include "kernels/scale_rows.h"

namespace samplescope::cuda {

namespace {

__global__ void scale_rows_kernel(float* logits, const float* temperatures, int rows, int vocab) {
    const int row = blockIdx.y;
    if (row >= rows) return;
    const float t = temperatures[row];
    if (t == 0.0f || t == 1.0f) return;  // greedy or neutral rows never touch their logits
    float* data = logits + static_cast<long long>(row) * vocab;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < vocab; i += gridDim.x * blockDim.x) {
        data[i] = static_cast<float>(apply_temperature(data[i], t));
    }
}

}  // namespace

int scale_rows(float* device_logits, const float* device_temperatures, int rows, int vocab) {
    if (rows <= 0 || vocab <= 0) return 0;
    const dim3 grid(static_cast<unsigned>((vocab + 255) / 256 < 64 ? (vocab + 255) / 256 : 64),
                    static_cast<unsigned>(rows));
    scale_rows_kernel<<<grid, 256>>>(device_logits, device_temperatures, rows, vocab);
    return static_cast<int>(cudaGetLastError());
}

}  // namespace samplescope::cuda
