// The empirical-sampling view (ui/pipelines/empirical_histogram_view.h), offscreen: it
// draws off the GUI thread and shows the engine's counts and chi-square test,
// in words that follow p at the stated alpha, with the pooling on the plot.
#include <QtTest>

#include <cmath>

#include <QComboBox>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>

#include "engine/pipelines/pipeline_examples.h"
#include "engine/pipelines/pipeline_presets.h"
#include "ui/pipelines/empirical_histogram_view.h"

#include <qcustomplot.h>

using namespace samplescope;

namespace {

const PipelineExample& example_c() {
    for (const auto& e : pipeline_examples()) {
        if (e.key == "C") return e;
    }
    qFatal("no example");
}

void open(EmpiricalHistogramView& view, const PipelineExample& e) {
    view.setInput(e.logits, e.labels, e.params, e.prompt_ids, e.output_ids);
}

// The first seed from 1 whose sample of `draws` draws from the contract's q
// on `logits` rejects (or does not reject) the exact q at alpha, by the engine.
std::uint64_t seedWhere(bool rejected, const std::vector<double>& logits, std::uint64_t draws) {
    for (std::uint64_t seed = 1; seed < 5000; ++seed) {
        SamplingParams params;
        params.seed = seed;
        const auto r = sample_empirically(preset_pipeline("spec"), PipelineInput{logits, params, {}, {}}, draws);
        if (rejects(r.test) == rejected) return seed;
    }
    qFatal("no seed");
}

bool run(EmpiricalHistogramView& view) {
    QSignalSpy spy(&view, &EmpiricalHistogramView::finished);
    view.drawButton()->click();
    return spy.count() > 0 || spy.wait(60000);
}

}  // namespace

class EmpiricalHistogramViewTest : public QObject {
    Q_OBJECT
private slots:
    void showsTheEnginesSample() {
        EmpiricalHistogramView view;
        const auto& e = example_c();
        open(view, e);
        view.pipelineCombo()->setCurrentIndex(view.pipelineCombo()->findData(QStringLiteral("vllm")));
        view.setDraws(50000);
        QVERIFY(run(view));
        QVERIFY(view.result().has_value());
        const auto expected = sample_empirically(preset_pipeline("vllm"),
                                                 PipelineInput{e.logits, e.params, e.prompt_ids, e.output_ids}, 50000);
        QCOMPARE(view.result()->histogram.counts, expected.histogram.counts);
        QCOMPARE(view.result()->test.p_value, expected.test.p_value);
        QVERIFY(expected.test.p_value >= kEmpiricalAlpha);
        QVERIFY2(view.summary()->text().contains(QStringLiteral("p = %1 ").arg(expected.test.p_value, 0, 'g', 2)),
                 qPrintable(view.summary()->text()));
        QVERIFY(view.summary()->text().contains(QStringLiteral("no evidence against the exact q")));
        QCOMPARE(view.progressBar()->value(), 1000);
        QVERIFY(view.drawButton()->isEnabled());
        QVERIFY(!view.cancelButton()->isEnabled());
    }

    // Before any draw: what Draw will do, no empty axes, no empty legend.
    void opensWithAHintNotAnEmptyPlot() {
        EmpiricalHistogramView view;
        view.resize(900, 520);
        view.show();
        QVERIFY(!view.plot()->legend->visible());
        QVERIFY(!view.plot()->xAxis->visible());
        QCOMPARE(view.plot()->plottableCount(), 0);
        QVERIFY(view.poolingNote().isEmpty());
        const QString spec = QString::fromStdString(preset_pipeline("spec").title).toHtmlEscaped();
        QVERIFY2(view.summary()->text().contains(
                     QStringLiteral("Press Draw to sample 100,000 tokens from the final distribution of %1").arg(spec)),
                 qPrintable(view.summary()->text()));
        QVERIFY(view.summary()->text().contains(QStringLiteral("compare them with the exact q")));
        // The hint follows the draws and the pipeline chosen.
        view.setDraws(5000);
        QVERIFY(view.summary()->text().contains(QStringLiteral("sample 5,000 tokens")));
        view.pipelineCombo()->setCurrentIndex(view.pipelineCombo()->findData(QStringLiteral("vllm")));
        QVERIFY(view.summary()->text().contains(QString::fromStdString(preset_pipeline("vllm").title).toHtmlEscaped()));
        // After a result, a change of input withdraws it and the hint returns.
        open(view, example_c());
        QVERIFY(run(view));
        QVERIFY(view.plot()->legend->visible());
        QVERIFY(view.plot()->plottableCount() > 0);
        open(view, example_c());
        QVERIFY(!view.result().has_value());
        QVERIFY(!view.plot()->legend->visible());
        QCOMPARE(view.plot()->plottableCount(), 0);
        QVERIFY(view.summary()->text().contains(QStringLiteral("withdrawn")));
        QVERIFY(view.summary()->text().contains(QStringLiteral("withdrawn: press Draw to sample")));
    }

