// The CUDA backend. Exact mode runs the shared row routine (exact_row.h), one
// thread per row. Fast mode runs the shared fast-mode routine (fast_row.h), one
// block per row (fast_row_cuda.cuh). Every CUDA call's status is checked.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda_backend.h"
#include "kernels/exact_row.h"
#include "kernels/fast_row_cuda.cuh"
#include "kernels/fast_select.h"
#include "kernels/history_table.h"
#include "kernels/philox.h"
#include "kernels/rank_key.h"

namespace samplescope::batch {

namespace {

void check(cudaError_t status, const char* call) {
    if (status != cudaSuccess) throw std::runtime_error(std::string("CUDA call ") + call + " failed: " + cudaGetErrorString(status));
}
#define SS_CUDA_CHECK(call) check((call), #call)

// Device memory that frees itself, so a failing call leaks nothing.
template <class T>
class DeviceArray {
public:
    explicit DeviceArray(std::size_t count) : count_(count) {
        if (count_ > 0) SS_CUDA_CHECK(cudaMalloc(&data_, count_ * sizeof(T)));
    }
    DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) {
        if (count_ > 0) SS_CUDA_CHECK(cudaMemcpy(data_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice));
    }
    ~DeviceArray() {
        if (data_) cudaFree(data_);
    }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    T* get() const { return data_; }
    void fill_bytes(int value) {
        if (count_ > 0) SS_CUDA_CHECK(cudaMemset(data_, value, count_ * sizeof(T)));
    }
    void copy_to(std::vector<T>& host) const {
        host.resize(count_);
        if (count_ > 0) SS_CUDA_CHECK(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
    }

private:
    T* data_ = nullptr;
    std::size_t count_ = 0;
};

struct DeviceBatch {
    const float* logits;
    std::int64_t vocab;
    const RowParams* params;
    const std::int64_t* prompt_offsets;
    const std::int32_t* prompt_ids;
    const std::int64_t* output_offsets;
    const std::int32_t* output_ids;
    const std::uint64_t* table_offsets;
    std::int32_t* table_ids;
    std::uint32_t* table_context;
    std::uint32_t* table_counts;
    double* table_penalised;
    std::uint8_t* mask;
    std::int32_t draws;
    RowResult* results;
    unsigned long long* gathered;  // fast mode: room for each row's V keys
    std::uint32_t* history_bits;   // fast mode: a bit per id and row
    // Fast mode's split path: per row and part the first read's partial, per
    // row the count of keys gathered and the lowest id a penalty overflowed.
    FirstPartial* partials;
    unsigned long long* gathered_totals;
    int* overflow_ids;
};

__device__ HistoryTable row_table(const DeviceBatch& b, std::int64_t row) {
    const std::uint64_t begin = b.table_offsets[row];
    HistoryTable table;
    table.capacity = static_cast<std::uint32_t>(b.table_offsets[row + 1] - begin);
    table.ids = b.table_ids + begin;
    table.in_context = b.table_context + begin;
    table.output_count = b.table_counts + begin;
    table.penalised = b.table_penalised + begin;
    return table;
}

// ---- exact mode ---------------------------------------------------------------

__global__ void exact_kernel(DeviceBatch b, std::int64_t row_begin, std::int64_t row_end, double* ws_logits,
                             std::int32_t* ws_kept, std::int32_t* ws_order) {
    const std::int64_t row = row_begin + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (row >= row_end) return;
    const std::int64_t local = row - row_begin;
    const float* logits = b.logits + row * b.vocab;
    const RowParams p = b.params[row];
    HistoryTable table = row_table(b, row);
    if (table.capacity > 0) {
        history_clear(table);
        const std::int64_t p0 = b.prompt_offsets[row];
        const std::int64_t o0 = b.output_offsets[row];
        history_add(table, b.prompt_ids + p0, b.prompt_offsets[row + 1] - p0, b.output_ids + o0,
                    b.output_offsets[row + 1] - o0);
        history_fill_penalised(table, logits, p);
    }
    const ExactWorkspace ws{ws_logits + local * b.vocab, ws_kept + local * b.vocab, ws_order + local * b.vocab};
    exact_sample_row(logits, b.vocab, p, table, ws, b.mask ? b.mask + row * b.vocab : nullptr, b.draws,
                     b.results + row * b.draws);
}

// ---- fast mode ----------------------------------------------------------------

// Row `row`'s fast-mode job; the history's bits when it has one.
__device__ FastRowJob fast_job(const DeviceBatch& b, std::int64_t row) {
    FastRowJob job;
    job.p = b.params[row];
    job.in = FastRowInput{b.logits + row * b.vocab,
                          b.vocab,
                          row_table(b, row),
                          nullptr,
                          b.gathered + row * b.vocab,
                          b.mask ? b.mask + row * b.vocab : nullptr,
                          b.results + row * b.draws};
    if (job.in.table.capacity > 0 && job.p.uses_penalties()) {
        job.in.penalised_bits = b.history_bits + row * ((b.vocab + 31) / 32);
    }
    const std::int64_t p0 = b.prompt_offsets[row];
    const std::int64_t o0 = b.output_offsets[row];
    job.prompt = b.prompt_ids + p0;
    job.prompt_length = b.prompt_offsets[row + 1] - p0;
    job.output = b.output_ids + o0;
    job.output_length = b.output_offsets[row + 1] - o0;
    return job;
}

// One block per row runs the shared row routine (fast_row.h) through the
// block's context (fast_row_cuda.cuh). With `parts` > 0 the row was split
// across blocks by the kernels below: its history, its first read and
// top-k's gather are done.
__global__ void __launch_bounds__(kFastThreads) fast_kernel(DeviceBatch b, int parts) {
    __shared__ FastShared s;
    const std::int64_t row = blockIdx.x;
    FastRowJob job = fast_job(b, row);
    if (parts > 0) {
        job.in.partials = b.partials + row * parts;
        job.in.parts = parts;
        job.in.gathered_total = b.gathered_totals + row;
    }
    fast_row_block(s, job, b.draws, parts > 0 ? b.overflow_ids + row : nullptr);
}

// The split path for batches too small to fill the GPU one block per row:
// the history (a block per row), then the first read and top-k's gather in
// `parts` blocks per row (grid parts x rows), then fast_kernel.
__global__ void __launch_bounds__(kFastThreads) fast_history_kernel(DeviceBatch b) {
    __shared__ int overflow_id;
    const std::int64_t row = blockIdx.x;
    if (threadIdx.x == 0) overflow_id = kNoOverflow;
    __syncthreads();
    history_block(overflow_id, fast_job(b, row));
    __syncthreads();
    if (threadIdx.x == 0) b.overflow_ids[row] = overflow_id;
}

__global__ void __launch_bounds__(kFastThreads) fast_first_kernel(DeviceBatch b, int parts) {
    __shared__ typename FirstReduce::TempStorage temp;
    const std::int64_t row = blockIdx.y;
    first_part_block(temp, fast_job(b, row), b.overflow_ids[row], static_cast<int>(blockIdx.x), parts,
                     b.partials + row * parts + blockIdx.x);
}

__global__ void __launch_bounds__(kFastThreads) fast_gather_kernel(DeviceBatch b, int parts) {
    const std::int64_t row = blockIdx.y;
    gather_part_block(fast_job(b, row), b.overflow_ids[row], b.partials + row * parts, static_cast<int>(blockIdx.x),
                      parts, b.gathered_totals + row);
}

}  // namespace

CudaProbe probe_cuda() {
    CudaProbe probe;
    probe.compiled = true;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        probe.reason = std::string("no usable CUDA driver or device (") + cudaGetErrorString(status) + ")";
        cudaGetLastError();  // clear the sticky error so later calls start clean
        return probe;
    }
    if (count == 0) {
        probe.reason = "no CUDA device found";
        return probe;
    }
    cudaDeviceProp prop{};
    const cudaError_t properties = cudaGetDeviceProperties(&prop, 0);
    if (properties != cudaSuccess) {
        probe.reason = std::string("CUDA device 0 did not report its properties (") + cudaGetErrorString(properties) + ")";
        return probe;
    }
    probe.available = true;
    probe.device = prop.name;
    return probe;
}

