#pragma once

namespace samplescope::cuda {

// Launches the per-row temperature kernel on device buffers; returns the
// cudaError_t of the launch as an int (0 on success).
int scale_rows(float* device_logits, const float* device_temperatures, int rows, int vocab);

}  // namespace samplescope::cuda
