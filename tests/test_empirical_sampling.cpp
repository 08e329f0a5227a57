// Empirical sampling (engine/stats/empirical_sampling.h): the draws are the
// request's stream, the chi-square test passes for the right q and fails for a
// wrong one (fixed seeds), and its p-value matches closed forms.
#include <QtTest>

#include <atomic>
#include <cmath>

#include "engine/stats/empirical_sampling.h"
#include "engine/base/input_error.h"
#include "engine/pipelines/pipeline_examples.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"

using namespace samplescope;

namespace {

const PipelineExample& example_c() {
    for (const auto& e : pipeline_examples()) {
        if (e.key == "C") return e;
    }
    qFatal("no example C");
}

PipelineInput input_of(const PipelineExample& e, std::uint64_t seed) {
    PipelineInput input{e.logits, e.params, e.prompt_ids, e.output_ids};
    input.params.seed = seed;
    return input;
}

}  // namespace

class EmpiricalSamplingTest : public QObject {
    Q_OBJECT
private slots:
    // The one pooling rule and statistic (engine/stats/chi_square.h), against
    // values worked by hand: 3 degrees of freedom have the closed form
    // Q(3/2, x) = erfc(sqrt x) + 2 sqrt(x / pi) e^-x.
    void pearsonTestKnownValues() {
        const std::vector<GoodnessCell> cells{{10, 12}, {20, 18}, {30, 33}, {40, 37}};
        const ChiSquareTest test = pearson_test(cells);
        QCOMPARE(test.statistic, 0.4 + 0.2 + 0.3 + 0.225);
        QCOMPARE(test.degrees_of_freedom, std::size_t{3});
        QCOMPARE(test.bins, std::size_t{4});
        const double x = 1.125 / 2;
        const double closed = std::erfc(std::sqrt(x)) + 2.0 * std::sqrt(x / 3.141592653589793) * std::exp(-x);
        QVERIFY(std::fabs(test.p_value - closed) < 1e-12);

        // Cells expected below 5 pool into one bin (3 expected), still small, so
        // it joins the smallest other bin: {50: 49, 47 + 3: 48 + 3}.
        const std::vector<GoodnessCell> small{{1, 3}, {2, 0}, {50, 49}, {47, 48}};
        const ChiSquareTest pooled = pearson_test(small);
        QCOMPARE(pooled.bins, std::size_t{2});
        QCOMPARE(pooled.degrees_of_freedom, std::size_t{1});
        QVERIFY(std::fabs(pooled.statistic - (1.0 / 50 + 1.0 / 50)) < 1e-15);

        // A draw no cell expects fails outright; rows add up.
        const std::vector<GoodnessCell> impossible{{50, 50}, {50, 49}, {0, 1}};
        const ChiSquareTest failed = pearson_test(impossible);
        QCOMPARE(failed.impossible_draws, std::uint64_t{1});
        QCOMPARE(failed.p_value, 0.0);
        ChiSquareTest sum = test;
        sum.add(pooled);
        QCOMPARE(sum.degrees_of_freedom, std::size_t{4});
        QCOMPARE(sum.p_value, chi_square_p_value(test.statistic + pooled.statistic, 4));
    }

