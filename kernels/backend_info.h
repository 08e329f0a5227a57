// Which batch backend can run here, and why: for status lines in the CLI and GUI.
#pragma once

#include <string>

namespace samplescope {

struct BackendInfo {
    bool cuda_compiled = false;  // built with nvcc
    bool gpu_available = false;  // a CUDA device answered
    std::string description;     // "cuda: <GPU name>" or "host twin (<why no GPU>)"
};

BackendInfo detect_backend();

}  // namespace samplescope
