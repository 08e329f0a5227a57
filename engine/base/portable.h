// Marks functions that both the host compiler and nvcc compile, so the
// per-element math of the reference and of the CUDA kernels is one piece of code.
#pragma once

#if defined(__CUDACC__)
#define SS_HD __host__ __device__
#else
#define SS_HD
#endif

namespace samplescope {

// A hint that `address` is read soon (a no-op where the compiler has none).
inline void prefetch(const void* address) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(address);
#else
    (void)address;
#endif
}

}  // namespace samplescope
