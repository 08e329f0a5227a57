// The batch engine's speed: B in {1, 8, 64, 256} rows of V = 128,256 with every
// stage active (penalties over 1,000-id histories, T = 0.7, k = 50, p = 0.9,
// m = 0.05), plus top-p only and greedy, on the host twin and (when a GPU
// answers) the CUDA backend. Prints rows/s end to end (the checks included),
// effective GB/s (B x V x 4 bytes read once) and, on the host, the time as a
// multiple of one read of the batch at the copy bandwidth measured in the same
// run (x_one_read) and fast mode's full reads per row (reads_per_row); then the
// PyTorch version of vLLM's native path where PyTorch is installed. The CPU
// column counts every thread of the process. Never fails on timing.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/python_baseline.h"
#include "kernels/batch_backends.h"
#include "kernels/tools/batch_generate.h"

using namespace samplescope::batch;

namespace {

constexpr std::size_t kVocab = 128256;
double g_host_bandwidth = 0.0;  // bytes/s, read + write, measured before the cases run

const SyntheticBatch& batch_for(Workload workload, std::size_t rows) {
    static std::map<std::pair<int, std::size_t>, std::unique_ptr<SyntheticBatch>> cache;
    auto& slot = cache[{static_cast<int>(workload), rows}];
    if (!slot) slot = std::make_unique<SyntheticBatch>(generate_batch(rows, kVocab, workload, 1));
    return *slot;
}

double host_copy_bandwidth() {
    const std::size_t bytes = 256 * kVocab * 4;
    std::vector<char> from(bytes, 1), to(bytes, 0);
    std::memcpy(to.data(), from.data(), bytes);
    const int repeats = 5;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < repeats; ++i) {
        from[static_cast<std::size_t>(i)] = static_cast<char>(i);
        std::memcpy(to.data(), from.data(), bytes);
        benchmark::DoNotOptimize(to.data());
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return 2.0 * static_cast<double>(bytes) * repeats / seconds;  // read + write
}

void run_case(benchmark::State& state, Backend backend, Mode mode, Workload workload) {
    const auto rows = static_cast<std::size_t>(state.range(0));
    const SyntheticBatch& batch = batch_for(workload, rows);
    BatchInput input = batch.input();
    float* device = nullptr;
    if (backend == Backend::Cuda) {
        // Logits already on the GPU, as they are after the lm_head projection.
        device = cuda_upload(batch.logits.data(), batch.logits.size());
        input.logits = device;
        input.logits_location = MemoryLocation::Device;
    }
    BatchOptions options;
    options.mode = mode;
    options.backend = backend;
    double kernel_seconds = 0.0;
    std::uint64_t row_reads = 0;
    for (auto _ : state) {
        const BatchOutput out = run_batch(input, options);
        benchmark::DoNotOptimize(out.token.data());
        kernel_seconds += out.kernel_seconds;
        row_reads = out.row_reads;
        if (backend == Backend::Cuda) state.SetIterationTime(out.kernel_seconds);
    }
    cuda_free(device);
    const double bytes = static_cast<double>(rows * kVocab * 4);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(rows));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
    const double per_batch = kernel_seconds / static_cast<double>(state.iterations());
    state.counters["rows_per_s"] = static_cast<double>(rows) / per_batch;
    state.counters["us_per_batch"] = per_batch * 1e6;
    state.counters["GBps"] = bytes / per_batch / 1e9;
    if (backend == Backend::Host && g_host_bandwidth > 0.0) {
        state.counters["x_one_read"] = per_batch / (bytes / (g_host_bandwidth / 2));
        if (mode == Mode::Fast) state.counters["reads_per_row"] = static_cast<double>(row_reads) / static_cast<double>(rows);
    }
}

