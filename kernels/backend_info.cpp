#include "kernels/backend_info.h"

#if defined(SAMPLESCOPE_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace samplescope {

BackendInfo detect_backend() {
    BackendInfo info;
#if defined(SAMPLESCOPE_WITH_CUDA)
    info.cuda_compiled = true;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
        info.description = std::string("host twin (no CUDA device: ") +
                           (status != cudaSuccess ? cudaGetErrorString(status) : "none found") + ")";
        return info;
    }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        info.description = "host twin (CUDA device 0 did not report its properties)";
        return info;
    }
    info.gpu_available = true;
    info.description = std::string("cuda: ") + prop.name;
#else
    info.description = "host twin (built without CUDA)";
#endif
    return info;
}

}  // namespace samplescope
