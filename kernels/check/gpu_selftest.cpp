// The GPU self-test: the CUDA backend proven against the CPU reference on a
// machine that has only the CUDA toolkit, then fast mode's speed beside a
// device-to-device copy of the same bytes. No Qt and no Google Benchmark, so
// scripts/device_check.sh builds it with g++ and nvcc alone; the normal build
// runs it as a CTest test (skipped where no GPU answers).
//
//   gpu_selftest [--no-bench] [--repeats N] [--write-logits FILE] [--host-twin]
//
// Checks (each one line of the table, "pass: ..." or "FAIL: ..."):
//   - Philox4x32-10 and the noise uniforms computed in a kernel, against the
//     published answers (kernels/check/philox_answers.h);
//   - exact and fast mode against the reference on the rows that reach every
//     branch of fast mode's selection (kernels/tools/branch_rows.h);
//   - the same batch run twice, and once more from device memory: bitwise equal;
//   - NaN, +inf and all -inf logits in device memory refused row by row with
//     the reference's message for that row.
// The benchmark (fast mode, V = 128,256, logits already on the device) prints
// the kernels' time (CUDA events) as a ratio to a measured copy of the bytes.
// A timing never fails the run; an error in a case does. The refused logits
// come last, after the benchmark, in a table of their own.
//
// --host-twin runs the same checks on the host twin instead (no Philox kernel,
// no device memory, no benchmark): it proves the checks themselves on a
// machine without a GPU and proves nothing about the GPU.
//
// Exit status: 0 every check passed; 1 a check failed; 2 bad usage; 3 no GPU
// answered (nothing was proven: never a pass).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"
#include "kernels/batch_backends.h"
#include "kernels/batch_engine.h"
#include "kernels/check/philox_check.h"
#include "kernels/cuda_backend.h"
#include "kernels/tools/batch_compare.h"
#include "kernels/tools/batch_generate.h"
#include "kernels/tools/batch_reference.h"
#include "kernels/tools/branch_rows.h"

using namespace samplescope;
using namespace samplescope::batch;

