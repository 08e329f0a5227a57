// The fast mode's random numbers computed inside a CUDA kernel: Philox4x32-10
// and noise_uniform (kernels/philox.h, __host__ __device__) on the known
// answers of kernels/check/philox_answers.h. C++17, so nvcc compiles its side.
#pragma once

#include <string>

namespace samplescope::batch {

struct PhiloxDeviceCheck {
    int checked = 0;    // answers computed on the device
    int wrong = 0;      // of those, answers that differ from the published value
    std::string first;  // the first wrong answer, in words
};

// Throws std::runtime_error naming the CUDA call and its error when one fails.
PhiloxDeviceCheck check_philox_on_device();

}  // namespace samplescope::batch