// CUDA events that destroy themselves.
class EventPair {
public:
    EventPair() {
        SS_CUDA_CHECK(cudaEventCreate(&start_));
        const cudaError_t status = cudaEventCreate(&stop_);
        if (status != cudaSuccess) cudaEventDestroy(start_);
        check(status, "cudaEventCreate(&stop_)");
    }
    ~EventPair() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    EventPair(const EventPair&) = delete;
    EventPair& operator=(const EventPair&) = delete;
    void start() { SS_CUDA_CHECK(cudaEventRecord(start_)); }
    double stop_seconds() {
        SS_CUDA_CHECK(cudaEventRecord(stop_));
        SS_CUDA_CHECK(cudaEventSynchronize(stop_));
        float ms = 0.0f;
        SS_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        return static_cast<double>(ms) * 1e-3;
    }

private:
    cudaEvent_t start_{};
    cudaEvent_t stop_{};
};

float* cuda_upload(const float* host, std::size_t count) {
    float* device = nullptr;
    SS_CUDA_CHECK(cudaMalloc(&device, count * sizeof(float)));
    const cudaError_t status = cudaMemcpy(device, host, count * sizeof(float), cudaMemcpyHostToDevice);
    if (status != cudaSuccess) cudaFree(device);
    check(status, "cudaMemcpy(device, host, ...)");
    return device;
}