namespace {

constexpr std::size_t kVocab = 128256;
constexpr double kExactTolerance = 1e-9;  // exact mode's logprob against the reference's
constexpr double kFastTolerance = 1e-4;   // fast mode's (f32 selection, the same tolerance as the tests)

// Backend::Cuda, or Backend::Host under --host-twin.
Backend g_backend = Backend::Cuda;
bool on_gpu() { return g_backend == Backend::Cuda; }

std::string formatted(const char* pattern, auto... values) {
    char text[512];
    std::snprintf(text, sizeof text, pattern, values...);
    return text;
}

struct Outcome {
    bool pass = false;
    std::string detail;
};

// The check table: one row per check, a failed or throwing check marks the run failed.
class Checks {
public:
    Checks() { std::printf("| check | result |\n|---|---|\n"); }
    void row(const std::string& name, const std::function<Outcome()>& check) {
        Outcome outcome;
        try {
            outcome = check();
        } catch (const std::exception& error) {
            outcome = {false, std::string("threw: ") + error.what()};
        }
        failed_ = failed_ || !outcome.pass;
        std::printf("| %s | %s: %s |\n", name.c_str(), outcome.pass ? "pass" : "FAIL", outcome.detail.c_str());
        std::fflush(stdout);
    }
    bool failed() const { return failed_; }

private:
    bool failed_ = false;
};

// Logits copied to the GPU, freed when it goes.
class DeviceLogits {
public:
    explicit DeviceLogits(const std::vector<float>& host) : device_(cuda_upload(host.data(), host.size())) {}
    ~DeviceLogits() { cuda_free(device_); }
    DeviceLogits(const DeviceLogits&) = delete;
    DeviceLogits& operator=(const DeviceLogits&) = delete;
    // `input` with its logits read from this copy instead.
    BatchInput on_device(BatchInput input) const {
        input.logits = device_;
        input.logits_location = MemoryLocation::Device;
        return input;
    }

private:
    float* device_;
};

std::string message_of(const std::function<void()>& call) {
    try {
        call();
    } catch (const InputError& error) {
        return error.what();
    }
    return "";
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

Outcome philox_in_a_kernel() {
    const PhiloxDeviceCheck check = check_philox_on_device();
    if (check.wrong > 0) return {false, formatted("%d of %d answers wrong; first: %s", check.wrong, check.checked, check.first.c_str())};
    return {true, formatted("%d known answers (Random123's Philox4x32-10 vectors, noise uniforms) bit for bit", check.checked)};
}

// One branch batch against the reference on the CUDA backend.
Outcome against_reference(const RowBatch& rows, Mode mode) {
    CompareOptions options;
    options.mode = mode;
    options.backend = g_backend;
    const BatchComparison result = compare_batch(rows.input(), options);
    if (result.backend != g_backend) {
        return {false, "ran on " + std::string(backend_name(result.backend)) + ", not " + std::string(backend_name(g_backend))};
    }
    const double tolerance = mode == Mode::Exact ? kExactTolerance : kFastTolerance;
    const bool pass = result.counts.rows == rows.rows() && result.counts.mismatch == 0 && result.kept_mismatches == 0 &&
                      result.worst_logprob_difference <= tolerance;
    if (!pass) {
        return {false, formatted("%zu of %zu rows mismatch, %zu kept-set mismatches, worst logprob difference %.3g (allowed %.0e)",
                              result.counts.mismatch, rows.rows(), result.kept_mismatches,
                              result.worst_logprob_difference, tolerance)};
    }
    return {true, formatted("%zu rows: %zu equal, %zu near ties, worst logprob difference %.3g", result.counts.rows,
                         result.counts.equal, result.counts.near_tie, result.worst_logprob_difference)};
}

// Two runs from host memory and one from device memory give the same bits
// (on the host twin: the third run on one thread).
Outcome same_batch_twice(Mode mode) {
    const RowBatch rows = every_branch_rows();
    const BatchInput input = rows.input();
    BatchOptions options;
    options.mode = mode;
    options.backend = g_backend;
    options.kept_mask = true;
    options.draws = 3;
    const BatchOutput first = run_batch(input, options);
    const BatchOutput second = run_batch(input, options);
    BatchOutput third;
    if (on_gpu()) {
        const DeviceLogits device(rows.logits);
        third = run_batch(device.on_device(input), options);
    } else {
        BatchOptions one_thread = options;
        one_thread.threads = 1;
        third = run_batch(input, one_thread);
    }
    const char* names[] = {"the second run", on_gpu() ? "the run from device memory" : "the run on one thread"};
    int i = 0;
    for (const BatchOutput* again : {&second, static_cast<const BatchOutput*>(&third)}) {
        const char* name = names[i++];
        if (again->backend != g_backend) return {false, std::string(name) + " ran on another backend"};
        if (again->token != first.token) return {false, std::string(name) + " drew other tokens"};
        if (!same_bits(again->logprob, first.logprob)) return {false, std::string(name) + " gave other logprob bits"};
        if (again->kept_count != first.kept_count || again->kept_mask != first.kept_mask) {
            return {false, std::string(name) + " kept other ids"};
        }
        if (again->draws_after != first.draws_after) return {false, std::string(name) + " consumed other draws"};
    }
    return {true, formatted("%zu rows x %d draws, three runs (%s): tokens, logprobs, kept masks bitwise equal", rows.rows(),
                         options.draws, on_gpu() ? "two from host memory, one from device memory" : "the last on one thread")};
}

// Each row of refused_logit_rows() placed in device memory: the GPU's verdict
// on the row, worded as run_batch words it (the value named is the one the
// engine reports, since the host cannot read device memory), is the
// reference's message for it; and run_batch refuses the whole batch with the
// first refused row's message. On the host twin: the rows in host memory.
Outcome refused_in_device_memory(Mode mode) {
    const RowBatch rows = refused_logit_rows();
    const BatchInput host = rows.input();
    BatchOptions options;
    options.mode = mode;
    options.backend = g_backend;
    std::vector<RowResult> results(host.rows);
    std::vector<std::uint8_t> mask;
    std::string whole_batch;
    if (on_gpu()) {
        const DeviceLogits device(rows.logits);
        const BatchInput input = device.on_device(host);
        run_cuda_batch(input, options, results, mask);
        whole_batch = message_of([&] { run_batch(input, options); });
    } else {
        run_host(host, options, results, mask);
        whole_batch = message_of([&] { run_batch(host, options); });
    }
    BatchInput located = host;  // where the engine read the logits; never dereferenced for device rows
    if (on_gpu()) located.logits_location = MemoryLocation::Device;
    std::size_t refused = 0;
    std::string first_reference;
    for (std::size_t r = 0; r < host.rows; ++r) {
        const std::string reference = message_of([&] { trace_reference_row(host, r); });
        std::vector<RowResult> only(host.rows);
        only[r] = results[r];
        const std::string engine = message_of([&] { throw_first_row_error(only, 1, located); });
        if (engine != reference) {
            return {false, formatted("row %zu: the engine gave \"%s\", the reference \"%s\"", r,
                                     engine.empty() ? "no error" : engine.c_str(),
                                     reference.empty() ? "no error" : reference.c_str())};
        }
        if (!reference.empty() && refused++ == 0) first_reference = reference;
    }
    if (whole_batch != first_reference) {
        return {false, formatted("run_batch refused the batch with \"%s\", the reference's first refusal is \"%s\"",
                                 whole_batch.empty() ? "nothing" : whole_batch.c_str(), first_reference.c_str())};
    }
    return {true, formatted("%zu rows (one clean, NaN, +inf before a NaN, +inf last, all -inf): %zu refused, each with "
                            "the reference's message; run_batch refuses the batch with the first",
                            host.rows, refused)};
}

// ---- The benchmark ----

struct BenchCase {
    const char* name;
    std::size_t rows;
    Workload workload;
};

struct BenchResult {
    double kernel_seconds = 0.0;  // median over the repeats
    double seconds = 0.0;         // median end to end (checks, transfers of the results)
    double copy_seconds = 0.0;    // one device-to-device copy of the same bytes
    double reads_per_row = 0.0;   // the host twin's full-row reads, for the same batch
};

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

BenchResult time_case(const BenchCase& c, int repeats) {
    const SyntheticBatch batch = generate_batch(c.rows, kVocab, c.workload, 1);
    const BatchInput host = batch.input();
    const DeviceLogits device(batch.logits);
    const BatchInput input = device.on_device(host);
    BatchOptions options;
    options.mode = Mode::Fast;
    options.backend = Backend::Cuda;
    for (int i = 0; i < 2; ++i) run_batch(input, options);  // warm up
    std::vector<double> kernel, wall;
    for (int i = 0; i < repeats; ++i) {
        const BatchOutput out = run_batch(input, options);
        if (out.backend != Backend::Cuda) throw std::runtime_error("the benchmark did not run on the GPU");
        kernel.push_back(out.kernel_seconds);
        wall.push_back(out.seconds);
    }
    BenchResult result;
    result.kernel_seconds = median(kernel);
    result.seconds = median(wall);
    const std::size_t bytes = c.rows * kVocab * sizeof(float);
    // cuda_copy_bandwidth counts a copy's read and write: one copy of `bytes` takes 2 * bytes / bandwidth.
    result.copy_seconds = 2.0 * static_cast<double>(bytes) / cuda_copy_bandwidth(bytes);
    BatchOptions twin = options;
    twin.backend = Backend::Host;
    const BatchOutput counted = run_batch(host, twin);
    result.reads_per_row = static_cast<double>(counted.row_reads) / static_cast<double>(c.rows);
    return result;
}

// Returns false when a case could not be timed (that fails the run; a slow time does not).
bool benchmark(int repeats) {
    const BenchCase cases[] = {
        {"B = 256, every stage", 256, Workload::EveryStage},
        {"B = 256, top-p only", 256, Workload::TopPOnly},
        {"B = 256, greedy", 256, Workload::Greedy},
        {"B = 1, every stage", 1, Workload::EveryStage},
    };
    std::printf("\nfast mode, V = %zu, logits on the device; kernel time = median of %d runs, 10x as many at B = 1 (CUDA events);\n"
                "copy = one device-to-device copy of the same bytes, measured now; the one-read floor is half a copy\n"
                "(a copy reads and writes each byte once)\n\n",
                kVocab, repeats);
    std::printf("| case | kernel us | end to end us | copy us | x copy | x one-read floor | host twin reads/row | target |\n"
                "|---|---|---|---|---|---|---|---|\n");
    bool ok = true;
    double every_stage_us = 0.0;
    for (const BenchCase& c : cases) {
        BenchResult r;
        try {
            r = time_case(c, c.rows == 1 ? repeats * 10 : repeats);
        } catch (const std::exception& error) {
            std::printf("| %s | FAIL: %s | | | | | | |\n", c.name, error.what());
            ok = false;
            continue;
        }
        const double floor = r.copy_seconds / 2.0;
        const double x_floor = r.kernel_seconds / floor;
        std::string target = "-";
        if (c.rows == 256 && c.workload == Workload::EveryStage) {
            target = formatted("<= 3x floor: %s", x_floor <= 3.0 ? "met" : "missed");
        } else if (c.rows == 1) {
            target = formatted("< 20 us: %s", r.kernel_seconds < 20e-6 ? "met" : "missed");
        }
        std::printf("| %s | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %s |\n", c.name, r.kernel_seconds * 1e6,
                    r.seconds * 1e6, r.copy_seconds * 1e6, r.kernel_seconds / r.copy_seconds, x_floor,
                    r.reads_per_row, target.c_str());
        if (c.rows == 256 && c.workload == Workload::EveryStage) every_stage_us = r.kernel_seconds * 1e6;
        std::fflush(stdout);
    }
    // A plain line after the table for scripts (scripts/device_check.sh sets PyTorch beside it).
    if (every_stage_us > 0.0) std::printf("\nkernel_us_every_stage_256 %.3f\n", every_stage_us);
    return ok;
}

// The B = 256 every-stage batch's logits as raw little-endian f32, for a
// comparison on the same bytes (scripts/device_check.sh hands it to PyTorch).
bool write_logits(const std::string& path) {
    const SyntheticBatch batch = generate_batch(256, kVocab, Workload::EveryStage, 1);
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(batch.logits.data()),
               static_cast<std::streamsize>(batch.logits.size() * sizeof(float)));
    return static_cast<bool>(file);
}

// Bad usage: one line naming the argument, exit status 2.
int refuse(const std::string& problem) {
    std::fprintf(stderr,
                 "gpu_selftest: %s (usage: gpu_selftest [--no-bench] [--repeats N] [--write-logits FILE] [--host-twin])\n",
                 problem.c_str());
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    bool bench = true;
    int repeats = 20;
    std::string logits_file;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--no-bench") {
            bench = false;
        } else if (arg == "--repeats" && i + 1 < argc) {
            try {
                repeats = static_cast<int>(parse_int_in_range(argv[++i], "repeats", "--repeats", 1, 10000));
            } catch (const InputError& error) {
                return refuse(error.what());
            }
        } else if (arg == "--host-twin") {
            g_backend = Backend::Host;
        } else if (arg == "--write-logits" && i + 1 < argc) {
            logits_file = argv[++i];
        } else {
            return refuse("unknown argument \"" + std::string(arg) + "\"");
        }
    }

    if (on_gpu()) {
        const CudaProbe probe = probe_cuda();
        if (!probe.available) {
            std::printf("gpu_selftest: no GPU answered: %s\n", probe.reason.c_str());
            return 3;
        }
        std::printf("gpu_selftest: GPU %s\n\n", probe.device.c_str());
    } else {
        std::printf("gpu_selftest: the host twin (--host-twin): the checks' own proof, nothing about a GPU\n\n");
        bench = false;
    }

    Checks checks;
    if (on_gpu()) checks.row("philox in a kernel", philox_in_a_kernel);
    for (const BranchCase& branch : kBranchCases) {
        const RowBatch rows = branch.build();
        for (const Mode mode : {Mode::Exact, Mode::Fast}) {
            checks.row(std::string(mode_name(mode)) + ", " + std::string(branch.name),
                       [&] { return against_reference(rows, mode); });
        }
    }
    for (const Mode mode : {Mode::Exact, Mode::Fast}) {
        checks.row(std::string(mode_name(mode)) + ", same batch twice", [&] { return same_batch_twice(mode); });
    }

    bool ok = !checks.failed();
    if (bench) ok = benchmark(repeats) && ok;
    if (!logits_file.empty() && !write_logits(logits_file)) {
        std::printf("gpu_selftest: could not write %s\n", logits_file.c_str());
        ok = false;
    }
    // Refused logits last: a kernel that mishandles a NaN or +inf in device
    // memory may leave the CUDA context unusable, and nothing runs after these.
    std::printf("\n");
    Checks refusals;
    for (const Mode mode : {Mode::Exact, Mode::Fast}) {
        refusals.row(std::string(mode_name(mode)) + ", refused logits in " + (on_gpu() ? "device" : "host") + " memory",
                     [&] { return refused_in_device_memory(mode); });
    }
    ok = ok && !refusals.failed();
    std::printf("\ngpu_selftest: %s\n", ok ? "every check passed" : "a check FAILED");
    return ok ? 0 : 1;
}