void register_cases(Backend backend) {
    const std::string name = std::string(backend_name(backend));
    for (const auto workload : {Workload::EveryStage, Workload::TopPOnly, Workload::Greedy}) {
        auto* fast = benchmark::RegisterBenchmark(
            (name + "/fast/" + std::string(workload_name(workload))).c_str(),
            [=](benchmark::State& state) { run_case(state, backend, Mode::Fast, workload); });
        fast->Arg(1)->Arg(8)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);
        if (backend == Backend::Cuda) fast->UseManualTime();
        else fast->MeasureProcessCPUTime()->UseRealTime();
    }
    // Exact mode walks the contract row by row: priced at small B only.
    auto* exact = benchmark::RegisterBenchmark((name + "/exact/every-stage").c_str(), [=](benchmark::State& state) {
        run_case(state, backend, Mode::Exact, Workload::EveryStage);
    });
    exact->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond);
    if (backend == Backend::Cuda) exact->UseManualTime();
    else exact->MeasureProcessCPUTime()->UseRealTime();
}

// Our own rows/s on the baseline's workload, for the printed ratio.
double rows_per_second(Backend backend, std::size_t rows) {
    const SyntheticBatch& batch = batch_for(Workload::EveryStage, rows);
    BatchOptions options;
    options.mode = Mode::Fast;
    options.backend = backend;
    const BatchInput input = batch.input();
    run_batch(input, options);
    double best = 1e30;
    for (int i = 0; i < 3; ++i) best = std::min(best, run_batch(input, options).seconds);
    return static_cast<double>(rows) / best;
}

void run_pytorch_baseline(const char* script, const std::string& device, std::size_t rows, double ours) {
    const std::string python = samplescope::bench::python_with("torch");
    if (python.empty()) {
        std::printf("PyTorch baseline (vLLM's native path): PyTorch is not installed here; no ratio.\n");
        return;
    }
    const std::string command = python + " '" + script + "' --rows " + std::to_string(rows) +
                                " --vocab " + std::to_string(kVocab) + " --device " + device;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) {
        std::printf("PyTorch baseline: could not start python3\n");
        return;
    }
    char line[512];
    double theirs = 0.0;
    while (std::fgets(line, sizeof line, pipe)) {
        std::fputs(line, stdout);
        std::sscanf(line, "rows_per_second %lf", &theirs);
    }
    pclose(pipe);
    if (theirs > 0.0) {
        std::printf("fast mode (%s, B = %zu, every stage): %.0f rows/s, PyTorch vLLM-native: %.0f rows/s, ratio %.1fx\n",
                    device.c_str(), rows, ours, theirs, ours / theirs);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const CudaProbe probe = probe_cuda();
    register_cases(Backend::Host);
    if (probe.available) register_cases(Backend::Cuda);
    benchmark::RegisterBenchmark("copy_bandwidth/host", [](benchmark::State& state) {
        double bandwidth = 0.0;
        for (auto _ : state) bandwidth = host_copy_bandwidth();
        state.counters["GBps"] = bandwidth / 1e9;
    })->Iterations(1);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

    std::printf("batch engine benchmark: V = %zu; GPU: %s\n", kVocab,
                probe.available ? probe.device.c_str() : ("none (" + probe.reason + ")").c_str());
    const double host_bandwidth = host_copy_bandwidth();
    g_host_bandwidth = host_bandwidth;
    std::printf("host copy bandwidth: %.1f GB/s (read + write); reading B x V x 4 bytes once at B = 64 takes %.3f ms\n",
                host_bandwidth / 1e9, 64.0 * kVocab * 4 / host_bandwidth * 2 * 1e3);
    if (probe.available) {
        const double bandwidth = cuda_copy_bandwidth(256 * kVocab * 4);
        const double floor_us = 256.0 * kVocab * 4 / (bandwidth / 2) * 1e6;
        std::printf("GPU copy bandwidth: %.0f GB/s (read + write); reading B = 256 logits once takes %.1f us\n",
                    bandwidth / 1e9, floor_us);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();

    const std::string script = std::string(SAMPLESCOPE_BENCH_DIR) + "/vllm_native_baseline.py";
    run_pytorch_baseline(script.c_str(), "cpu", 64, rows_per_second(Backend::Host, 64));
    if (probe.available) run_pytorch_baseline(script.c_str(), "cuda", 256, rows_per_second(Backend::Cuda, 256));
    return 0;
}
