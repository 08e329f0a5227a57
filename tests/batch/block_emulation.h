// The CUDA names kernels/fast_row_cuda.cuh uses, for running its block code on
// the CPU: a std::thread per GPU thread, __syncthreads() a std::barrier, the
// atomics std::atomic_ref, and the three CUB block primitives written plainly
// over the same barrier (each result is what CUB documents: a reduction's in
// thread 0, a scan's and a sort's in every thread). Nothing here is fast; it
// exists so that tests can run the GPU's context with real concurrency where
// no GPU is.
#pragma once

#define SAMPLESCOPE_BLOCK_EMULATION 1
#define __device__
#define __host__
#define __global__
#define __shared__

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

struct EmulatedThreadIndex {
    unsigned x = 0;
};
inline thread_local EmulatedThreadIndex threadIdx;
inline thread_local std::barrier<>* emulated_barrier = nullptr;

inline void __syncthreads() { emulated_barrier->arrive_and_wait(); }

struct float4 {
    float x, y, z, w;
};

template <class T>
T emulated_atomic_add(T* at, T value) {
    return std::atomic_ref<T>(*at).fetch_add(value);
}
inline unsigned atomicAdd(unsigned* at, unsigned value) { return emulated_atomic_add(at, value); }
inline unsigned long long atomicAdd(unsigned long long* at, unsigned long long value) {
    return emulated_atomic_add(at, value);
}
inline unsigned atomicOr(unsigned* at, unsigned value) { return std::atomic_ref<unsigned>(*at).fetch_or(value); }
inline int atomicCAS(int* at, int expected, int desired) {
    std::atomic_ref<int>(*at).compare_exchange_strong(expected, desired);
    return expected;  // the value held before, as CUDA's atomicCAS returns
}
inline int atomicMin(int* at, int value) {
    std::atomic_ref<int> ref(*at);
    int held = ref.load();
    while (value < held && !ref.compare_exchange_weak(held, value)) {
    }
    return held;
}
inline int atomicMax(int* at, int value) {
    std::atomic_ref<int> ref(*at);
    int held = ref.load();
    while (value > held && !ref.compare_exchange_weak(held, value)) {
    }
    return held;
}

namespace cub {

template <class T, int Threads>
class BlockReduce {
public:
    struct TempStorage {
        T values[Threads];
    };
    explicit BlockReduce(TempStorage& storage) : storage_(storage) {}
    template <class Op>
    T Reduce(const T& mine, Op op) {
        storage_.values[threadIdx.x] = mine;
        __syncthreads();
        T all = storage_.values[0];
        for (int t = 1; t < Threads; ++t) all = op(all, storage_.values[t]);
        __syncthreads();
        return all;
    }
    T Sum(const T& mine) {
        return Reduce(mine, [](const T& a, const T& b) { return a + b; });
    }

private:
    TempStorage& storage_;
};

template <class T, int Threads>
class BlockScan {
public:
    struct TempStorage {
        T values[Threads];
    };
    explicit BlockScan(TempStorage& storage) : storage_(storage) {}
    void ExclusiveSum(const T& mine, T& before) {
        storage_.values[threadIdx.x] = mine;
        __syncthreads();
        before = T{};
        for (unsigned t = 0; t < threadIdx.x; ++t) before += storage_.values[t];
        __syncthreads();
    }

private:
    TempStorage& storage_;
};

template <class Key, int Threads, int Items>
class BlockRadixSort {
public:
    struct TempStorage {
        Key keys[Threads * Items];
    };
    explicit BlockRadixSort(TempStorage& storage) : storage_(storage) {}
    // Blocked arrangement in and out: thread t holds ranks t * Items .. + Items.
    void SortDescending(Key (&items)[Items]) {
        for (int j = 0; j < Items; ++j) storage_.keys[threadIdx.x * Items + j] = items[j];
        __syncthreads();
        if (threadIdx.x == 0) std::sort(storage_.keys, storage_.keys + Threads * Items, std::greater<Key>());
        __syncthreads();
        for (int j = 0; j < Items; ++j) items[j] = storage_.keys[threadIdx.x * Items + j];
        __syncthreads();
    }

private:
    TempStorage& storage_;
};

}  // namespace cub

// Runs body() once in each of `threads` threads of one emulated block.
inline void run_emulated_block(unsigned threads, const std::function<void()>& body) {
    std::barrier<> barrier(static_cast<std::ptrdiff_t>(threads));
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            threadIdx.x = t;
            emulated_barrier = &barrier;
            body();
        });
    }
    for (auto& thread : pool) thread.join();
}
