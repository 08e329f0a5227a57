// Exact mode's row routine (kernels/exact_row.h) run the way the CUDA exact
// kernel runs it: BlockLanes over the threads of a "block", here std::threads
// meeting at a std::barrier where the GPU's threads meet at __syncthreads.
// The reductions, the ordered compaction and the barriers are the kernel's own
// code, so this checks their logic on any machine; the GPU check runs the
// same rows on a device. Against one lane (the host twin, the reference's bits):
// the same errors, tokens, draw counts and kept sets, logprobs within the
// near-tie rule's 1e-9; and the same bits from two runs on the same threads.
#include <QtTest>

#include <barrier>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "kernels/exact_row.h"
#include "kernels/history_table.h"
#include "kernels/row_lanes.h"
#include "kernels/tools/batch_generate.h"

using namespace samplescope;
using namespace samplescope::batch;

namespace {

struct ThreadBarrier {
    std::barrier<>* barrier;
    void operator()() const { barrier->arrive_and_wait(); }
};

// One row's inputs, with its history table built as the host twin builds it.
struct Row {
    std::vector<float> logits;
    RowParams params;
    std::vector<std::int32_t> prompt;
    std::vector<std::int32_t> output;
};

struct Outcome {
    std::vector<RowResult> results;
    std::vector<std::uint8_t> mask;
};

// Runs the row on `lanes` threads (0: SerialLanes, the host twin's call).
Outcome run_row(const Row& row, int lanes, std::int32_t draws) {
    const auto vocab = static_cast<std::int64_t>(row.logits.size());
    HistoryTable table;
    table.capacity = history_capacity(row.prompt.size() + row.output.size());
    std::vector<std::int32_t> ids(table.capacity);
    std::vector<std::uint32_t> context(table.capacity), counts(table.capacity);
    std::vector<double> penalised(table.capacity);
    if (table.capacity > 0) {
        table.ids = ids.data();
        table.in_context = context.data();
        table.output_count = counts.data();
        table.penalised = penalised.data();
        history_clear(table);
        history_add(table, row.prompt.data(), static_cast<std::int64_t>(row.prompt.size()), row.output.data(),
                    static_cast<std::int64_t>(row.output.size()));
        history_fill_penalised(table, row.logits.data(), row.params);
    }
    std::vector<double> ws_logits(row.logits.size());
    std::vector<std::int32_t> kept(row.logits.size()), order(row.logits.size());
    const ExactWorkspace ws{ws_logits.data(), kept.data(), order.data()};
    Outcome outcome;
    outcome.results.resize(static_cast<std::size_t>(draws));
    outcome.mask.assign(row.logits.size(), 0);
    if (lanes == 0) {
        exact_sample_row(row.logits.data(), vocab, row.params, table, ws, outcome.mask.data(), draws,
                         outcome.results.data());
        return outcome;
    }
    std::barrier<> barrier(lanes);
    std::vector<double> values(static_cast<std::size_t>(lanes));
    std::vector<std::int64_t> shared_counts(static_cast<std::size_t>(lanes));
    std::vector<std::thread> threads;
    for (int lane = 0; lane < lanes; ++lane) {
        threads.emplace_back([&, lane] {
            const BlockLanes<ThreadBarrier> block{lane, lanes, values.data(), shared_counts.data(),
                                                  ThreadBarrier{&barrier}};
            exact_sample_row(block, row.logits.data(), vocab, row.params, table, ws, outcome.mask.data(), draws,
                             outcome.results.data());
        });
    }
    for (auto& thread : threads) thread.join();
    return outcome;
}

std::vector<Row> rows_of(const SyntheticBatch& batch) {
    const BatchInput input = batch.input();
    std::vector<Row> rows;
    for (std::size_t r = 0; r < batch.rows; ++r) {
        Row row;
        row.logits.assign(batch.logits.begin() + static_cast<std::ptrdiff_t>(r * batch.vocab),
                          batch.logits.begin() + static_cast<std::ptrdiff_t>((r + 1) * batch.vocab));
        row.params = input.row_params(r);
        const auto prompt = input.prompt(r);
        const auto output = input.output(r);
        row.prompt.assign(prompt.begin(), prompt.end());
        row.output.assign(output.begin(), output.end());
        rows.push_back(std::move(row));
    }
    return rows;
}

// Rows the generated workloads do not hold: the failures found while sampling.
std::vector<Row> failing_rows() {
    std::vector<Row> rows;
    Row hot;  // l / T overflows at ids 3 and 7; the error names 3
    hot.logits.assign(64, 1.0f);
    hot.logits[7] = 3.0e38f;
    hot.logits[3] = -3.0e38f;
    hot.params.temperature = 1e-300;
    hot.params.top_k = 64;
    hot.params.seed = 5;
    rows.push_back(hot);
    Row pushed = hot;  // a frequency penalty pushes ids 9 and 2 to +inf; the error names 2
    pushed.params.temperature = 1.0;
    pushed.params.frequency_penalty = -1.0e308;
    pushed.output = {9, 2, 9, 2, 11};
    rows.push_back(pushed);
    Row emptied;  // a penalty leaves no finite logit
    emptied.logits.assign(40, -std::numeric_limits<float>::infinity());
    emptied.logits[6] = 2.0f;
    emptied.params.frequency_penalty = 1.0e308;
    emptied.params.top_k = 40;
    emptied.output = {6, 6};
    rows.push_back(emptied);
    Row refused;  // NaN at 33 and +inf at 12 and 50: refused, naming 12
    refused.logits.assign(64, 0.5f);
    refused.logits[33] = std::numeric_limits<float>::quiet_NaN();
    refused.logits[12] = std::numeric_limits<float>::infinity();
    refused.logits[50] = std::numeric_limits<float>::infinity();
    refused.params.frequency_penalty = 1.0e308;  // the refusal comes before the penalty's error
    refused.output = {12};
    rows.push_back(refused);
    Row nothing;  // every logit -inf
    nothing.logits.assign(64, -std::numeric_limits<float>::infinity());
    rows.push_back(nothing);
    return rows;
}

void expect_agreement(const Outcome& serial, const Outcome& block, int lanes, std::size_t index) {
    const QByteArray where = QByteArray("row ") + QByteArray::number(static_cast<qulonglong>(index)) + " on " +
                             QByteArray::number(lanes) + " lanes";
    for (std::size_t j = 0; j < serial.results.size(); ++j) {
        const RowResult& a = serial.results[j];
        const RowResult& b = block.results[j];
        QVERIFY2(a.error == b.error, where.constData());
        QVERIFY2(a.error_id == b.error_id, where.constData());
        QVERIFY2(a.token == b.token, where.constData());
        QVERIFY2(a.kept_count == b.kept_count, where.constData());
        QVERIFY2(a.draws_after == b.draws_after, where.constData());
        if (a.error == RowError::None) QVERIFY2(std::fabs(a.logprob - b.logprob) <= 1e-9, where.constData());
    }
    QVERIFY2(serial.mask == block.mask, where.constData());
}

}  // namespace