    // Token by token against values worked by hand. N = 100, q = {0.5, 0.3,
    // 0.15, 0.05}, counts {60, 25, 10, 5}: expected {50, 30, 15, 5}, all at
    // least 5, so nothing is pooled and all four are tested. Chi-square
    // 100/50 + 25/30 + 25/15 + 0 = 4.5 on 3 degrees of freedom, p = Q(3/2,
    // 2.25) = erfc(1.5) + 2 sqrt(2.25 / pi) e^-2.25 = 0.21229. z = (60 - 50) /
    // sqrt(100 x 0.5 x 0.5) = 2 is the largest, p = erfc(sqrt 2) = 0.0455003;
    // it is the smallest of four p-values, so Holm multiplies it by 4.
    void tokenDeviationsKnownValues() {
        Histogram h;
        h.ids = {0, 1, 2, 3};
        h.expected = {0.5, 0.3, 0.15, 0.05};
        h.counts = {60, 25, 10, 5};
        h.draws = 100;
        const ChiSquareTest test = chi_square_test(h, h.ids, h.expected);
        QVERIFY(std::fabs(test.statistic - 4.5) < 1e-12);
        QCOMPARE(test.degrees_of_freedom, std::size_t{3});
        QCOMPARE(test.pooled_cells, std::size_t{0});
        QVERIFY(std::fabs(test.p_value - 0.21229028736013333) < 1e-12);
        QVERIFY(!rejects(test));
        const TokenDeviations d = token_deviations(h, h.ids, h.expected);
        QCOMPARE(d.tested, std::size_t{4});
        QCOMPARE(d.id, 0);
        QVERIFY(std::fabs(d.z - 2.0) < 1e-12);
        QVERIFY(std::fabs(d.p - 0.04550026389635844) < 1e-12);
        QVERIFY(std::fabs(d.p_holm - 0.18200105558543375) < 1e-12);

        // q = {0.9, 0.06, 0.03, 0.01}, counts {88, 7, 4, 1}: ids 2 and 3 expect
        // 3 and 1, are pooled (4 expected, 5 seen) and, still below 5, join
        // the smallest bin, id 1's: {90: 88, 10: 12}, chi-square 4/90 + 4/10
        // on 1 degree of freedom. Only ids 0 and 1 are tested alone: z_0 =
        // -2 / sqrt(9) = -2/3, z_1 = 1 / sqrt(5.64); Holm doubles id 0's p
        // (erfc(sqrt 2 / 3) = 0.505) and caps it at 1.
        Histogram pooled;
        pooled.ids = {0, 1, 2, 3};
        pooled.expected = {0.9, 0.06, 0.03, 0.01};
        pooled.counts = {88, 7, 4, 1};
        pooled.draws = 100;
        const ChiSquareTest small = chi_square_test(pooled, pooled.ids, pooled.expected);
        QCOMPARE(small.bins, std::size_t{2});
        QCOMPARE(small.pooled_cells, std::size_t{2});
        QVERIFY(std::fabs(small.pooled_expected - 4.0) < 1e-12);
        QVERIFY(small.pooled_merged);
        QVERIFY(std::fabs(small.statistic - (4.0 / 90 + 0.4)) < 1e-12);
        const TokenDeviations two = token_deviations(pooled, pooled.ids, pooled.expected);
        QCOMPARE(two.tested, std::size_t{2});
        QCOMPARE(two.id, 0);
        QVERIFY(std::fabs(two.z + 2.0 / 3.0) < 1e-12);
        const double p0 = std::erfc(2.0 / 3.0 / std::sqrt(2.0));
        QVERIFY(std::fabs(two.p - p0) < 1e-15);
        QVERIFY(std::fabs(p0 - 0.5049850750938458) < 1e-12);
        QCOMPARE(two.p_holm, 1.0);

        // The verdict follows p at alpha = 0.01: 0.0097 rejects, 0.44 does not.
        ChiSquareTest at;
        at.degrees_of_freedom = 3;
        at.p_value = 0.0097;
        QVERIFY(rejects(at));
        at.p_value = 0.44;
        QVERIFY(!rejects(at));
        QCOMPARE(kEmpiricalAlpha, 0.01);
    }

