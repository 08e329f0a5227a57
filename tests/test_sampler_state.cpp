// The two llama.cpp samplers with state beyond one row: XTC's coin (its own
// stream, so a histogram of many draws follows the mixture of the coin's two
// outcomes) and mirostat's mu (carried by a request from step to step, and by
// --mirostat-mu from one CLI call to the next).
#include <QtTest>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/core/generator.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"
#include "engine/stats/empirical_sampling.h"
#include "tests/support/cli_run.h"

using namespace samplescope;
using samplescope::testing::run_trace_cli;

namespace {

// q = 0.5, 0.3, 0.15, 0.05: with threshold 0.1 three ids qualify, so a firing
// coin removes ids 0 and 1 and leaves 2 and 3 at 0.75 and 0.25.
std::vector<double> xtc_row() { return {std::log(0.5), std::log(0.3), std::log(0.15), std::log(0.05)}; }

SamplingParams xtc_params(double probability) {
    SamplingParams params;
    params.xtc_probability = probability;
    params.xtc_threshold = 0.1;
    params.seed = 2024;
    return params;
}

}  // namespace

class TestSamplerState : public QObject {
    Q_OBJECT

private slots:
    void xtcTraceCarriesBothOutcomesAndTheMixture() {
        const std::vector<double> row = xtc_row();
        const PipelineTrace t = trace_pipeline_once(custom_pipeline("xtc"), PipelineInput{row, xtc_params(0.5), {}, {}}, 3);
        QVERIFY(t.xtc.has_value());
        const XtcMixture& m = *t.xtc;
        // The coin of the token drawn after 3 draws: the 3rd uniform of label 6's stream.
        QCOMPARE(m.coin, xtc_coin(2024, 3));
        QCOMPARE(m.fired, m.coin < 0.5);
        QCOMPARE(m.removed, (IdList{0, 1}));
        QCOMPARE(m.kept_without, (IdList{0, 1, 2, 3}));
        QCOMPARE(m.kept_with, (IdList{2, 3}));
        QCOMPARE(m.ids, (IdList{0, 1, 2, 3}));
        const Values expected{0.25, 0.15, 0.5 * 0.15 + 0.5 * 0.75, 0.5 * 0.05 + 0.5 * 0.25};
        for (std::size_t i = 0; i < expected.size(); ++i) QVERIFY(std::fabs(m.probs[i] - expected[i]) < 1e-12);
        QCOMPARE(t.exact_ids(), m.ids);
        // The step's own kept set is the outcome its coin chose.
        QCOMPARE(t.trace.final_kept(), m.fired ? m.kept_with : m.kept_without);
    }

    void xtcHistogramFitsTheMixtureAndNeitherOutcome() {
        const std::vector<double> row = xtc_row();
        const EmpiricalResult r =
            sample_empirically(custom_pipeline("xtc"), PipelineInput{row, xtc_params(0.5), {}, {}}, 100000);
        QVERIFY(r.trace.xtc.has_value());
        QCOMPARE(r.histogram.draws, std::uint64_t{100000});
        QVERIFY2(r.test.p_value > 1e-4, qPrintable(QString::number(r.test.p_value)));
        const XtcMixture& m = *r.trace.xtc;
        const double without = chi_square_test(r.histogram, m.kept_without, m.probs_without).p_value;
        const double with = chi_square_test(r.histogram, m.kept_with, m.probs_with).p_value;
        QVERIFY2(without < 1e-12, qPrintable(QString::number(without)));
        QVERIFY2(with < 1e-12, qPrintable(QString::number(with)));
        // About half the draws fired: ids 0 and 1 appear only without the exclusion.
        const double share01 = static_cast<double>(r.histogram.counts[0] + r.histogram.counts[1]) / 1e5;
        QVERIFY(std::fabs(share01 - 0.5 * 0.8) < 0.01);
    }

    void xtcWithoutAPossibleExclusionHasNoMixture() {
        // Only one id reaches 0.4: nothing to exclude, so no mixture.
        SamplingParams params = xtc_params(1.0);
        params.xtc_threshold = 0.4;
        const std::vector<double> row = xtc_row();
        const PipelineTrace t = trace_pipeline_once(custom_pipeline("xtc"), PipelineInput{row, params, {}, {}});
        QVERIFY(!t.xtc.has_value());
        QCOMPARE(t.trace.final_kept().size(), std::size_t{4});
    }

    void xtcCoinLeavesTheDrawAccountingAlone() {
        // With and without XTC the step draws the same u (label 4) and consumes one uniform.
        const std::vector<double> row = xtc_row();
        const PipelineTrace a = trace_pipeline_once(custom_pipeline("xtc"), PipelineInput{row, xtc_params(1.0), {}, {}}, 5);
        const PipelineTrace b = trace_pipeline_once(custom_pipeline("xtc"), PipelineInput{row, xtc_params(0.0), {}, {}}, 5);
        QCOMPARE(a.trace.u, b.trace.u);
        QCOMPARE(a.trace.draws_consumed, std::uint64_t{6});
        QCOMPARE(b.trace.draws_consumed, std::uint64_t{6});
    }

    // `trace --steps 20` with mirostat equals 20 single calls, each continuing
    // from the previous one's mu_after, output ids and draw count.
    void mirostatStepsEqualSingleStepsCarryingMu() {
        const QStringList common{"--pipeline", "llamacpp", "--values", "2,1.5,1,0.8,0.5,0.2,0,-0.5,-1,-2",
                                 "--mirostat", "2", "--mirostat-tau", "2", "--mirostat-eta", "0.3",
                                 "--top-k", "0", "--seed", "77"};
        const auto streamed = run_trace_cli(common + QStringList{"--steps", "20"});
        QCOMPARE(streamed.exit_code, 0);
        const auto all = nlohmann::json::parse(streamed.out.toStdString());
        QCOMPARE(all.size(), std::size_t{20});
        QStringList output;
        double mu = 4.0;  // 2 tau
        for (int i = 0; i < 20; ++i) {
            QStringList args = common;
            args << "--skip-draws" << QString::number(i) << "--mirostat-mu" << QString::number(mu, 'g', 17);
            if (!output.isEmpty()) args << "--output-ids" << output.join(',');
            const auto single = run_trace_cli(args);
            QCOMPARE(single.exit_code, 0);
            const auto one = nlohmann::json::parse(single.out.toStdString());
            QCOMPARE(one, all[static_cast<std::size_t>(i)]);
            QCOMPARE(one["mirostat"]["mu_before"].get<double>(), mu);
            mu = one["mirostat"]["mu_after"].get<double>();
            output << QString::number(one["token"].get<int>());
        }
        // mu moved: the surprise of the drawn tokens pulls it toward tau.
        QVERIFY(mu != 4.0);
    }

    void mirostatMuFlagRefusesNonNumbers() {
        for (const QString bad : {"x", "inf", "nan", "1e999"}) {
            const auto r = run_trace_cli({"--values", "1,2", "--pipeline", "llamacpp", "--mirostat", "2", "--mirostat-mu", bad});
            QCOMPARE(r.exit_code, 2);
            QCOMPARE(r.err_lines.size(), 1);
            QVERIFY2(r.err_lines[0].contains("mirostat_mu must be a finite number"), qPrintable(r.err_lines[0]));
        }
    }
};

QTEST_MAIN(TestSamplerState)
#include "test_sampler_state.moc"