class ExactLanesTest : public QObject {
    Q_OBJECT
private slots:
    void blockAgreesWithOneLane() {
        std::vector<Row> rows = rows_of(generate_batch(120, 300, Workload::Mixed, 4));
        for (Row& row : rows_of(generate_batch(4, 3000, Workload::EveryStage, 6))) rows.push_back(std::move(row));
        for (Row& row : rows_of(generate_batch(3, 5000, Workload::TopPOnly, 8))) rows.push_back(std::move(row));
        for (Row& row : rows_of(generate_batch(3, 700, Workload::Greedy, 9))) rows.push_back(std::move(row));
        for (Row& row : failing_rows()) rows.push_back(std::move(row));
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const Outcome serial = run_row(rows[i], 0, 3);
            for (const int lanes : {1, 4, 32, 128}) expect_agreement(serial, run_row(rows[i], lanes, 3), lanes, i);
        }
    }

    void failuresNameTheLowestId() {
        const std::vector<Row> rows = failing_rows();
        QCOMPARE(run_row(rows[0], 8, 1).results[0].error, RowError::TemperatureOverflow);
        QCOMPARE(run_row(rows[0], 8, 1).results[0].error_id, 3);
        QCOMPARE(run_row(rows[1], 8, 1).results[0].error, RowError::PenaltyOverflow);
        QCOMPARE(run_row(rows[1], 8, 1).results[0].error_id, 2);
        QCOMPARE(run_row(rows[2], 8, 1).results[0].error, RowError::PenaltyEmptiedRow);
        QCOMPARE(run_row(rows[3], 8, 1).results[0].error, RowError::RefusedLogit);
        QCOMPARE(run_row(rows[3], 8, 1).results[0].error_id, 12);
        QVERIFY(std::isinf(run_row(rows[3], 8, 1).results[0].logprob));
        QCOMPARE(run_row(rows[4], 8, 1).results[0].error, RowError::NoFiniteLogit);
    }

    // The block's trees are fixed, so a row gives the same bits on every run.
    void blockIsDeterministic() {
        const std::vector<Row> rows = rows_of(generate_batch(12, 4000, Workload::EveryStage, 10));
        for (const Row& row : rows) {
            const Outcome first = run_row(row, 32, 2);
            const Outcome second = run_row(row, 32, 2);
            QCOMPARE(std::memcmp(first.results.data(), second.results.data(), first.results.size() * sizeof(RowResult)), 0);
            QVERIFY(first.mask == second.mask);
        }
    }
};

QTEST_APPLESS_MAIN(ExactLanesTest)
#include "test_exact_lanes.moc"
