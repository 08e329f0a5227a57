// Checks against independent values for the gaps a mutation run found: each
// slot fails on a plausible one-line bug that the rest of the suite forgave.
#include <QtTest>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "engine/core/inverse_cdf.h"
#include "engine/core/row_request.h"
#include "engine/io/logits_loader.h"
#include "engine/stats/chi_square.h"
#include "engine/stats/near_tie.h"
#include "kernels/batch_engine.h"
#include "kernels/tools/batch_compare.h"

using namespace samplescope;
using namespace samplescope::batch;

namespace {

BatchOutput run_rows(const std::vector<float>& logits, std::size_t vocab, const std::vector<RowRequest>& requests,
                     Mode mode) {
    const BatchInput input = make_batch_input(logits.data(), requests.size(), vocab, requests);
    BatchOptions options;
    options.mode = mode;
    options.backend = Backend::Host;
    options.threads = 1;
    return run_batch(input, options);
}

RowRequest greedy_row() {
    RowRequest row;
    row.params.temperature = 0.0;
    row.params.seed = 7;
    return row;
}

}  // namespace

class MutationGapsTest : public QObject {
    Q_OBJECT
private slots:
    // The contract: a greedy tie goes to the lowest id, in both modes. Exact
    // ties only: the near-tie rule would forgive either answer.
    void greedyTieGoesToTheLowestId() {
        const std::vector<float> logits{1.0F, 3.0F, 3.0F, 0.5F,   // tie at ids 1 and 2
                                        7.0F, 7.0F, 7.0F, 7.0F,   // all tied
                                        -1.0F, 2.0F, -1.0F, 2.0F};
        const std::vector<RowRequest> rows(3, greedy_row());
        for (const Mode mode : {Mode::Exact, Mode::Fast}) {
            const BatchOutput out = run_rows(logits, 4, rows, mode);
            QCOMPARE(out.token_at(0), 1);
            QCOMPARE(out.token_at(1), 0);
            QCOMPARE(out.token_at(2), 1);
        }
    }

    // u above the last cumulative sum (rounding): the largest kept id with
    // q > 0, and the draw says it fell back.
    void inverseCdfFallsBackToTheLargestIdWithMass() {
        const std::vector<double> logits{0.42, 1.81, -2.62};
        double max = logits[0];
        for (const double x : logits) max = std::max(max, x);
        Values probs;
        double z = 0.0;
        for (const double x : logits) z += std::exp(x - max);
        for (const double x : logits) probs.push_back(std::exp(x - max) / z);
        const double sum = probs[0] + probs[1] + probs[2];
        const double u = 1.0 - std::ldexp(1.0, -53);
        QVERIFY2(sum <= u, "the precondition: this row's sum rounds below 1 - 2^-53");
        const IdList kept{0, 1, 2};
        bool fell_back = false;
        Values cumulative;
        QCOMPARE(inverse_cdf_draw(kept, probs, u, &cumulative, fell_back), 2);
        QVERIFY(fell_back);
        QCOMPARE(cumulative.back(), sum);

        // The largest id with q > 0, not the last kept id nor the lowest.
        const IdList ids{3, 5, 9};
        const Values with_zero{0.25, 0.5, 0.0};
        fell_back = false;
        QCOMPARE(inverse_cdf_draw(ids, with_zero, 0.875, nullptr, fell_back), 5);
        QVERIFY(fell_back);
        fell_back = false;
        QCOMPARE(inverse_cdf_draw(ids, with_zero, 0.5, nullptr, fell_back), 5);
        QVERIFY(!fell_back);
    }

    // The constant the engine really uses, and what the CLI reports.
    void exactNearTieDeltaIsOneInABillion() {
        QCOMPARE(kExactTolerance.delta, 1e-9);
        const std::vector<float> logits{1.0F, 2.0F, 3.0F};
        RowRequest row;
        row.params.seed = 1;
        const std::vector<RowRequest> rows{row};
        const BatchComparison exact = compare_batch(make_batch_input(logits.data(), 1, 3, rows), CompareOptions{});
        QCOMPARE(exact.tolerance.delta, 1e-9);
        // Within 1e-9 of each other is a tie; 1e-6 apart is not.
        QVERIFY(within_delta(0.5, 0.5 + 0.9e-9, exact.tolerance.delta));
        QVERIFY(!within_delta(0.5, 0.5 + 1e-7, exact.tolerance.delta));
    }

