// Marks functions that both the host compiler and nvcc compile, so the
// per-element math of the reference and of the CUDA kernels is one piece of code.
#pragma once

#if defined(__CUDACC__)
#define SS_HD __host__ __device__
#else
#define SS_HD
#endif
