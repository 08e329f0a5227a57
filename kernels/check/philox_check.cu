// One thread per known answer: the device's Philox4x32-10 words and noise
// uniforms come back to the host and are compared there, bit for bit.
#include "kernels/check/philox_check.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/check/philox_answers.h"
#include "kernels/philox.h"

namespace samplescope::batch {

namespace {

void check(cudaError_t status, const char* call) {
    if (status != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(status));
}

// Device arrays for the answers' inputs and the kernel's outputs.
struct PhiloxBuffers {
    PhiloxAnswer* answers = nullptr;
    NoiseAnswer* noise = nullptr;
    std::uint32_t* words = nullptr;  // [kPhiloxAnswerCount, 4]
    double* uniforms = nullptr;      // [kNoiseAnswerCount]
    ~PhiloxBuffers() {
        cudaFree(answers);
        cudaFree(noise);
        cudaFree(words);
        cudaFree(uniforms);
    }
};

__global__ void philox_answers_kernel(const PhiloxAnswer* answers, const NoiseAnswer* noise, std::uint32_t* words,
                                      double* uniforms) {
    const int i = static_cast<int>(threadIdx.x);
    if (i < kPhiloxAnswerCount) {
        const PhiloxAnswer& a = answers[i];
        const Philox4x32 out =
            philox4x32_10(Philox4x32{{a.counter[0], a.counter[1], a.counter[2], a.counter[3]}}, a.key[0], a.key[1]);
        for (int w = 0; w < 4; ++w) words[i * 4 + w] = out.v[w];
    }
    if (i < kNoiseAnswerCount) uniforms[i] = noise_uniform(noise[i].seed, noise[i].position, noise[i].id);
}

}  // namespace

PhiloxDeviceCheck check_philox_on_device() {
    PhiloxBuffers d;
    check(cudaMalloc(&d.answers, sizeof kPhiloxAnswers), "cudaMalloc(answers)");
    check(cudaMalloc(&d.noise, sizeof kNoiseAnswers), "cudaMalloc(noise)");
    check(cudaMalloc(&d.words, sizeof(std::uint32_t) * 4 * kPhiloxAnswerCount), "cudaMalloc(words)");
    check(cudaMalloc(&d.uniforms, sizeof(double) * kNoiseAnswerCount), "cudaMalloc(uniforms)");
    check(cudaMemcpy(d.answers, kPhiloxAnswers, sizeof kPhiloxAnswers, cudaMemcpyHostToDevice), "cudaMemcpy(answers)");
    check(cudaMemcpy(d.noise, kNoiseAnswers, sizeof kNoiseAnswers, cudaMemcpyHostToDevice), "cudaMemcpy(noise)");
    const int threads = kPhiloxAnswerCount > kNoiseAnswerCount ? kPhiloxAnswerCount : kNoiseAnswerCount;
    philox_answers_kernel<<<1, threads>>>(d.answers, d.noise, d.words, d.uniforms);
    check(cudaGetLastError(), "philox_answers_kernel<<<1, threads>>>");
    std::uint32_t words[4 * kPhiloxAnswerCount];
    double uniforms[kNoiseAnswerCount];
    check(cudaMemcpy(words, d.words, sizeof words, cudaMemcpyDeviceToHost), "cudaMemcpy(words)");
    check(cudaMemcpy(uniforms, d.uniforms, sizeof uniforms, cudaMemcpyDeviceToHost), "cudaMemcpy(uniforms)");

    PhiloxDeviceCheck result;
    char text[160];
    const auto wrong = [&](const char* what) {
        if (result.wrong++ == 0) result.first = what;
    };
    for (int i = 0; i < kPhiloxAnswerCount; ++i) {
        ++result.checked;
        for (int w = 0; w < 4; ++w) {
            if (words[i * 4 + w] == kPhiloxAnswers[i].out[w]) continue;
            std::snprintf(text, sizeof text, "Philox vector %d word %d: 0x%08x, expected 0x%08x", i, w,
                          static_cast<unsigned>(words[i * 4 + w]), static_cast<unsigned>(kPhiloxAnswers[i].out[w]));
            wrong(text);
            break;
        }
    }
    for (int i = 0; i < kNoiseAnswerCount; ++i) {
        ++result.checked;
        if (std::memcmp(&uniforms[i], &kNoiseAnswers[i].value, sizeof(double)) == 0) continue;
        std::snprintf(text, sizeof text, "noise_uniform(%llu, %llu, %d): %a, expected %a",
                      static_cast<unsigned long long>(kNoiseAnswers[i].seed),
                      static_cast<unsigned long long>(kNoiseAnswers[i].position), kNoiseAnswers[i].id, uniforms[i],
                      kNoiseAnswers[i].value);
        wrong(text);
    }
    return result;
}

}  // namespace samplescope::batch