    // '=' is the writer's native order: little-endian on the hosts we build for.
    void npyNativeByteOrderIsTheHostsOrder() {
        if constexpr (std::endian::native != std::endian::little) QSKIP("a big-endian host");
        std::string header = "{'descr': '=f8', 'fortran_order': False, 'shape': (3,), }";
        while ((10 + header.size() + 1) % 64 != 0) header += ' ';
        header += '\n';
        std::string bytes = "\x93NUMPY";
        bytes += '\x01';
        bytes += '\x00';
        bytes += static_cast<char>(header.size() & 0xFF);
        bytes += static_cast<char>(header.size() >> 8);
        bytes += header;
        for (const double x : {1.5, -2.0, 1e300}) {
            char raw[8];
            std::memcpy(raw, &x, 8);
            bytes.append(raw, 8);
        }
        const LogitsMatrix matrix = load_logits_bytes(bytes, "native.npy");
        QCOMPARE(matrix.values, (std::vector<double>{1.5, -2.0, 1e300}));
    }

    // The statistic and degrees of freedom against values worked by hand.
    void goodnessOfFitStatisticAndDegreesOfFreedom() {
        const std::vector<std::uint64_t> observed{30, 70};
        const std::vector<double> q{0.5, 0.5};
        const ChiSquareTest fit = chi_square_fit(observed, q, 100);
        QCOMPARE(fit.statistic, 16.0);  // (30-50)^2/50 + (70-50)^2/50
        QCOMPARE(fit.degrees_of_freedom, std::size_t{1});         // two cells, one constraint
        QVERIFY(std::fabs(fit.p_value - 6.334e-5) < 1e-7);  // chi-square(1) tail at 16
        const std::vector<std::uint64_t> three{20, 30, 50};
        const std::vector<double> q3{0.2, 0.3, 0.5};
        const ChiSquareTest exact_fit = chi_square_fit(three, q3, 100);
        QCOMPARE(exact_fit.statistic, 0.0);
        QCOMPARE(exact_fit.degrees_of_freedom, std::size_t{2});
        QCOMPARE(exact_fit.p_value, 1.0);
    }

    // compare's fit: each row's two equal ids give one degree of freedom, and
    // the summed statistic matches the draws it reports.
    void batchGoodnessOfFitCountsOneDegreePerTwoCellRow() {
        const std::vector<float> logits{0.0F, 0.0F, 0.0F, 0.0F, 0.0F, 0.0F};
        std::vector<RowRequest> rows(3);
        for (std::size_t r = 0; r < rows.size(); ++r) rows[r].params.seed = 11 + r;
        CompareOptions options;
        options.mode = Mode::Fast;
        options.backend = Backend::Host;
        options.draws = 2000;
        const BatchComparison result = compare_batch(make_batch_input(logits.data(), 3, 2, rows), options);
        QVERIFY(result.fit.has_value());
        QCOMPARE(result.fit->rows, std::size_t{3});
        QCOMPARE(result.fit->dof, 3.0);
        QVERIFY2(result.fit->p_value > 1e-4, qPrintable(QString::number(result.fit->p_value)));
        QCOMPARE(result.fit->p_value, chi_square_p_value(result.fit->statistic, 3.0));

        // A wrong q fails: 1000/1000 draws against q = (0.9, 0.1).
        const std::vector<std::uint64_t> observed{1000, 1000};
        const std::vector<double> wrong{0.9, 0.1};
        QVERIFY(chi_square_fit(observed, wrong, 2000).p_value < 1e-12);
    }
};

QTEST_GUILESS_MAIN(MutationGapsTest)
#include "test_mutation_gaps.moc"
