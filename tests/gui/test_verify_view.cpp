// The "Verify a sampler" tab, offscreen: exact draws pass off the GUI thread,
// one draw outside the support fails and is listed, the plot data marks the
// tail and the violation, cancel leaves no verdict.
#include <QtTest>

#include <QSignalSpy>

#include <cmath>

#include "engine/core/generator.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"
#include "ui/verify/verify_view.h"

#include <qcustomplot.h>

using namespace samplescope;

namespace {

LogitsMatrix row_of(std::size_t vocab) {
    LogitsMatrix m;
    m.rows = 1;
    m.cols = vocab;
    for (std::size_t i = 0; i < vocab; ++i) m.values.push_back(-1.5 * std::log1p(static_cast<double>(i)));
    return m;
}

// Exact draws of the spec pipeline's q for these logits and params.
std::vector<std::int64_t> exact_draws(const LogitsMatrix& m, const SamplingParams& params, std::size_t n) {
    const auto logits = m.row(0);
    const PipelineTrace t = trace_pipeline_once(preset_pipeline("spec"), PipelineInput{logits, params, {}, {}});
    const auto& kept = t.trace.final_kept();
    const auto& q = t.trace.final_probs();
    Pcg32 rng = stream(3, kSampleLabel);
    std::vector<std::int64_t> out;
    for (std::size_t d = 0; d < n; ++d) {
        double u = rng.uniform_f64();
        std::size_t i = 0;
        while (i + 1 < q.size() && u >= q[i]) u -= q[i++];
        out.push_back(kept[i]);
    }
    return out;
}

bool run_and_wait(VerifyView& view) {
    QSignalSpy done(&view, &VerifyView::verificationFinished);
    if (!view.runVerification()) return false;
    return done.wait(20000);
}

}  // namespace

class VerifyViewTest : public QObject {
    Q_OBJECT
private slots:
    void exactDrawsPassAndAViolationFails() {
        VerifyView view;
        view.resize(900, 600);
        view.show();
        // Before a run: a hint and no axes (empty scales would read as data).
        QVERIFY(!view.plot()->xAxis->visible() && !view.plot()->yAxis->visible());
        SamplingParams params;
        params.top_k = 600;
        params.seed = 1;
        const LogitsMatrix m = row_of(1000);
        auto draws = exact_draws(m, params, 20000);
        view.setParams(params);
        view.setInputs(m, {}, SampleRows{{draws}});
        QVERIFY(run_and_wait(view));
        QVERIFY(view.plot()->xAxis->visible() && view.plot()->yAxis->visible());
        QVERIFY(view.verification());
        QVERIFY(view.verification()->result.pass);
        QVERIFY2(view.verdictText().contains("pass"), qPrintable(view.verdictText()));
        QVERIFY(view.verdictText().contains("vouch"));
        QCOMPARE(view.plotData().kept, std::size_t{600});
        QVERIFY(view.plotData().tail_first < view.plotData().kept);  // the tail band
        QVERIFY(view.plot()->graphCount() == 2);
        QCOMPARE(view.plot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
        view.logScaleBox()->setChecked(false);
        QCOMPARE(view.plot()->yAxis->scaleType(), QCPAxis::stLinear);

        draws[10] = 900;  // outside top-k 600
        view.setInputs(m, {}, SampleRows{{draws}});
        QVERIFY(run_and_wait(view));
        QVERIFY(!view.verification()->result.pass);
        QVERIFY(view.verdictText().contains("outside the support"));
        QVERIFY(view.verdictText().contains("900"));
        QCOMPARE(view.plotData().violation.back(), true);
        QCOMPARE(view.plotData().ids.back(), std::int64_t{900});
    }

    void badInputShowsOneLine() {
        VerifyView view;
        QVERIFY(!view.runVerification());
        QVERIFY(!view.errorText().isEmpty());
        QVERIFY(!view.loadSamplesFile(QStringLiteral("/nonexistent/draws.txt")));
        QVERIFY(view.errorText().contains("draws.txt"));
        QVERIFY(!view.errorText().contains('\n'));
    }

    void cancelLeavesNoVerdict() {
        VerifyView view;
        SamplingParams params;
        params.seed = 1;
        LogitsMatrix m = row_of(50);
        // Many rows so the run is still going when cancel arrives.
        const auto one = m.values;
        SampleRows rows;
        const auto draws = exact_draws(m, params, 2000);
        for (int r = 0; r < 400; ++r) {
            if (r > 0) m.values.insert(m.values.end(), one.begin(), one.end());
            rows.rows.push_back(draws);
        }
        m.rows = 400;
        view.setParams(params);
        view.setInputs(m, {}, rows);
        QSignalSpy done(&view, &VerifyView::verificationFinished);
        QVERIFY(view.runVerification());
        view.cancel();
        QVERIFY(done.wait(20000));
        // Either cancelled (no verdict) or finished before the cancel was seen.
        if (!view.verification()) QVERIFY(view.verdictText().contains("Cancelled"));
        QVERIFY(!view.isRunning());
    }
};

QTEST_MAIN(VerifyViewTest)
#include "test_verify_view.moc"