    // The words follow p at alpha = 0.01 both ways, on the four-token row
    // [3, 2, 1, 0] (every token expected more than 5 times at 2,000 draws).
    void verdictFollowsPAtAlpha() {
        const std::vector<double> logits{3, 2, 1, 0};
        for (const bool rejected : {true, false}) {
            const std::uint64_t seed = seedWhere(rejected, logits, 2000);
            EmpiricalHistogramView view;
            SamplingParams params;
            params.seed = seed;
            view.setInput(logits, {}, params, {}, {});
            view.setDraws(2000);
            QVERIFY(run(view));
            QVERIFY(view.result().has_value());
            const auto& r = *view.result();
            QCOMPARE(rejects(r.test), rejected);
            const QString text = view.summary()->text();
            const QString p = QStringLiteral("p = %1 ").arg(r.test.p_value, 0, 'g', 2);
            QVERIFY2(text.contains(p), qPrintable(text));
            if (rejected) {
                QVERIFY2(text.contains(QString::fromUtf8("&lt; \u03b1 = 0.01: the draws do not follow the exact q")),
                         qPrintable(text));
                QVERIFY(text.contains(QStringLiteral("A correct sampler lands here in 1% of runs")));
                QVERIFY(!text.contains(QStringLiteral("no evidence")));
            } else {
                QVERIFY2(text.contains(QString::fromUtf8("\u2265 \u03b1 = 0.01: no evidence against the exact q")),
                         qPrintable(text));
                QVERIFY(!text.contains(QStringLiteral("do not follow")));
            }
            // Token by token: the four ids, Holm-corrected, in words that follow the adjusted p.
            QCOMPARE(r.tokens.tested, std::size_t{4});
            QVERIFY(text.contains(r.tokens.p_holm < kEmpiricalAlpha
                                      ? QStringLiteral("deviates</b>")
                                      : QStringLiteral("No single token deviates after Holm's correction over the 4 ids "
                                                       "tested alone")));
            QVERIFY2(view.poolingNote().contains(QStringLiteral("Chi-square over 4 bins: every id with q > 0 is expected "
                                                                "at least 5 times")),
                     qPrintable(view.poolingNote()));
        }
    }

    // The pooling is explained on the plot: 998 rare ids (0.1 draws expected
    // each) share one bin; the two common ids have their own.
    void poolingIsExplained() {
        std::vector<double> logits{0.0, 0.0};
        for (int i = 0; i < 998; ++i) logits.push_back(std::log(1e-5));
        EmpiricalHistogramView view;
        SamplingParams params;
        params.seed = 3;
        view.setInput(logits, {}, params, {}, {});
        view.setDraws(10000);
        QVERIFY(run(view));
        const auto& t = view.result()->test;
        QCOMPARE(t.pooled_cells, std::size_t{998});
        QVERIFY(!t.pooled_merged);
        QCOMPARE(t.bins, std::size_t{3});
        const QString note = view.poolingNote();
        QVERIFY2(note.contains(QStringLiteral("Chi-square over 3 bins: 2 ids expected \u2265 5 draws have one bin each")),
                 qPrintable(note));
        QVERIFY2(note.contains(QStringLiteral("998 ids expected < 5 draws each pooled into one bin (%1 draws expected)")
                                   .arg(t.pooled_expected, 0, 'g', 4)),
                 qPrintable(note));
        QVERIFY(view.summary()->text().contains(QStringLiteral("the 2 ids tested alone")));
    }

