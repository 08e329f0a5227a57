// Which batch backend can run here, and why.
#pragma once

#include <string>

namespace samplescope {

struct BackendInfo {
    bool cuda_compiled = false;  // built with nvcc
    bool gpu_available = false;  // a CUDA device answered
    std::string description;     // "host twin (no CUDA device: ...)" or the GPU's name
};

BackendInfo detect_backend();

}  // namespace samplescope