    // Rare tokens drawn once are no evidence: 1,000 ids at q = 1e-6 and one at
    // 0.999, 1,000 draws (0.001 expected of each rare id). The two rare ids
    // drawn are 31.6 standard errors out, but neither is tested alone: their
    // bin (1 expected, 2 seen) joins id 0's, the only token tested, with z =
    // (998 - 999) / sqrt(1000 x 0.999 x 0.001), about -1.
    void rareTokensAreNotTestedAlone() {
        Histogram h;
        h.ids.push_back(0);
        h.expected.push_back(0.999);
        h.counts.push_back(998);
        for (std::int32_t id = 1; id <= 1000; ++id) {
            h.ids.push_back(id);
            h.expected.push_back(1e-6);
            h.counts.push_back(id <= 2 ? 1 : 0);
        }
        h.draws = 1000;
        QVERIFY(largest_deviation(h, h.ids, h.expected).z > 31.0);
        const TokenDeviations d = token_deviations(h, h.ids, h.expected);
        QCOMPARE(d.tested, std::size_t{1});
        QCOMPARE(d.id, 0);
        QVERIFY(std::fabs(d.z + 1.0 / std::sqrt(0.999)) < 1e-9);
        QCOMPARE(d.p_holm, d.p);
        QVERIFY(d.p_holm > kEmpiricalAlpha);
        const ChiSquareTest test = chi_square_test(h, h.ids, h.expected);
        QCOMPARE(test.pooled_cells, std::size_t{1000});
        QVERIFY(test.pooled_merged);
        QCOMPARE(test.bins, std::size_t{1});
        QCOMPARE(test.degrees_of_freedom, std::size_t{0});
    }

    void pValueClosedForms() {
        // df = 2: Q(1, x/2) = exp(-x/2).
        for (const double x : {0.1, 1.0, 5.991464547107979, 40.0}) {
            QVERIFY(std::fabs(chi_square_p_value(x, 2) - std::exp(-x / 2)) < 1e-14);
        }
        // df = 1: p = erfc(sqrt(x / 2)); 3.841458820694124 is the 5% point.
        QVERIFY(std::fabs(chi_square_p_value(3.841458820694124, 1) - 0.05) < 1e-12);
        QCOMPARE(chi_square_p_value(2.0, 0), 1.0);
        QCOMPARE(chi_square_p_value(INFINITY, 3), 0.0);
    }

    void drawsAreTheRequestStream() {
        // The histogram's draws are the stream's consecutive draws: the same as
        // running the pipeline step after step on one generator.
        const auto& e = example_c();
        const Pipeline vllm = preset_pipeline("vllm");
        const auto result = sample_empirically(vllm, input_of(e, 11), 500, 2);
        Pcg32 rng = stream(11, kSampleLabel);
        rng.uniform_f64();
        rng.uniform_f64();
        std::map<std::int32_t, std::uint64_t> counts;
        std::int32_t first = -1;
        for (int i = 0; i < 500; ++i) {
            const auto t = run_pipeline(vllm, input_of(e, 11), rng, 11, 0);
            if (first < 0) first = t.trace.token;
            ++counts[t.trace.token];
        }
        QCOMPARE(first, result.trace.trace.token);
        for (std::size_t i = 0; i < result.histogram.ids.size(); ++i) {
            QCOMPARE(result.histogram.counts[i], counts[result.histogram.ids[i]]);
        }
        QCOMPARE(result.histogram.draws, std::uint64_t{500});
    }

    void chiSquarePassesForTheRightQ() {
        const auto& e = example_c();
        for (const auto& name : {"vllm", "hf", "sglang", "llamacpp", "flashinfer-joint"}) {
            for (const std::uint64_t seed : {1U, 2U, 3U}) {
                const auto result = sample_empirically(preset_pipeline(name), input_of(e, seed), 200000);
                QVERIFY2(result.test.p_value > 1e-3, name);
                QVERIFY(std::fabs(result.deviation.z) < 4.0);
                QCOMPARE(result.tokens.tested, result.histogram.ids.size());
                QVERIFY(result.tokens.p_holm > kEmpiricalAlpha);
                QCOMPARE(result.test.impossible_draws, std::uint64_t{0});
            }
        }
    }

