// The GPU's fast-mode block code (kernels/fast_row_cuda.cuh) run on the CPU:
// a std::thread per GPU thread, a barrier for __syncthreads() and plain
// versions of CUB's block primitives (block_emulation.h). Each row runs as the
// CUDA backend runs it, one block per row and, for small batches, split across
// blocks, and must give the host twin's tokens, kept counts, draw counts,
// errors and kept masks, and its logprobs to within the normaliser's order
// and width of sums.
#include "block_emulation.h"

#include "kernels/fast_row_cuda.cuh"

#include <QtTest>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "kernels/fast_row_host.h"
#include "kernels/tools/batch_generate.h"

using namespace samplescope;
using namespace samplescope::batch;

namespace {

struct RowRun {
    std::vector<RowResult> results;
    std::vector<std::uint8_t> mask;
};

// A row's history table, as the host twin's workers and the GPU's blocks lay it out.
struct Table {
    std::vector<std::int32_t> ids;
    std::vector<std::uint32_t> in_context;
    std::vector<std::uint32_t> counts;
    std::vector<double> penalised;
    HistoryTable view(std::size_t length) {
        HistoryTable table;
        table.capacity = history_capacity(length);
        ids.assign(table.capacity, kEmptySlot);
        in_context.assign(table.capacity, 0);
        counts.assign(table.capacity, 0);
        penalised.assign(table.capacity, 0.0);
        table.ids = ids.data();
        table.in_context = in_context.data();
        table.output_count = counts.data();
        table.penalised = penalised.data();
        return table;
    }
};

RowRun host_row(const BatchInput& input, std::size_t row, std::int32_t draws) {
    const float* logits = input.logits + row * input.vocab;
    const RowParams p = input.row_params(row);
    const auto prompt = input.prompt(row);
    const auto output = input.output(row);
    Table storage;
    HistoryTable table = storage.view(prompt.size() + output.size());
    if (table.capacity > 0) {
        history_add(table, prompt.data(), static_cast<std::int64_t>(prompt.size()), output.data(),
                    static_cast<std::int64_t>(output.size()));
        history_fill_penalised(table, logits, p);
    }
    RowRun run;
    run.results.resize(static_cast<std::size_t>(draws));
    run.mask.assign(input.vocab, 0);
    FastRowSampler sampler;
    sampler.sample(logits, static_cast<std::int64_t>(input.vocab), p, table, run.mask.data(), draws, run.results.data());
    return run;
}

// The row as the CUDA backend runs it: fast_kernel alone (parts = 0), or the
// split path's history, first-read and gather blocks, then fast_kernel.
RowRun block_row(const BatchInput& input, std::size_t row, std::int32_t draws, int parts) {
    const auto vocab = static_cast<std::int64_t>(input.vocab);
    const auto prompt = input.prompt(row);
    const auto output = input.output(row);
    Table storage;
    std::vector<std::uint32_t> bits(static_cast<std::size_t>((vocab + 31) / 32), 0xFFFFFFFFu);  // cleared by the block
    std::vector<unsigned long long> gathered(input.vocab);
    RowRun run;
    run.results.resize(static_cast<std::size_t>(draws));
    run.mask.assign(input.vocab, 0);

    FastRowJob job;
    job.p = input.row_params(row);
    job.in = FastRowInput{input.logits + row * input.vocab, vocab, storage.view(prompt.size() + output.size()),
                          nullptr, gathered.data(), run.mask.data(), run.results.data()};
    if (job.in.table.capacity > 0 && job.p.uses_penalties()) job.in.penalised_bits = bits.data();
    job.prompt = prompt.data();
    job.prompt_length = static_cast<std::int64_t>(prompt.size());
    job.output = output.data();
    job.output_length = static_cast<std::int64_t>(output.size());

    const auto shared = std::make_unique<FastShared>();
    if (parts == 0) {
        run_emulated_block(kFastThreads, [&] { fast_row_block(*shared, job, draws, nullptr); });
        return run;
    }
    // As run_cuda launches it: the history kernel only for a batch with
    // histories; without, the row block is told of no overflow (null).
    const bool histories = job.in.table.capacity > 0;
    int overflow_id = kNoOverflow;
    if (histories) run_emulated_block(kFastThreads, [&] { history_block(overflow_id, job); });
    std::vector<FirstPartial> partials(static_cast<std::size_t>(parts));
    for (int part = 0; part < parts; ++part) {
        const auto temp = std::make_unique<typename FirstReduce::TempStorage>();
        run_emulated_block(kFastThreads, [&] {
            first_part_block(*temp, job, overflow_id, part, parts, &partials[static_cast<std::size_t>(part)]);
        });
    }
    unsigned long long total = 0;
    for (int part = 0; part < parts; ++part) {
        run_emulated_block(kFastThreads, [&] { gather_part_block(job, overflow_id, partials.data(), part, parts, &total); });
    }
    job.in.partials = partials.data();
    job.in.parts = parts;
    job.in.gathered_total = &total;
    run_emulated_block(kFastThreads, [&] { fast_row_block(*shared, job, draws, histories ? &overflow_id : nullptr); });
    return run;
}

void expect_same(const RowRun& host, const RowRun& block, std::size_t row) {
    const QByteArray where = "row " + QByteArray::number(static_cast<qulonglong>(row));
    for (std::size_t j = 0; j < host.results.size(); ++j) {
        const RowResult& h = host.results[j];
        const RowResult& b = block.results[j];
        QVERIFY2(h.error == b.error, where);
        QVERIFY2(h.error_id == b.error_id, where);
        QVERIFY2(h.token == b.token, where);
        QVERIFY2(h.kept_count == b.kept_count, where);
        QVERIFY2(h.draws_after == b.draws_after, where);
        if (h.error == RowError::RefusedLogit) {
            QVERIFY2(std::isnan(h.logprob) ? std::isnan(b.logprob) : h.logprob == b.logprob, where);
        } else if (h.error == RowError::None) {
            // The normaliser's sums run in another order and width: the host
            // adds f32 terms in f32 lanes, 64 terms a lane per block of 1,024
            // ids, then in f64; each GPU thread adds every term in f64.
            QVERIFY2(std::fabs(h.logprob - b.logprob) <= 1e-6 * std::max(1.0, std::fabs(h.logprob)),
                     where + " logprob " + QByteArray::number(h.logprob, 'g', 17) + " vs " +
                         QByteArray::number(b.logprob, 'g', 17));
        }
    }
    QVERIFY2(host.mask == block.mask, where);
}

void expect_batch(const BatchInput& input, std::int32_t draws, int parts) {
    for (std::size_t row = 0; row < input.rows; ++row) {
        expect_same(host_row(input, row, draws), block_row(input, row, draws, parts), row);
    }
}

}  // namespace

