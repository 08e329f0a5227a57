#include "kernels/backend_info.h"

#include "kernels/cuda_backend.h"

namespace samplescope {

BackendInfo detect_backend() {
    const batch::CudaProbe probe = batch::probe_cuda();
    BackendInfo info;
    info.cuda_compiled = probe.compiled;
    info.gpu_available = probe.available;
    info.description = probe.available ? "cuda: " + probe.device : "host twin (" + probe.reason + ")";
    return info;
}

}  // namespace samplescope