    // A thousand ids that can be drawn: the plot shows the likeliest 40 by exact q (largest first) and one
    // "rest" bar for the other 960, whose observed and exact shares are those ids' sums; every bar's
    // share adds up to 1 in both series.
    void manyIdsShowTheLikeliestAndTheRest() {
        std::vector<double> logits;
        for (int i = 0; i < 1000; ++i) logits.push_back(-0.01 * i);
        EmpiricalHistogramView view;
        SamplingParams params;
        params.seed = 5;
        view.setInput(logits, {}, params, {}, {});
        view.setDraws(20000);
        QVERIFY(run(view));
        const auto& h = view.result()->histogram;
        QCOMPARE(h.ids.size(), std::size_t{1000});
        auto* bars = qobject_cast<QCPBars*>(view.plot()->plottable(0));
        QVERIFY(bars);
        const auto count = static_cast<std::size_t>(bars->data()->size());
        QCOMPARE(count, EmpiricalHistogramView::kMaxBars + 1);
        double observed = 0.0, expected_first = 0.0, rest_expected = 0.0;
        for (std::size_t i = 0; i < count; ++i) observed += (bars->data()->begin() + static_cast<int>(i))->value;
        QVERIFY(std::abs(observed - 1.0) < 1e-12);
        auto* exact = view.plot()->graph(0);
        expected_first = exact->data()->begin()->value;
        QCOMPARE(expected_first, h.expected[0]);  // id 0 has the largest logit
        for (std::size_t i = EmpiricalHistogramView::kMaxBars; i < h.ids.size(); ++i) rest_expected += h.expected[i];
        QCOMPARE((exact->data()->begin() + static_cast<int>(count - 1))->value, rest_expected);
        auto* ticker = dynamic_cast<QCPAxisTickerText*>(view.plot()->xAxis->ticker().data());
        QVERIFY(ticker);
        QCOMPARE(ticker->ticks().last(), QStringLiteral("rest"));
        QVERIFY2(view.poolingNote().contains(QStringLiteral("the 40 likeliest ids by exact q, then the other 960 together")),
                 qPrintable(view.poolingNote()));
    }

    void switchingPipelineChangesTheKeptSet() {
        EmpiricalHistogramView view;
        open(view, example_c());
        view.pipelineCombo()->setCurrentIndex(view.pipelineCombo()->findData(QStringLiteral("hf")));
        view.setDraws(20000);
        QVERIFY(run(view));
        QCOMPARE(view.result()->histogram.ids, (IdList{0, 1, 2}));
        view.pipelineCombo()->setCurrentIndex(view.pipelineCombo()->findData(QStringLiteral("vllm")));
        QVERIFY(run(view));
        QCOMPARE(view.result()->histogram.ids, (IdList{0, 1}));
    }

    void customPipelineIsDrawn() {
        EmpiricalHistogramView view;
        open(view, example_c());
        view.setPipeline(custom_pipeline("top_p,min_p"));  // HF's order without top-k
        QCOMPARE(view.pipelineCombo()->currentData().toString(), QStringLiteral("custom"));
        view.setDraws(5000);
        QVERIFY(run(view));
        QCOMPARE(view.result()->trace.pipeline, std::string("custom"));
        QCOMPARE(view.result()->histogram.ids, (IdList{0, 1, 2}));
    }

    void cancelStopsARun() {
        EmpiricalHistogramView view;
        open(view, example_c());
        view.setDraws(1000000);
        QSignalSpy spy(&view, &EmpiricalHistogramView::finished);
        view.drawButton()->click();
        QVERIFY(view.cancelButton()->isEnabled() || spy.count() > 0);
        view.cancel();
        QVERIFY(spy.count() > 0 || spy.wait(60000));
        // Either the flag was seen (fewer draws, marked cancelled) or the run had already ended.
        const auto& h = view.result()->histogram;
        QCOMPARE(h.cancelled, h.draws < 1000000);
        QCOMPARE(view.summary()->text().contains(QStringLiteral("Cancelled")), h.cancelled);
    }

    void withoutInputItSaysSo() {
        EmpiricalHistogramView view;
        QVERIFY(run(view));
        QVERIFY(!view.result().has_value());
        QVERIFY(view.summary()->text().contains(QStringLiteral("No row yet")));
    }

    void screenshot() {
        // Runs under CTest too: into a scratch folder unless SAMPLESCOPE_SCREENSHOT_DIR names one.
        QTemporaryDir scratch;
        const QByteArray env = qgetenv("SAMPLESCOPE_SCREENSHOT_DIR");
        const QString dir = env.isEmpty() ? scratch.path() : QString::fromLocal8Bit(env);
        EmpiricalHistogramView view;
        view.resize(900, 520);
        auto e = pipeline_examples().back();  // the order A / order B row, with labels
        e.params.seed = 1;
        open(view, e);
        view.setDraws(200000);
        QVERIFY(run(view));
        view.show();
        const QString path = dir + QStringLiteral("/empirical_histogram_view.png");
        QVERIFY(view.grab().save(path));
        // Drawn, not blank: a saved image of more than a handful of colours.
        const QImage image(path);
        QVERIFY(!image.isNull());
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7) {
            for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
        }
        QVERIFY2(colours.size() > 10, qPrintable(QString::number(colours.size())));
    }
};

QTEST_MAIN(EmpiricalHistogramViewTest)
#include "test_empirical_histogram_view.moc"
