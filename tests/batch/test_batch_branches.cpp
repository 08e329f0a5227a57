// Rows built to send fast mode down each branch of its selection
// (kernels/tools/branch_rows.h): past radix level 0, to the last levels, the
// kept set too large to hold as a list, a k above the finite count, min-p
// alone; the same batch twice; refused logits row by row. Every row is checked
// against the CPU reference (kept sets under the near-tie rule, logprobs), on
// the backend named by SAMPLESCOPE_TEST_BACKEND.
// On the host twin the test also runs each row through FastRowSampler itself,
// shows that it gives the batch run's bits, and reads which branch it took.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "engine/base/input_error.h"
#include "kernels/batch_backends.h"
#include "kernels/fast_row_host.h"
#include "kernels/history_table.h"
#include "kernels/tools/batch_compare.h"
#include "kernels/tools/batch_generate.h"
#include "kernels/tools/batch_reference.h"
#include "kernels/tools/branch_rows.h"

using namespace samplescope;
using namespace samplescope::batch;

namespace {

const Backend kBackend = parse_backend(SAMPLESCOPE_TEST_BACKEND);
constexpr std::size_t kVocab = kBranchVocab;

BatchOutput run(const BatchInput& input, bool mask = true, std::int32_t draws = 1, unsigned threads = 0) {
    BatchOptions options;
    options.mode = Mode::Fast;
    options.backend = kBackend;
    options.kept_mask = mask;
    options.draws = draws;
    options.threads = threads;
    return run_batch(input, options);
}

// Fast mode against the reference: no kept set differs beyond the near-tie
// rule, no row mismatches, logprobs within fast mode's tolerance.
void expect_matches_reference(const BatchInput& input) {
    CompareOptions options;
    options.mode = Mode::Fast;
    options.backend = kBackend;
    const BatchComparison result = compare_batch(input, options);
    QCOMPARE(result.counts.rows, input.rows);
    QCOMPARE(result.kept_mismatches, std::size_t{0});
    QCOMPARE(result.counts.mismatch, std::size_t{0});
    QVERIFY(result.worst_logprob_difference <= 1e-4);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Row `row` through the host twin's sampler alone (the rows here carry no
// penalties, so no history): its result must be the batch run's, bit for bit.
FastRowSampler::Branches branches_of(const BatchInput& input, std::size_t row, const BatchOutput& batch) {
    FastRowSampler sampler;
    RowResult result;
    std::vector<std::uint8_t> mask(kVocab, 0);
    sampler.sample(input.logits + row * kVocab, static_cast<std::int64_t>(kVocab), input.row_params(row), HistoryTable{},
                   mask.data(), 1, &result);
    [&] {
        QCOMPARE(result.error, RowError::None);
        QCOMPARE(result.token, batch.token_at(row));
        QVERIFY(same_bits(result.logprob, batch.logprob_at(row)));
        QCOMPARE(result.kept_count, batch.kept_count[row]);
        QVERIFY(std::equal(mask.begin(), mask.end(), batch.kept_mask.begin() + static_cast<std::ptrdiff_t>(row * kVocab)));
    }();
    return sampler.last_branches();
}

std::string message_of(const auto& call) {
    try {
        call();
    } catch (const InputError& error) {
        return error.what();
    }
    return "";
}

}  // namespace

class BatchBranchesTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (kBackend == Backend::Cuda) {
            const CudaProbe probe = probe_cuda();
            if (!probe.available) QSKIP(qPrintable("no GPU for the cuda backend: " + QString::fromStdString(probe.reason)));
        }
    }

    // Top-p alone over logits spread evenly: the level-0 bucket where the mass
    // reaches p holds thousands of ids, so the walk goes one level further.
    void topPGoesPastLevelZero() {
        const RowBatch rows = top_p_past_level_zero_rows();
        const BatchInput input = rows.input();
        expect_matches_reference(input);
        if (kBackend != Backend::Host) return;
        const BatchOutput out = run(input);
        for (std::size_t r = 0; r < rows.rows(); ++r) {
            const auto branches = branches_of(input, r, out);
            QCOMPARE(branches.top_k_levels, 0);
            QCOMPARE(branches.top_p_levels, 2);
            QVERIFY(!branches.top_p_walked);
            QVERIFY(out.kept_count[r] > 2048);  // too many to come out as a list
            QVERIFY(!branches.top_p_materialised);
        }
    }

    // k = 5,000 is more than the selection holds as a ranked list: the kept set
    // stays a threshold over the row, and a top-p after it selects from the row.
    void topKAboveTheListCapacity() {
        const RowBatch rows = top_k_above_capacity_rows();
        const BatchInput input = rows.input();
        expect_matches_reference(input);
        const BatchOutput out = run(input);
        QCOMPARE(out.kept_count[0], 5000);
        if (kBackend != Backend::Host) return;
        const auto k_branches = branches_of(input, 0, out);
        QVERIFY(k_branches.top_k_levels >= 1);
        QVERIFY(!k_branches.top_k_materialised);
        QCOMPARE(k_branches.top_p_levels, 0);
        const auto p_branches = branches_of(input, 1, out);
        QVERIFY(!p_branches.top_k_materialised);
        QVERIFY(!p_branches.top_p_walked);
        QVERIFY(p_branches.top_p_levels >= 1);
        QVERIFY(out.kept_count[1] < 5000);
    }

    // Every logit tied: the logit's bits never separate the ids, so the
    // selection reads the id half of the key down to level 4 (five levels).
    void allTiedReachFiveLevels() {
        const RowBatch rows = all_tied_rows();
        const BatchInput input = rows.input();
        expect_matches_reference(input);
        const BatchOutput out = run(input);
        QCOMPARE(out.kept_ids(0, kVocab), (std::vector<std::int32_t>{0, 1, 2, 3, 4}));  // ties go to the lowest ids
        if (kBackend != Backend::Host) return;
        const auto k_branches = branches_of(input, 0, out);
        QCOMPARE(k_branches.top_k_levels, 5);
        QVERIFY(k_branches.top_k_materialised);
        const auto p_branches = branches_of(input, 1, out);
        QCOMPARE(p_branches.top_p_levels, 5);
    }

    // Half the row -inf and k above the finite count: the running count never
    // reaches k, every finite id is kept and no -inf id is.
    void kAboveTheFiniteCount() {
        const RowBatch rows = k_above_finite_count_rows();
        const BatchInput input = rows.input();
        expect_matches_reference(input);
        const BatchOutput out = run(input);
        for (std::size_t r = 0; r < rows.rows(); ++r) {
            QCOMPARE(out.kept_count[r], static_cast<std::int32_t>(kVocab / 2));
            for (const auto id : out.kept_ids(r, kVocab)) {
                QVERIFY(input.logits[r * kVocab + static_cast<std::size_t>(id)] > -std::numeric_limits<float>::infinity());
            }
            if (kBackend != Backend::Host) continue;
            const auto branches = branches_of(input, r, out);
            QVERIFY(branches.top_k_levels >= 1);
            QVERIFY(!branches.top_k_materialised);
        }
    }

    // Min-p alone: no radix selection runs; the bound in log space alone cuts the row.
    void minPAlone() {
        const RowBatch rows = min_p_alone_rows();
        const BatchInput input = rows.input();
        expect_matches_reference(input);
        const BatchOutput out = run(input);
        // The first read, then one gather that the race and the mask share.
        if (kBackend == Backend::Host) QCOMPARE(out.row_reads, std::uint64_t{2} * rows.rows());
        for (std::size_t r = 0; r < rows.rows(); ++r) {
            QVERIFY(out.kept_count[r] > 1);
            QVERIFY(out.kept_count[r] < static_cast<std::int32_t>(kVocab));
            if (kBackend != Backend::Host) continue;
            const auto branches = branches_of(input, r, out);
            QCOMPARE(branches.top_k_levels, 0);
            QCOMPARE(branches.top_p_levels, 0);
            QVERIFY(!branches.top_p_walked);
            QVERIFY(branches.min_p_raised);
        }
    }

    // The same batch, every kind of row above, run twice and split over one
    // thread and over several: tokens, logprobs and kept masks bitwise equal.
    void sameBatchTwice() {
        const RowBatch rows = every_branch_rows();
        const BatchInput input = rows.input();
        const BatchOutput first = run(input, true, 3);
        const BatchOutput second = run(input, true, 3);
        const BatchOutput single = run(input, true, 3, 1);
        for (const BatchOutput* again : {&second, &single}) {
            QCOMPARE(again->token, first.token);
            QCOMPARE(again->kept_count, first.kept_count);
            QCOMPARE(again->draws_after, first.draws_after);
            QVERIFY(again->kept_mask == first.kept_mask);
            QCOMPARE(again->logprob.size(), first.logprob.size());
            QCOMPARE(std::memcmp(again->logprob.data(), first.logprob.data(), first.logprob.size() * sizeof(double)), 0);
        }
    }

    // Full reads of the row per workload (the host twin counts them; the GPU
    // runs the same routine): every stage two, top-p alone three, greedy one.
    // The generated rows have a language model's shape and, for every stage,
    // a history of 1,000 ids that the penalties change.
    void readsPerRow() {
        if (kBackend != Backend::Host) QSKIP("the host twin counts the reads");
        const std::pair<Workload, std::uint64_t> expected[] = {
            {Workload::EveryStage, 2}, {Workload::TopPOnly, 3}, {Workload::Greedy, 1}};
        for (const auto& [workload, reads] : expected) {
            const SyntheticBatch batch = generate_batch(8, kVocab, workload, 7);
            const BatchInput input = batch.input();
            const BatchOutput output = run(input, true);  // the kept mask costs no read
            QCOMPARE(output.row_reads, reads * input.rows);
            expect_matches_reference(input);
        }
    }

    // NaN and +inf logits, refused row by row where the host twin reads them,
    // each with the message the reference gives for that row.
    void refusedLogitsRowByRow() {
        if (kBackend != Backend::Host) return;  // run_host is the host twin's own path
        const RowBatch rows = refused_logit_rows();
        const BatchInput input = rows.input();
        struct Expected {
            RowError error;
            std::int32_t id;
            const char* value;
        };
        const std::vector<Expected> expected{{RowError::None, -1, ""},
                                             {RowError::RefusedLogit, 70000, "nan"},
                                             {RowError::RefusedLogit, 5, "inf"},
                                             {RowError::RefusedLogit, static_cast<std::int32_t>(kVocab - 1), "inf"},
                                             {RowError::NoFiniteLogit, -1, "-inf"}};
        for (const Mode mode : {Mode::Fast, Mode::Exact}) {
            BatchOptions options;
            options.mode = mode;
            options.backend = Backend::Host;
            options.threads = 2;
            std::vector<RowResult> results(input.rows);
            std::vector<std::uint8_t> mask;
            run_host(input, options, results, mask);
            for (std::size_t r = 0; r < input.rows; ++r) {
                QCOMPARE(results[r].error, expected[r].error);
                if (expected[r].error == RowError::None) continue;
                if (expected[r].error == RowError::RefusedLogit) QCOMPARE(results[r].error_id, expected[r].id);
                // This row's refusal alone, as run_batch words it, against the reference's.
                std::vector<RowResult> only(input.rows);
                only[r] = results[r];
                const std::string engine = message_of([&] { throw_first_row_error(only, 1, input); });
                const std::string reference = message_of([&] { trace_reference_row(input, r); });
                QVERIFY2(!reference.empty(), reference.c_str());
                QCOMPARE(engine, reference);
                QVERIFY(engine.find("row " + std::to_string(r) + ": ") == 0);
                QVERIFY(engine.find(expected[r].value) != std::string::npos);
            }
            // The whole batch is refused with the first refused row's message.
            QCOMPARE(message_of([&] { run_batch(input, options); }), message_of([&] { trace_reference_row(input, 1); }));
        }
    }
};

QTEST_APPLESS_MAIN(BatchBranchesTest)
#include "test_batch_branches.moc"
