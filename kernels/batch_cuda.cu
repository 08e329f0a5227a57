// The CUDA backend. Exact mode runs the shared row routine (exact_row.h), one
// block per row. Fast mode runs the shared fast-mode routine (fast_row.h), one
// block per row (fast_row_cuda.cuh). Every CUDA call's status is checked.
// run_cuda keeps its device buffers, pinned staging, stream and events from one
// batch to the next (DeviceContext) and waits once per batch, at the end.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
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

// Device memory that frees itself, so a failing call leaks nothing (the
// bandwidth measurement; batches use DeviceContext's buffers).
template <class T>
class DeviceArray {
public:
    explicit DeviceArray(std::size_t count) : count_(count) {
        if (count_ > 0) SS_CUDA_CHECK(cudaMalloc(&data_, count_ * sizeof(T)));
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

constexpr int kExactThreads = 256;  // a power of two, as BlockLanes' trees need

// The block's barrier, for BlockLanes (host code never runs a block).
struct BlockBarrier {
    SS_HD void operator()() const {
#if defined(__CUDA_ARCH__)
        __syncthreads();
#endif
    }
};

// One block per row of rows [row_begin, row_begin + gridDim.x): the first
// thread builds the row's history table, then the block runs the shared row
// routine (exact_row.h), its full-row passes split across the threads.
__global__ void __launch_bounds__(kExactThreads) exact_kernel(DeviceBatch b, std::int64_t row_begin, double* ws_logits,
                                                              std::int32_t* ws_kept, std::int32_t* ws_order) {
    __shared__ double values[kExactThreads];
    __shared__ std::int64_t counts[kExactThreads];
    const BlockLanes<BlockBarrier> lanes{static_cast<int>(threadIdx.x), kExactThreads, values, counts, BlockBarrier{}};
    const std::int64_t local = blockIdx.x;
    const std::int64_t row = row_begin + local;
    const float* logits = b.logits + row * b.vocab;
    const RowParams p = b.params[row];
    HistoryTable table = row_table(b, row);
    if (table.capacity > 0 && lanes.leader()) {
        history_clear(table);
        const std::int64_t p0 = b.prompt_offsets[row];
        const std::int64_t o0 = b.output_offsets[row];
        history_add(table, b.prompt_ids + p0, b.prompt_offsets[row + 1] - p0, b.output_ids + o0,
                    b.output_offsets[row + 1] - o0);
        history_fill_penalised(table, logits, p);
    }
    lanes.sync();
    const ExactWorkspace ws{ws_logits + local * b.vocab, ws_kept + local * b.vocab, ws_order + local * b.vocab};
    exact_sample_row(lanes, logits, b.vocab, p, table, ws, b.mask ? b.mask + row * b.vocab : nullptr, b.draws,
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
    // Without histories in the batch the split path skips the history kernel
    // (overflow_ids null) and the row block finds no table to build.
    fast_row_block(s, job, b.draws, parts > 0 && b.overflow_ids ? b.overflow_ids + row : nullptr);
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
    first_part_block(temp, fast_job(b, row), b.overflow_ids ? b.overflow_ids[row] : kNoOverflow,
                     static_cast<int>(blockIdx.x), parts,
                     b.partials + row * parts + blockIdx.x);
}

__global__ void __launch_bounds__(kFastThreads) fast_gather_kernel(DeviceBatch b, int parts) {
    const std::int64_t row = blockIdx.y;
    gather_part_block(fast_job(b, row), b.overflow_ids ? b.overflow_ids[row] : kNoOverflow, b.partials + row * parts,
                      static_cast<int>(blockIdx.x), parts, b.gathered_totals + row);
}

}  // namespace

namespace {

CudaProbe probe_device() {
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

}  // namespace

// Asked once per process (a function-local static is initialised once, even
// when threads race to it): the device does not change under a running
// program, and every batch asks.
CudaProbe probe_cuda() {
    static const CudaProbe probe = probe_device();
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

// How many buffers the context has allocated (device and pinned), for the
// proof that a warm call allocates nothing.
std::atomic<std::uint64_t> buffer_allocations{0};

// Device memory kept from one batch to the next: it grows when a batch needs
// more and is freed only by release().
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { release(); }
    unsigned char* reserve(std::size_t bytes) {
        if (bytes > bytes_) {
            release();
            SS_CUDA_CHECK(cudaMalloc(&data_, bytes));
            bytes_ = bytes;
            ++buffer_allocations;
        }
        return static_cast<unsigned char*>(data_);
    }
    void release() {
        if (data_) cudaFree(data_);
        data_ = nullptr;
        bytes_ = 0;
    }

private:
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

// Page-locked host memory, kept likewise: copies from and to it run
// asynchronously at the link's full speed.
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    ~PinnedBuffer() { release(); }
    unsigned char* reserve(std::size_t bytes) {
        if (bytes > bytes_) {
            release();
            SS_CUDA_CHECK(cudaMallocHost(&data_, bytes));
            bytes_ = bytes;
            ++buffer_allocations;
        }
        return static_cast<unsigned char*>(data_);
    }
    void release() {
        if (data_) cudaFreeHost(data_);
        data_ = nullptr;
        bytes_ = 0;
    }

private:
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

// Offsets of several arrays packed into one buffer, each 256-byte aligned.
class Packing {
public:
    std::size_t add(std::size_t bytes) {
        const std::size_t at = (total_ + 255) & ~std::size_t{255};
        total_ = at + bytes;
        return at;
    }
    std::size_t total() const { return total_; }

private:
    std::size_t total_ = 0;
};

// Logits in host memory go up through two pinned slots of this size, so the
// host's copy into one overlaps the transfer out of the other and the pinned
// memory stays the same whatever the batch.
constexpr std::size_t kStagingSlot = std::size_t{16} << 20;

// The process's device state, behind one mutex (batches run one at a time):
// the buffers, the pinned staging, a stream of its own for callers that pass
// none, and the events. Everything is made on first use, grows only, and is
// freed by cuda_release() or at exit.
struct DeviceContext {
    std::mutex lock;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    cudaEvent_t slot_free[2] = {nullptr, nullptr};
    DeviceBuffer inputs;   // parameters, histories, table offsets: one upload
    DeviceBuffer logits;   // the batch's logits when the caller's are in host memory
    DeviceBuffer tables;   // the history tables
    DeviceBuffer outputs;  // results, then the kept mask
    DeviceBuffer exact;    // exact mode's workspace
    DeviceBuffer fast;     // fast mode's gathered keys, history bits and split-path partials
    PinnedBuffer upload;
    PinnedBuffer staging;  // two slots of kStagingSlot
    PinnedBuffer download;

    DeviceContext() = default;
    DeviceContext(const DeviceContext&) = delete;
    DeviceContext& operator=(const DeviceContext&) = delete;
    ~DeviceContext() { release(); }

    // Each piece is made once; a failure leaves the others for the next call.
    void start_up() {
        // A blocking stream: it waits for work on the legacy default stream
        // (a kernel there that wrote device logits) as the default stream would.
        if (!stream) SS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamDefault));
        if (!start) SS_CUDA_CHECK(cudaEventCreate(&start));
        if (!stop) SS_CUDA_CHECK(cudaEventCreate(&stop));
        for (cudaEvent_t& event : slot_free) {
            if (!event) SS_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
        }
    }

    // Errors are ignored: this also runs at exit, when the driver may be gone.
    void release() {
        inputs.release();
        logits.release();
        tables.release();
        outputs.release();
        exact.release();
        fast.release();
        upload.release();
        staging.release();
        download.release();
        for (cudaEvent_t& event : slot_free) {
            if (event) cudaEventDestroy(event);
            event = nullptr;
        }
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
        if (stream) cudaStreamDestroy(stream);
        start = stop = nullptr;
        stream = nullptr;
    }
};

DeviceContext& device_context() {
    static DeviceContext context;
    return context;
}

// Waits for the stream when a call throws after enqueuing work, so no copy
// still in flight lands in a buffer the next batch is using.
class DrainOnError {
public:
    explicit DrainOnError(cudaStream_t stream) : stream_(stream) {}
    DrainOnError(const DrainOnError&) = delete;
    DrainOnError& operator=(const DrainOnError&) = delete;
    ~DrainOnError() {
        if (armed_) cudaStreamSynchronize(stream_);
    }
    void disarm() { armed_ = false; }

private:
    cudaStream_t stream_;
    bool armed_ = true;
};

template <class T>
T* at(unsigned char* base, std::size_t offset) {
    return reinterpret_cast<T*>(base + offset);
}

template <class T>
void put(unsigned char* base, std::size_t offset, const T* from, std::size_t count) {
    if (count > 0) std::memcpy(base + offset, from, count * sizeof(T));
}

// Host logits up to the device through the two pinned slots. The host waits
// only when a slot it is about to refill still has a piece on its way, which
// happens for batches over two slots (32 MiB).
void upload_logits(DeviceContext& context, cudaStream_t stream, float* device, const float* host, std::size_t count) {
    const std::size_t bytes = count * sizeof(float);
    unsigned char* slots = context.staging.reserve(2 * kStagingSlot);  // reserved already: no allocation
    auto* to = reinterpret_cast<unsigned char*>(device);
    const auto* from = reinterpret_cast<const unsigned char*>(host);
    std::size_t done = 0;
    for (int piece = 0; done < bytes; ++piece) {
        const int slot = piece % 2;
        const std::size_t part = std::min(kStagingSlot, bytes - done);
        unsigned char* staged = slots + static_cast<std::size_t>(slot) * kStagingSlot;
        if (piece >= 2) SS_CUDA_CHECK(cudaEventSynchronize(context.slot_free[slot]));  // its last piece has left
        std::memcpy(staged, from + done, part);
        SS_CUDA_CHECK(cudaMemcpyAsync(to + done, staged, part, cudaMemcpyHostToDevice, stream));
        SS_CUDA_CHECK(cudaEventRecord(context.slot_free[slot], stream));
        done += part;
    }
}

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

std::uint64_t cuda_buffer_allocations() { return buffer_allocations.load(); }

void cuda_release() {
    DeviceContext& context = device_context();
    const std::lock_guard<std::mutex> guard(context.lock);
    if (context.stream) cudaStreamSynchronize(context.stream);
    context.release();
}

double run_cuda(const CudaBatch& batch, std::vector<RowResult>& results, std::vector<std::uint8_t>& mask) {
    const std::int64_t rows = batch.rows;
    const std::int64_t vocab = batch.vocab;
    const auto row_count = static_cast<std::size_t>(rows);
    const auto cells = static_cast<std::size_t>(rows * vocab);
    std::vector<std::uint64_t> table_offsets(row_count + 1, 0);
    for (std::int64_t r = 0; r < rows; ++r) {
        const auto length = static_cast<std::uint64_t>(batch.prompt_offsets[r + 1] - batch.prompt_offsets[r] +
                                                       batch.output_offsets[r + 1] - batch.output_offsets[r]);
        table_offsets[static_cast<std::size_t>(r) + 1] = table_offsets[static_cast<std::size_t>(r)] + history_capacity(length);
    }
    const std::size_t table_size = table_offsets.back();
    const auto prompt_count = static_cast<std::size_t>(batch.prompt_offsets[rows]);
    const auto output_count = static_cast<std::size_t>(batch.output_offsets[rows]);

    // Where everything goes: the small inputs packed into one buffer (one
    // copy up), the history tables, the results and mask (one buffer down),
    // exact mode's workspace.
    Packing in;
    const std::size_t at_params = in.add(row_count * sizeof(RowParams));
    const std::size_t at_prompt_offsets = in.add((row_count + 1) * sizeof(std::int64_t));
    const std::size_t at_prompt_ids = in.add(prompt_count * sizeof(std::int32_t));
    const std::size_t at_output_offsets = in.add((row_count + 1) * sizeof(std::int64_t));
    const std::size_t at_output_ids = in.add(output_count * sizeof(std::int32_t));
    const std::size_t at_table_offsets = in.add((row_count + 1) * sizeof(std::uint64_t));
    Packing table;
    const std::size_t at_table_ids = table.add(table_size * sizeof(std::int32_t));
    const std::size_t at_table_context = table.add(table_size * sizeof(std::uint32_t));
    const std::size_t at_table_counts = table.add(table_size * sizeof(std::uint32_t));
    const std::size_t at_table_penalised = table.add(table_size * sizeof(double));
    Packing out;
    const std::size_t at_results = out.add(results.size() * sizeof(RowResult));
    const std::size_t at_mask = out.add(batch.kept_mask ? cells : 0);
    // Exact mode: one block per row, rows in chunks, so the f64 workspace stays near 1 GiB whatever B is.
    const std::int64_t per_row = vocab * static_cast<std::int64_t>(sizeof(double) + 2 * sizeof(std::int32_t));
    const std::int64_t chunk = std::max<std::int64_t>(1, std::min<std::int64_t>(rows, (std::int64_t{1} << 30) / per_row));
    const auto chunk_cells = static_cast<std::size_t>(chunk * vocab);
    Packing work;
    const std::size_t at_ws_logits = work.add(batch.fast ? 0 : chunk_cells * sizeof(double));
    const std::size_t at_ws_kept = work.add(batch.fast ? 0 : chunk_cells * sizeof(std::int32_t));
    const std::size_t at_ws_order = work.add(batch.fast ? 0 : chunk_cells * sizeof(std::int32_t));
    // Fast mode: room for each row's V keys, a history bit per id and row, and
    // for a row split across blocks (small batches) the parts' partials, the
    // count of keys gathered (zeroed) and the lowest id a penalty overflowed.
    const int parts = batch.fast ? split_parts(rows, vocab) : 0;
    const auto split_rows = parts > 0 ? row_count : 0;
    Packing fast;
    const std::size_t at_gathered = fast.add(batch.fast ? cells * sizeof(unsigned long long) : 0);
    const std::size_t at_history_bits =
        fast.add(batch.fast ? row_count * static_cast<std::size_t>((vocab + 31) / 32) * sizeof(std::uint32_t) : 0);
    const std::size_t at_partials = fast.add(row_count * static_cast<std::size_t>(parts) * sizeof(FirstPartial));
    const std::size_t at_gathered_totals = fast.add(split_rows * sizeof(unsigned long long));
    const std::size_t at_overflow_ids = fast.add(split_rows * sizeof(int));

    DeviceContext& context = device_context();
    const std::lock_guard<std::mutex> guard(context.lock);
    context.start_up();
    // Every buffer is grown (if it must be) before any work is enqueued.
    unsigned char* staged_in = context.upload.reserve(in.total());
    unsigned char* d_in = context.inputs.reserve(in.total());
    float* d_logits = batch.logits_on_device ? nullptr : reinterpret_cast<float*>(context.logits.reserve(cells * sizeof(float)));
    unsigned char* d_table = context.tables.reserve(table.total());
    unsigned char* d_out = context.outputs.reserve(out.total());
    unsigned char* staged_out = context.download.reserve(out.total());
    unsigned char* d_work = context.exact.reserve(work.total());
    unsigned char* d_fast = context.fast.reserve(fast.total());
    if (!batch.logits_on_device) context.staging.reserve(2 * kStagingSlot);

    cudaStream_t stream = batch.stream ? static_cast<cudaStream_t>(batch.stream) : context.stream;
    DrainOnError drain(stream);
    put(staged_in, at_params, batch.params, row_count);
    put(staged_in, at_prompt_offsets, batch.prompt_offsets, row_count + 1);
    put(staged_in, at_prompt_ids, batch.prompt_ids, prompt_count);
    put(staged_in, at_output_offsets, batch.output_offsets, row_count + 1);
    put(staged_in, at_output_ids, batch.output_ids, output_count);
    put(staged_in, at_table_offsets, table_offsets.data(), row_count + 1);
    SS_CUDA_CHECK(cudaMemcpyAsync(d_in, staged_in, in.total(), cudaMemcpyHostToDevice, stream));
    const float* logits = batch.logits;
    if (!batch.logits_on_device) {
        upload_logits(context, stream, d_logits, batch.logits, cells);
        logits = d_logits;
    }
    if (table_size > 0) {
        SS_CUDA_CHECK(cudaMemsetAsync(d_table + at_table_ids, 0xFF, table_size * sizeof(std::int32_t), stream));  // kEmptySlot
        SS_CUDA_CHECK(cudaMemsetAsync(d_table + at_table_context, 0, at_table_penalised - at_table_context, stream));
    }
    if (batch.kept_mask) SS_CUDA_CHECK(cudaMemsetAsync(d_out + at_mask, 0, cells, stream));
    if (split_rows > 0) {
        SS_CUDA_CHECK(cudaMemsetAsync(d_fast + at_gathered_totals, 0, split_rows * sizeof(unsigned long long), stream));
    }

    DeviceBatch b{logits,
                  vocab,
                  at<RowParams>(d_in, at_params),
                  at<std::int64_t>(d_in, at_prompt_offsets),
                  at<std::int32_t>(d_in, at_prompt_ids),
                  at<std::int64_t>(d_in, at_output_offsets),
                  at<std::int32_t>(d_in, at_output_ids),
                  at<std::uint64_t>(d_in, at_table_offsets),
                  at<std::int32_t>(d_table, at_table_ids),
                  at<std::uint32_t>(d_table, at_table_context),
                  at<std::uint32_t>(d_table, at_table_counts),
                  at<double>(d_table, at_table_penalised),
                  batch.kept_mask ? at<std::uint8_t>(d_out, at_mask) : nullptr,
                  batch.draws,
                  at<RowResult>(d_out, at_results),
                  at<unsigned long long>(d_fast, at_gathered),
                  at<std::uint32_t>(d_fast, at_history_bits),
                  at<FirstPartial>(d_fast, at_partials),
                  at<unsigned long long>(d_fast, at_gathered_totals),
                  table_size > 0 ? at<int>(d_fast, at_overflow_ids) : nullptr};

    SS_CUDA_CHECK(cudaEventRecord(context.start, stream));
    if (!batch.fast) {
        for (std::int64_t begin = 0; begin < rows; begin += chunk) {
            const std::int64_t end = std::min(rows, begin + chunk);
            exact_kernel<<<static_cast<unsigned>(end - begin), kExactThreads, 0, stream>>>(
                b, begin, at<double>(d_work, at_ws_logits), at<std::int32_t>(d_work, at_ws_kept),
                at<std::int32_t>(d_work, at_ws_order));
            SS_CUDA_CHECK(cudaGetLastError());
        }
    } else {
        if (parts > 0) {
            const dim3 grid(static_cast<unsigned>(parts), static_cast<unsigned>(rows));
            if (b.overflow_ids) {
                fast_history_kernel<<<static_cast<unsigned>(rows), kFastThreads, 0, stream>>>(b);
                SS_CUDA_CHECK(cudaGetLastError());
            }
            fast_first_kernel<<<grid, kFastThreads, 0, stream>>>(b, parts);
            SS_CUDA_CHECK(cudaGetLastError());
            fast_gather_kernel<<<grid, kFastThreads, 0, stream>>>(b, parts);
            SS_CUDA_CHECK(cudaGetLastError());
        }
        fast_kernel<<<static_cast<unsigned>(rows), kFastThreads, 0, stream>>>(b, parts);
        SS_CUDA_CHECK(cudaGetLastError());
    }
    SS_CUDA_CHECK(cudaEventRecord(context.stop, stream));

    SS_CUDA_CHECK(cudaMemcpyAsync(staged_out + at_results, d_out + at_results, results.size() * sizeof(RowResult),
                                  cudaMemcpyDeviceToHost, stream));
    if (batch.kept_mask) {
        SS_CUDA_CHECK(cudaMemcpyAsync(staged_out + at_mask, d_out + at_mask, cells, cudaMemcpyDeviceToHost, stream));
    }
    SS_CUDA_CHECK(cudaStreamSynchronize(stream));  // the one wait of the call
    drain.disarm();
    float ms = 0.0f;
    SS_CUDA_CHECK(cudaEventElapsedTime(&ms, context.start, context.stop));
    if (!results.empty()) std::memcpy(results.data(), staged_out + at_results, results.size() * sizeof(RowResult));
    if (batch.kept_mask) {
        mask.resize(cells);
        std::memcpy(mask.data(), staged_out + at_mask, cells);
    }
    return static_cast<double>(ms) * 1e-3;
}

}  // namespace samplescope::batch