class FastBlockTest : public QObject {
    Q_OBJECT
private slots:
    // Every stage at V = 128,256 with a 1,000-id history, top-p alone and greedy.
    void generatedRowsOneBlockPerRow() {
        for (const Workload workload : {Workload::EveryStage, Workload::TopPOnly, Workload::Greedy}) {
            const SyntheticBatch batch = generate_batch(2, 128256, workload, 3);
            expect_batch(batch.input(), 1, 0);
        }
    }

    void generatedRowsSplitAcrossBlocks() {
        for (const Workload workload : {Workload::EveryStage, Workload::Greedy}) {
            const SyntheticBatch batch = generate_batch(2, 128256, workload, 4);
            expect_batch(batch.input(), 1, 8);
        }
    }

    // The mixed workload's parameter combinations (penalties that overflow,
    // k >= V, min-p alone, ...) at a small V, three draws each.
    void mixedRows() {
        const SyntheticBatch batch = generate_batch(24, 1000, Workload::Mixed, 5);
        expect_batch(batch.input(), 3, 0);
        expect_batch(batch.input(), 3, 3);
    }

    // Rows for the selection's deeper branches: every logit tied with k = 5
    // (five levels), k = 5,000 (a kept set beyond the ranked list's room),
    // half the row -inf with k above the finite count.
    void deepBranches() {
        const std::size_t vocab = 20000;
        std::vector<float> logits;
        std::vector<RowRequest> requests;
        RowRequest request;
        request.params.seed = 9;
        logits.insert(logits.end(), vocab, 1.5f);
        request.params.top_k = 5;
        requests.push_back(request);
        for (std::size_t i = 0; i < vocab; ++i) logits.push_back(static_cast<float>(i % 977) * 0.001f);
        request.params.top_k = 5000;
        request.params.top_p = 0.6;
        requests.push_back(request);
        for (std::size_t i = 0; i < vocab; ++i) {
            logits.push_back(i % 2 ? -std::numeric_limits<float>::infinity() : static_cast<float>(i % 131));
        }
        request.params.top_k = 15000;
        request.params.top_p = 1.0;
        requests.push_back(request);
        const BatchInput input = make_batch_input(logits.data(), requests.size(), vocab, requests);
        expect_batch(input, 2, 0);
        expect_batch(input, 2, 4);
    }

    // NaN, +inf and an all -inf row: refused with the same id and value.
    void refusedRows() {
        const std::size_t vocab = 5000;
        std::vector<float> logits(3 * vocab, 0.25f);
        logits[1234] = std::numeric_limits<float>::quiet_NaN();
        logits[4000] = std::numeric_limits<float>::infinity();
        logits[vocab + 77] = std::numeric_limits<float>::infinity();
        std::fill(logits.begin() + 2 * static_cast<std::ptrdiff_t>(vocab), logits.end(),
                  -std::numeric_limits<float>::infinity());
        std::vector<RowRequest> requests(3);
        requests[1].params.top_k = 10;
        const BatchInput input = make_batch_input(logits.data(), 3, vocab, requests);
        expect_batch(input, 1, 0);
        expect_batch(input, 1, 2);
        QCOMPARE(block_row(input, 0, 1, 0).results[0].error_id, 1234);
    }
};

QTEST_GUILESS_MAIN(FastBlockTest)
#include "test_fast_block.moc"
