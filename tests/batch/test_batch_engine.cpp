// The batch engine against the CPU reference, on the backend named by
// SAMPLESCOPE_TEST_BACKEND ("host" or "cuda"; the cuda build of this file skips
// every test, with the reason, when no GPU answers).
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <thread>
#include <vector>

#if defined(SAMPLESCOPE_WITH_CUDA)
#include <cuda_runtime.h>
#endif

#include "engine/base/input_error.h"
#include "engine/stats/near_tie.h"
#include "kernels/batch_backends.h"
#include "kernels/host_lanes.h"
#include "kernels/tools/batch_compare.h"
#include "kernels/tools/batch_generate.h"
#include "kernels/tools/batch_reference.h"

using namespace samplescope;
using namespace samplescope::batch;

namespace {

const Backend kBackend = parse_backend(SAMPLESCOPE_TEST_BACKEND);

BatchOutput run(const BatchInput& input, Mode mode, bool mask = false, std::int32_t draws = 1) {
    BatchOptions options;
    options.mode = mode;
    options.backend = kBackend;
    options.kept_mask = mask;
    options.draws = draws;
    return run_batch(input, options);
}

// The mixed batch plus rows built to sit on the edges the contract names.
SyntheticBatch proof_batch(std::size_t rows, std::size_t vocab, std::uint64_t seed) {
    SyntheticBatch batch = generate_batch(rows, vocab, Workload::Mixed, seed);
    const auto add_row = [&](std::vector<float> logits, RowRequest request) {
        batch.logits.insert(batch.logits.end(), logits.begin(), logits.end());
        batch.requests.push_back(std::move(request));
        ++batch.rows;
    };
    const float ninf = -std::numeric_limits<float>::infinity();
    std::vector<float> all_tied(vocab, 1.5f);
    RowRequest plain;
    plain.params.seed = 11;
    add_row(all_tied, plain);  // every logit tied
    RowRequest tied_k = plain;
    tied_k.params.top_k = 5;
    tied_k.params.top_p = 0.3;
    add_row(all_tied, tied_k);  // top-k and top-p resolved by id among ties
    std::vector<float> one_finite(vocab, ninf);
    one_finite[vocab / 2] = -3.0f;
    add_row(one_finite, plain);  // a single finite id
    RowRequest greedy_tie;
    greedy_tie.params.temperature = 0.0;
    std::vector<float> two_max(vocab, 0.0f);
    two_max[7] = 9.0f;
    two_max[3] = 9.0f;
    add_row(two_max, greedy_tie);  // greedy ties go to the lowest id
    RowRequest repeated;
    repeated.params.seed = 5;
    repeated.params.repetition_penalty = 1.7;
    repeated.params.frequency_penalty = 0.4;
    repeated.params.presence_penalty = 0.2;
    repeated.prompt_ids = {1, 1, 2, 2, 2, 9};
    repeated.output_ids = {2, 2, 9, 9, 9, 9, 0};
    std::vector<float> ramp(vocab);
    for (std::size_t i = 0; i < vocab; ++i) ramp[i] = static_cast<float>(0.1 * static_cast<double>(i % 11));
    add_row(ramp, repeated);  // penalties over repeated ids
    return batch;
}

BatchInput permuted(const SyntheticBatch& batch, const std::vector<std::size_t>& order, std::vector<float>& logits,
                    std::vector<RowRequest>& requests) {
    logits.clear();
    requests.clear();
    for (const auto r : order) {
        logits.insert(logits.end(), batch.logits.begin() + static_cast<std::ptrdiff_t>(r * batch.vocab),
                      batch.logits.begin() + static_cast<std::ptrdiff_t>((r + 1) * batch.vocab));
        requests.push_back(batch.requests[r]);
    }
    return make_batch_input(logits.data(), order.size(), batch.vocab, requests);
}

}  // namespace

class BatchEngineTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (kBackend == Backend::Cuda) {
            const CudaProbe probe = probe_cuda();
            if (!probe.available) QSKIP(qPrintable("no GPU for the cuda backend: " + QString::fromStdString(probe.reason)));
        }
    }

    // Contract section 2's worked example, in both modes.
    void workedExample() {
        const std::vector<float> logits{1, 3, 2, 3, -1};
        RowRequest row;
        row.params.top_k = 3;
        row.params.top_p = 0.8;
        row.params.seed = 0;
        const std::vector<RowRequest> rows{row};
        const BatchInput input = make_batch_input(logits.data(), 1, 5, rows);
        const BatchOutput exact = run(input, Mode::Exact, true);
        QCOMPARE(exact.token_at(0), 3);
        QVERIFY(std::fabs(exact.logprob_at(0) - (-0.92487)) < 5e-6);
        QCOMPARE(exact.kept_ids(0, 5), (std::vector<std::int32_t>{1, 3}));
        QCOMPARE(exact.draws_after[0], std::uint64_t{1});
        const BatchOutput fast = run(input, Mode::Fast, true);
        QCOMPARE(fast.kept_ids(0, 5), (std::vector<std::int32_t>{1, 3}));
        QVERIFY(fast.token_at(0) == 1 || fast.token_at(0) == 3);
        QCOMPARE(fast.draws_after[0], std::uint64_t{1});
    }

    // At least 10,000 rows of mixed parameters: exact mode gives no mismatch.
    void exactMatchesReference() {
        const SyntheticBatch batch = proof_batch(10000, 40, 1);
        CompareOptions options;
        options.mode = Mode::Exact;
        options.backend = kBackend;
        const BatchComparison result = compare_batch(batch.input(), options);
        QVERIFY(result.counts.rows >= 10000);
        QCOMPARE(result.counts.mismatch, std::size_t{0});
        QCOMPARE(result.kept_mismatches, std::size_t{0});
        QVERIFY(result.worst_logprob_difference <= 1e-9);
        // On the host the exact twin runs the reference's operations in its order.
        if (kBackend == Backend::Host) QCOMPARE(result.counts.equal, result.counts.rows);
    }

    // Full-size rows (V = 128,256) with every stage active.
    void exactAndFastAtFullVocabulary() {
        const SyntheticBatch batch = generate_batch(3, 128256, Workload::EveryStage, 2);
        for (const Mode mode : {Mode::Exact, Mode::Fast}) {
            CompareOptions options;
            options.mode = mode;
            options.backend = kBackend;
            const BatchComparison result = compare_batch(batch.input(), options);
            QCOMPARE(result.counts.mismatch, std::size_t{0});
            QCOMPARE(result.kept_mismatches, std::size_t{0});
        }
    }

    // Fast mode: no kept set beyond the near-tie rule, and the draws follow q.
    void fastKeptSetsAndDraws() {
        const SyntheticBatch batch = proof_batch(10000, 40, 3);
        CompareOptions options;
        options.mode = Mode::Fast;
        options.backend = kBackend;
        const BatchComparison result = compare_batch(batch.input(), options);
        QCOMPARE(result.kept_mismatches, std::size_t{0});
        QCOMPARE(result.counts.mismatch, std::size_t{0});
        QVERIFY(result.worst_logprob_difference <= 1e-4);

        const SyntheticBatch fit_batch = generate_batch(400, 40, Workload::Mixed, 4);
        options.draws = 400;
        const BatchComparison fitted = compare_batch(fit_batch.input(), options);
        QVERIFY(fitted.fit.has_value());
        QVERIFY(fitted.fit->rows > 100);
        qInfo("goodness of fit: chi-square %.1f on %.0f dof over %zu rows, p = %.4f", fitted.fit->statistic,
              fitted.fit->dof, fitted.fit->rows, fitted.fit->p_value);
        QVERIFY(fitted.fit->p_value > 1e-3);
    }

    // A row's result depends on that row only: not its index, not the batch size.
    void permutationAndBatchSizeInvariance() {
        const SyntheticBatch batch = proof_batch(300, 64, 5);
        for (const Mode mode : {Mode::Exact, Mode::Fast}) {
            const BatchOutput whole = run(batch.input(), mode);
            std::vector<std::size_t> order(batch.rows);
            std::iota(order.begin(), order.end(), 0);
            std::reverse(order.begin(), order.end());
            std::rotate(order.begin(), order.begin() + 17, order.end());
            std::vector<float> logits;
            std::vector<RowRequest> requests;
            const BatchOutput shuffled = run(permuted(batch, order, logits, requests), mode);
            for (std::size_t i = 0; i < order.size(); ++i) {
                QCOMPARE(shuffled.token_at(i), whole.token_at(order[i]));
                QCOMPARE(shuffled.logprob_at(i), whole.logprob_at(order[i]));
                QCOMPARE(shuffled.kept_count[i], whole.kept_count[order[i]]);
            }
            for (const std::size_t size : {std::size_t{1}, std::size_t{7}, std::size_t{64}}) {
                for (std::size_t start = 0; start + size <= batch.rows; start += size * 5) {
                    std::vector<std::size_t> part(size);
                    std::iota(part.begin(), part.end(), start);
                    const BatchOutput piece = run(permuted(batch, part, logits, requests), mode);
                    for (std::size_t i = 0; i < size; ++i) QCOMPARE(piece.token_at(i), whole.token_at(start + i));
                }
            }
        }
    }

    // The seed page's heterogeneous batch: greedy; T = 1.1, p = 0.95; seeded
    // T = 0.2, k = 40; nothing set.
    void heterogeneousBatch() {
        const std::size_t vocab = 1000;
        SyntheticBatch batch = generate_batch(4, vocab, Workload::Greedy, 9);
        batch.requests[1].params.temperature = 1.1;
        batch.requests[1].params.top_p = 0.95;
        batch.requests[2].params.temperature = 0.2;
        batch.requests[2].params.top_k = 40;
        batch.requests[2].params.seed = 1234;
        batch.requests[3].params = SamplingParams{};
        batch.requests[3].params.seed = 77;
        const BatchInput input = batch.input();
        const BatchOutput reference = run_reference(input);
        const BatchOutput exact = run(input, Mode::Exact, true);
        const BatchOutput fast = run(input, Mode::Fast, true);
        for (std::size_t r = 0; r < 4; ++r) {
            QCOMPARE(exact.token_at(r), reference.token_at(r));
            QVERIFY(std::fabs(exact.logprob_at(r) - reference.logprob_at(r)) <= 1e-9);
            const SampleTrace trace = trace_reference_row(input, r);
            QVERIFY(compare_kept(trace, fast.kept_ids(r, vocab), kFastTolerance.delta) != Verdict::Mismatch);
        }
        const float* greedy_row = input.logits;
        const auto argmax = static_cast<std::int32_t>(std::max_element(greedy_row, greedy_row + vocab) - greedy_row);
        QCOMPARE(exact.token_at(0), argmax);
        QCOMPARE(fast.token_at(0), argmax);
        QCOMPARE(exact.draws_after[0], std::uint64_t{0});  // greedy consumes no draw
        QCOMPARE(exact.kept_count[2], 40);
        QCOMPARE(fast.kept_count[2], 40);
        QCOMPARE(exact.kept_count[3], static_cast<std::int32_t>(vocab));  // nothing set keeps every id
        QCOMPARE(fast.kept_count[3], static_cast<std::int32_t>(vocab));
    }

    // Draw positions: draws_before advances the stream the way the reference's skip does.
    void drawAccounting() {
        SyntheticBatch batch = generate_batch(20, 50, Workload::Mixed, 6);
        for (auto& row : batch.requests) row.skip_draws = 1000003;
        const BatchInput input = batch.input();
        const BatchOutput reference = run_reference(input, 3);
        const BatchOutput exact = run(input, Mode::Exact, false, 3);
        QCOMPARE(exact.token, reference.token);
        QCOMPARE(exact.draws_after, reference.draws_after);
    }

    void badInputIsRefused() {
        std::vector<float> logits{1.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f};
        const std::vector<RowRequest> one(1);
        QVERIFY_THROWS_EXCEPTION(InputError, run(make_batch_input(logits.data(), 1, 3, one), Mode::Fast));
        logits[1] = std::numeric_limits<float>::infinity();
        QVERIFY_THROWS_EXCEPTION(InputError, run(make_batch_input(logits.data(), 1, 3, one), Mode::Exact));
        logits[1] = 2.0f;
        std::vector<RowRequest> bad_id(1);
        bad_id[0].output_ids = {3};
        QVERIFY_THROWS_EXCEPTION(InputError, make_batch_input(logits.data(), 1, 3, bad_id));
        QVERIFY_THROWS_EXCEPTION(InputError, make_batch_input(logits.data(), 1, 3, std::vector<RowRequest>(2)));
        BatchInput input = make_batch_input(logits.data(), 1, 3, one);
        input.top_p[0] = 1.5;
        QVERIFY_THROWS_EXCEPTION(InputError, run(input, Mode::Fast));
        input = make_batch_input(logits.data(), 1, 3, one);
        input.prompt_offsets = {0, 2};
        QVERIFY_THROWS_EXCEPTION(InputError, run(input, Mode::Fast));
        // A penalty that overflows a logit is refused in both modes, as the reference refuses it.
        std::vector<float> huge{3.0e38f, 1.0f};
        std::vector<RowRequest> overflow(1);
        overflow[0].params.repetition_penalty = 1e-300;
        overflow[0].prompt_ids = {0};
        const BatchInput overflowing = make_batch_input(huge.data(), 1, 2, overflow);
        QVERIFY_THROWS_EXCEPTION(InputError, run_reference(overflowing));
        QVERIFY_THROWS_EXCEPTION(InputError, run(overflowing, Mode::Exact));
        QVERIFY_THROWS_EXCEPTION(InputError, run(overflowing, Mode::Fast));
        std::vector<RowRequest> cold(1);
        cold[0].params.temperature = 1e-310;
        const BatchInput freezing = make_batch_input(huge.data(), 1, 2, cold);
        QVERIFY_THROWS_EXCEPTION(InputError, run_reference(freezing));
        QVERIFY_THROWS_EXCEPTION(InputError, run(freezing, Mode::Exact));
        QVERIFY_THROWS_EXCEPTION(InputError, run(freezing, Mode::Fast));
    }

    // The logits are checked where the rows are read (the host twin's first
    // pass), yet a batch with several faults is refused with the message the
    // checks before any run give: rows in order, a row's parameters before its
    // logits, refused logits before any row that fails while computing.
    void refusalsKeepTheirOrder() {
        const std::size_t rows = 8;
        const std::size_t vocab = 1000;  // 62 groups of 16 lanes and a tail of 8
        const float nan = std::numeric_limits<float>::quiet_NaN();
        const float inf = std::numeric_limits<float>::infinity();
        const auto message = [](const auto& call) -> std::string {
            try {
                call();
            } catch (const InputError& error) {
                return error.what();
            }
            return "";
        };
        struct Case {
            const char* name;
            std::vector<std::pair<std::size_t, std::size_t>> nan_at;  // (row, id)
            std::vector<std::pair<std::size_t, std::size_t>> inf_at;
            std::vector<std::size_t> all_minus_inf;
            std::vector<std::size_t> bad_top_p;
            std::vector<std::size_t> freezing;  // temperature overflow while sampling
            const char* expected;
        };
        const std::vector<Case> cases{
            {"nan in a penalised row after a freezing row", {{5, 777}}, {}, {}, {}, {2}, "row 5: "},
            {"+inf in the tail", {}, {{0, 999}}, {}, {}, {}, "row 0: "},
            {"first of two refused ids", {{3, 40}}, {{3, 17}}, {}, {}, {}, "id 17"},
            {"every logit -inf before bad parameters", {}, {}, {3}, {6}, {}, "row 3: every logit is -inf"},
            {"bad parameters before a nan", {{4, 1}}, {}, {}, {1}, {}, "row 1: "},
            {"a row's parameters before its logits", {{2, 1}}, {}, {}, {2}, {}, "top_p"},
        };
        for (const auto& c : cases) {
            SyntheticBatch batch = generate_batch(rows, vocab, Workload::Mixed, 21);
            for (std::size_t r = 0; r < rows; ++r) {
                // Row 5 carries penalties, so its check is the copy's pass.
                if (r == 5) {
                    batch.requests[r].params.repetition_penalty = 1.3;
                    batch.requests[r].prompt_ids = {1, 2, 777};
                }
            }
            for (const auto& [r, id] : c.nan_at) batch.logits[r * vocab + id] = nan;
            for (const auto& [r, id] : c.inf_at) batch.logits[r * vocab + id] = inf;
            for (const auto r : c.all_minus_inf) std::fill_n(batch.logits.begin() + static_cast<std::ptrdiff_t>(r * vocab), vocab, -inf);
            for (const auto r : c.freezing) {
                batch.requests[r].params.temperature = 1e-310;
                batch.logits[r * vocab] = 3.0e38f;
            }
            BatchInput input = batch.input();
            for (const auto r : c.bad_top_p) input.top_p[r] = 1.5;
            const std::string checked = message([&] { validate_batch(input); });
            QVERIFY2(checked.find(c.expected) != std::string::npos, c.name);
            for (const Mode mode : {Mode::Fast, Mode::Exact}) {
                QCOMPARE(message([&] { run(input, mode); }), checked);
            }
        }
    }

    // The host twin's passes run at the widest vector registers the CPU has
    // (16, 8 or 4 floats); every width this CPU runs gives the same bits.
    void hostWidthsAgreeBitForBit() {
        if (kBackend != Backend::Host) QSKIP("the vector widths are the host twin's");
        const int widest = lanes::host_width();
        std::vector<SyntheticBatch> batches;
        batches.push_back(proof_batch(60, 1000, 31));  // 62 groups of 16 and a tail of 8
        batches.push_back(generate_batch(3, 128256, Workload::EveryStage, 32));
        batches.push_back(generate_batch(2, 128256, Workload::TopPOnly, 33));
        for (const auto& batch : batches) {
            const BatchInput input = batch.input();
            lanes::set_host_width(4);
            const BatchOutput narrow = run(input, Mode::Fast, true, 2);
            for (const int width : {8, 16}) {
                if (lanes::set_host_width(width) != width) continue;
                const BatchOutput wide = run(input, Mode::Fast, true, 2);
                QCOMPARE(wide.token, narrow.token);
                QCOMPARE(wide.kept_count, narrow.kept_count);
                QCOMPARE(wide.kept_mask, narrow.kept_mask);
                QCOMPARE(std::memcmp(wide.logprob.data(), narrow.logprob.data(), narrow.logprob.size() * sizeof(double)), 0);
            }
        }
        lanes::set_host_width(widest);
    }

    // The CUDA backend keeps its buffers from one batch to the next, grows them
    // for a larger batch and frees them on cuda_release(); none of that, a
    // caller's stream, or two threads asking at once changes a bit of the
    // output (on the host twin the same calls prove the same).
    void repeatedBatchesGiveTheSameBits() {
        const SyntheticBatch small = generate_batch(6, 500, Workload::EveryStage, 21);
        // 80 x 128,256 f32 logits are 41 MB: three pieces through the two 16 MiB staging slots.
        const SyntheticBatch large = generate_batch(80, 128256, Workload::EveryStage, 22);
        const auto same = [](const BatchOutput& a, const BatchOutput& b) {
            return a.token == b.token && a.logprob == b.logprob && a.kept_count == b.kept_count &&
                   a.draws_after == b.draws_after && a.kept_mask == b.kept_mask;
        };
        for (const Mode mode : {Mode::Exact, Mode::Fast}) {
            const BatchOutput first = run(small.input(), mode, true, 2);
            const std::uint64_t allocations = cuda_buffer_allocations();
            QVERIFY(same(first, run(small.input(), mode, true, 2)));
            QCOMPARE(cuda_buffer_allocations(), allocations);  // warm: nothing allocated
            if (mode == Mode::Fast) {
                const BatchOutput big = run(large.input(), mode, true);
                QVERIFY(same(big, run(large.input(), mode, true)));
            }
            const std::uint64_t grown = cuda_buffer_allocations();
            QVERIFY(same(first, run(small.input(), mode, true, 2)));  // in the grown buffers
            QCOMPARE(cuda_buffer_allocations(), grown);
            cuda_release();
            QVERIFY(same(first, run(small.input(), mode, true, 2)));
            if (kBackend == Backend::Cuda) QVERIFY(cuda_buffer_allocations() > grown);  // made again
            BatchOutput other;
            std::thread second([&] { other = run(small.input(), mode, true, 2); });
            const BatchOutput mine = run(small.input(), mode, true, 2);
            second.join();
            QVERIFY(same(first, mine));
            QVERIFY(same(first, other));
#if defined(SAMPLESCOPE_WITH_CUDA)
            if (kBackend == Backend::Cuda) {
                cudaStream_t stream = nullptr;
                QCOMPARE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
                BatchOptions options;
                options.mode = mode;
                options.backend = kBackend;
                options.kept_mask = true;
                options.draws = 2;
                options.cuda_stream = stream;
                const BatchOutput on_stream = run_batch(small.input(), options);
                QCOMPARE(cudaStreamDestroy(stream), cudaSuccess);
                QVERIFY(same(first, on_stream));
            }
#endif
        }
    }

    // Auto says which backend ran; asking for cuda without a GPU is a clear error.
    void backendIsReported() {
        const SyntheticBatch batch = generate_batch(4, 32, Workload::Mixed, 8);
        BatchOptions options;
        options.backend = Backend::Auto;
        const BatchOutput out = run_batch(batch.input(), options);
        const CudaProbe probe = probe_cuda();
        QCOMPARE(out.backend, probe.available ? Backend::Cuda : Backend::Host);
        QVERIFY(!out.device.empty());
        if (!probe.available) {
            QVERIFY(!out.note.empty());
            options.backend = Backend::Cuda;
            QVERIFY_THROWS_EXCEPTION(InputError, run_batch(batch.input(), options));
        }
    }
};

QTEST_APPLESS_MAIN(BatchEngineTest)
#include "test_batch_engine.moc"