    void chiSquareFailsForAWrongQ() {
        // vLLM keeps {0, 1} on example C; HF's q also gives token 2 mass 2/9.
        const auto& e = example_c();
        const auto vllm = sample_empirically(preset_pipeline("vllm"), input_of(e, 5), 100000);
        const auto hf = trace_pipeline_once(preset_pipeline("hf"), input_of(e, 5));
        const auto test = chi_square_test(vllm.histogram, hf.trace.final_kept(), hf.trace.final_probs());
        QVERIFY(test.p_value < 1e-12);
        QCOMPARE(largest_deviation(vllm.histogram, hf.trace.final_kept(), hf.trace.final_probs()).id, 2);
        // The other way round: HF's draws of token 2 are impossible under vLLM's q.
        const auto hf_draws = sample_empirically(preset_pipeline("hf"), input_of(e, 5), 10000);
        const auto reverse = chi_square_test(hf_draws.histogram, vllm.trace.trace.final_kept(),
                                             vllm.trace.trace.final_probs());
        QVERIFY(reverse.impossible_draws > 0);
        QCOMPARE(reverse.p_value, 0.0);
        QVERIFY(std::isinf(reverse.statistic));
        // A q off by 1% in one id is found at 10^6 draws.
        const auto big = sample_empirically(preset_pipeline("vllm"), input_of(e, 9), 1000000);
        Values nudged = big.histogram.expected;
        nudged[0] += 0.01;
        nudged[1] -= 0.01;
        QVERIFY(chi_square_test(big.histogram, big.histogram.ids, nudged).p_value < 1e-6);
        QVERIFY(chi_square_test(big.histogram, big.histogram.ids, big.histogram.expected).p_value > 1e-3);
    }

    void smallExpectedCountsArePooled() {
        // Ten ids with q ~ 1e-4 at 1000 draws: expected 0.1 each, pooled into one bin.
        std::vector<double> logits{0, 0};
        for (int i = 0; i < 10; ++i) logits.push_back(std::log(2e-4));
        SamplingParams params;
        params.seed = 4;
        const auto result = sample_empirically(preset_pipeline("spec"), PipelineInput{logits, params, {}, {}}, 1000);
        QVERIFY(result.test.bins <= 3);
        QCOMPARE(result.test.degrees_of_freedom, result.test.bins - 1);
        QVERIFY(result.test.p_value > 1e-4);
    }

    void greedyDrawsOneToken() {
        SamplingParams params;
        params.temperature = 0.0;
        params.seed = 1;
        const std::vector<double> logits{1, 3, 2};
        const auto result = sample_empirically(preset_pipeline("spec"), PipelineInput{logits, params, {}, {}}, 1000);
        QCOMPARE(result.histogram.ids, (IdList{1}));
        QCOMPARE(result.histogram.counts, (std::vector<std::uint64_t>{1000}));
        QCOMPARE(result.test.p_value, 1.0);
        QCOMPARE(result.test.degrees_of_freedom, std::size_t{0});
    }

    void cancelAndProgress() {
        const auto& e = example_c();
        std::atomic<bool> cancel{true};
        std::uint64_t last_progress = 0;
        const auto result = sample_empirically(
            preset_pipeline("vllm"), input_of(e, 1), 1000000, 0, [&](std::uint64_t done) { last_progress = done; },
            &cancel);
        QVERIFY(result.histogram.cancelled);
        QCOMPARE(result.histogram.draws, std::uint64_t{65536});
        QCOMPARE(last_progress, std::uint64_t{65536});
    }

    void badDrawCounts() {
        const auto& e = example_c();
        QVERIFY_THROWS_EXCEPTION(InputError, sample_empirically(preset_pipeline("vllm"), input_of(e, 1), 0));
        QVERIFY_THROWS_EXCEPTION(InputError,
                                 sample_empirically(preset_pipeline("vllm"), input_of(e, 1), kMaxDraws + 1));
    }
};

QTEST_APPLESS_MAIN(EmpiricalSamplingTest)
#include "test_empirical_sampling.moc"