void cuda_free(float* device) {
    if (device) cudaFree(device);
}

double cuda_copy_bandwidth(std::size_t bytes) {
    DeviceArray<unsigned char> from(bytes);
    DeviceArray<unsigned char> to(bytes);
    from.fill_bytes(1);
    SS_CUDA_CHECK(cudaMemcpy(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice));  // warm up
    EventPair timer;
    const int repeats = 20;
    timer.start();
    for (int i = 0; i < repeats; ++i) SS_CUDA_CHECK(cudaMemcpy(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice));
    const double seconds = timer.stop_seconds();
    // A copy reads and writes every byte once.
    return 2.0 * static_cast<double>(bytes) * repeats / seconds;
}

namespace {

// The GPU's multiprocessors, asked once.
int multiprocessors() {
    static const int count = [] {
        int device = 0;
        int value = 0;
        if (cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
            cudaGetLastError();
            return 1;
        }
        return value > 0 ? value : 1;
    }();
    return count;
}

// How many blocks share each row's first read and gather: enough for about
// two blocks per multiprocessor when the rows alone are too few, each part at
// least 1,024 ids; 0 (one block per row) when the rows fill the GPU.
int split_parts(std::int64_t rows, std::int64_t vocab) {
    const std::int64_t wanted = (2 * static_cast<std::int64_t>(multiprocessors()) + rows - 1) / rows;
    const std::int64_t most = std::min<std::int64_t>(256, vocab / 1024);
    const std::int64_t parts = std::min(wanted, most);
    return parts > 1 ? static_cast<int>(parts) : 0;
}

}  // namespace

