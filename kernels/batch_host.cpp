// The host twin: the same row routines as the CUDA kernels (exact_row.h) or the
// same selection passes (fast_row_host.cpp), with threads over rows. A row's
// result depends only on that row, so the split across threads cannot change it.
// Each row's logits are checked (NaN, +inf, every logit -inf) by the row
// routines themselves, in their first read of the row (fast mode's first
// pass, exact mode's widening); run_batch turns the first refusal into the
// contract's message.
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "kernels/batch_backends.h"
#include "kernels/exact_row.h"
#include "kernels/fast_row_host.h"
#include "engine/base/input_error.h"

namespace samplescope::batch {

namespace {

// One thread's reusable buffers: the history table (sized by the longest
// history it has met) and, in exact mode, the f64 row and two id lists.
struct HostWorker {
    std::vector<std::int32_t> table_ids;
    std::vector<std::uint32_t> table_context;
    std::vector<std::uint32_t> table_counts;
    std::vector<double> table_penalised;
    std::vector<double> exact_logits;
    std::vector<std::int32_t> exact_kept;
    std::vector<std::int32_t> exact_order;
    FastRowSampler fast;

    HistoryTable table_for(const BatchInput& input, std::size_t row, const float* logits, const RowParams& p) {
        const auto prompt = input.prompt(row);
        const auto output = input.output(row);
        HistoryTable table;
        table.capacity = history_capacity(prompt.size() + output.size());
        if (table.capacity == 0) return table;
        table_ids.resize(std::max<std::size_t>(table_ids.size(), table.capacity));
        table_context.resize(table_ids.size());
        table_counts.resize(table_ids.size());
        table_penalised.resize(table_ids.size());
        table.ids = table_ids.data();
        table.in_context = table_context.data();
        table.output_count = table_counts.data();
        table.penalised = table_penalised.data();
        history_clear(table);
        history_add(table, prompt.data(), static_cast<std::int64_t>(prompt.size()), output.data(),
                    static_cast<std::int64_t>(output.size()));
        history_fill_penalised(table, logits, p);
        return table;
    }

    void run_row(const BatchInput& input, const BatchOptions& options, std::size_t row, RowResult* results,
                 std::uint8_t* mask) {
        const auto vocab = static_cast<std::int64_t>(input.vocab);
        const float* logits = input.logits + row * input.vocab;
        const RowParams p = input.row_params(row);
        const HistoryTable table = table_for(input, row, logits, p);
        if (options.mode == Mode::Exact) {
            exact_logits.resize(input.vocab);
            exact_kept.resize(input.vocab);
            exact_order.resize(input.vocab);
            exact_sample_row(logits, vocab, p, table,
                             ExactWorkspace{exact_logits.data(), exact_kept.data(), exact_order.data()}, mask,
                             options.draws, results);
        } else {
            fast.sample(logits, vocab, p, table, mask, options.draws, results);
        }
    }
};

}  // namespace

unsigned run_host(const BatchInput& input, const BatchOptions& options, std::vector<RowResult>& results,
                  std::vector<std::uint8_t>& mask, std::uint64_t* row_reads) {
    const unsigned hardware = std::max(1U, std::thread::hardware_concurrency());
    const unsigned wanted = options.threads ? options.threads : hardware;
    const auto threads = static_cast<unsigned>(std::min<std::size_t>(wanted, std::max<std::size_t>(input.rows, 1)));
    std::atomic<std::size_t> next{0};
    // The first failure of any worker (out of memory, a bad row) is rethrown
    // here once every thread has stopped: an exception never leaves a thread.
    std::mutex failure_lock;
    std::exception_ptr failure;
    std::atomic<std::uint64_t> reads{0};
    const auto work = [&]() {
        try {
            HostWorker worker;
            for (std::size_t row = next++; row < input.rows; row = next++) {
                worker.run_row(input, options, row, results.data() + row * static_cast<std::size_t>(options.draws),
                               options.kept_mask ? mask.data() + row * input.vocab : nullptr);
            }
            reads += worker.fast.row_reads();
        } catch (...) {
            next = input.rows;
            const std::lock_guard<std::mutex> guard(failure_lock);
            if (!failure) failure = std::current_exception();
        }
    };
    if (threads <= 1) {
        work();
        if (failure) std::rethrow_exception(failure);
        if (row_reads) *row_reads = reads;
        return 1;
    }
    std::vector<std::thread> pool;
    std::string start_error;
    try {
        pool.reserve(threads - 1);
        for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    } catch (const std::exception& error) {
        // The threads already started finish the rows; the run is still refused.
        start_error = "thread " + std::to_string(pool.size() + 1) + " of " + std::to_string(threads) +
                      " could not start (" + error.what() + ")";
    }
    work();
    for (auto& thread : pool) thread.join();
    if (failure) std::rethrow_exception(failure);
    if (!start_error.empty()) throw InputError("threads", "--threads " + std::to_string(wanted) + ": " + start_error);
    if (row_reads) *row_reads = reads;
    return threads;
}

}  // namespace samplescope::batch