double run_cuda(const CudaBatch& batch, std::vector<RowResult>& results, std::vector<std::uint8_t>& mask) {
    const std::int64_t rows = batch.rows;
    const std::int64_t vocab = batch.vocab;
    const auto cells = static_cast<std::size_t>(rows * vocab);
    std::vector<std::uint64_t> table_offsets(static_cast<std::size_t>(rows) + 1, 0);
    for (std::int64_t r = 0; r < rows; ++r) {
        const auto length = static_cast<std::uint64_t>(batch.prompt_offsets[r + 1] - batch.prompt_offsets[r] +
                                                       batch.output_offsets[r + 1] - batch.output_offsets[r]);
        table_offsets[static_cast<std::size_t>(r) + 1] = table_offsets[static_cast<std::size_t>(r)] + history_capacity(length);
    }
    const std::size_t table_size = table_offsets.back();
    const auto prompt_count = static_cast<std::size_t>(batch.prompt_offsets[rows]);
    const auto output_count = static_cast<std::size_t>(batch.output_offsets[rows]);

    std::unique_ptr<DeviceArray<float>> owned_logits;
    const float* logits = batch.logits;
    if (!batch.logits_on_device) {
        owned_logits = std::make_unique<DeviceArray<float>>(cells);
        SS_CUDA_CHECK(cudaMemcpy(owned_logits->get(), batch.logits, cells * sizeof(float), cudaMemcpyHostToDevice));
        logits = owned_logits->get();
    }
    const std::vector<RowParams> params(batch.params, batch.params + rows);
    const std::vector<std::int64_t> prompt_offsets(batch.prompt_offsets, batch.prompt_offsets + rows + 1);
    const std::vector<std::int32_t> prompt_ids(batch.prompt_ids, batch.prompt_ids + prompt_count);
    const std::vector<std::int64_t> output_offsets(batch.output_offsets, batch.output_offsets + rows + 1);
    const std::vector<std::int32_t> output_ids(batch.output_ids, batch.output_ids + output_count);
    DeviceArray<RowParams> d_params(params);
    DeviceArray<std::int64_t> d_prompt_offsets(prompt_offsets);
    DeviceArray<std::int32_t> d_prompt_ids(prompt_ids);
    DeviceArray<std::int64_t> d_output_offsets(output_offsets);
    DeviceArray<std::int32_t> d_output_ids(output_ids);
    DeviceArray<std::uint64_t> d_table_offsets(table_offsets);
    DeviceArray<std::int32_t> d_table_ids(table_size);
    DeviceArray<std::uint32_t> d_table_context(table_size);
    DeviceArray<std::uint32_t> d_table_counts(table_size);
    DeviceArray<double> d_table_penalised(table_size);
    d_table_ids.fill_bytes(0xFF);  // kEmptySlot
    d_table_context.fill_bytes(0);
    d_table_counts.fill_bytes(0);
    DeviceArray<RowResult> d_results(results.size());
    DeviceArray<std::uint8_t> d_mask(batch.kept_mask ? cells : 0);
    d_mask.fill_bytes(0);

    DeviceArray<unsigned long long> d_gathered(batch.fast ? cells : 0);
    DeviceArray<std::uint32_t> d_history_bits(batch.fast ? static_cast<std::size_t>(rows * ((vocab + 31) / 32)) : 0);
    const int parts = batch.fast ? split_parts(rows, vocab) : 0;
    DeviceArray<FirstPartial> d_partials(static_cast<std::size_t>(rows * parts));
    DeviceArray<unsigned long long> d_gathered_totals(parts > 0 ? static_cast<std::size_t>(rows) : 0);
    DeviceArray<int> d_overflow_ids(parts > 0 ? static_cast<std::size_t>(rows) : 0);
    d_gathered_totals.fill_bytes(0);

    DeviceBatch b{logits, vocab, d_params.get(), d_prompt_offsets.get(), d_prompt_ids.get(), d_output_offsets.get(),
                  d_output_ids.get(), d_table_offsets.get(), d_table_ids.get(), d_table_context.get(),
                  d_table_counts.get(), d_table_penalised.get(), batch.kept_mask ? d_mask.get() : nullptr,
                  batch.draws, d_results.get(), d_gathered.get(), d_history_bits.get(), d_partials.get(),
                  d_gathered_totals.get(), d_overflow_ids.get()};

    EventPair timer;
    timer.start();
    if (!batch.fast) {
        // Rows in chunks, so the f64 workspace stays near 1 GiB whatever B is.
        const std::int64_t per_row = vocab * static_cast<std::int64_t>(sizeof(double) + 2 * sizeof(std::int32_t));
        const std::int64_t chunk = std::max<std::int64_t>(1, std::min<std::int64_t>(rows, (std::int64_t{1} << 30) / per_row));
        DeviceArray<double> ws_logits(static_cast<std::size_t>(chunk * vocab));
        DeviceArray<std::int32_t> ws_kept(static_cast<std::size_t>(chunk * vocab));
        DeviceArray<std::int32_t> ws_order(static_cast<std::size_t>(chunk * vocab));
        for (std::int64_t begin = 0; begin < rows; begin += chunk) {
            const std::int64_t end = std::min(rows, begin + chunk);
            const int threads = 32;
            const auto blocks = static_cast<unsigned>((end - begin + threads - 1) / threads);
            exact_kernel<<<blocks, threads>>>(b, begin, end, ws_logits.get(), ws_kept.get(), ws_order.get());
            SS_CUDA_CHECK(cudaGetLastError());
        }
    } else {
        if (parts > 0) {
            const dim3 grid(static_cast<unsigned>(parts), static_cast<unsigned>(rows));
            fast_history_kernel<<<static_cast<unsigned>(rows), kFastThreads>>>(b);
            SS_CUDA_CHECK(cudaGetLastError());
            fast_first_kernel<<<grid, kFastThreads>>>(b, parts);
            SS_CUDA_CHECK(cudaGetLastError());
            fast_gather_kernel<<<grid, kFastThreads>>>(b, parts);
            SS_CUDA_CHECK(cudaGetLastError());
        }
        fast_kernel<<<static_cast<unsigned>(rows), kFastThreads>>>(b, parts);
        SS_CUDA_CHECK(cudaGetLastError());
    }
    const double kernel_seconds = timer.stop_seconds();
    SS_CUDA_CHECK(cudaDeviceSynchronize());
    d_results.copy_to(results);
    if (batch.kept_mask) d_mask.copy_to(mask);
    return kernel_seconds;
}

}  // namespace samplescope::batch
