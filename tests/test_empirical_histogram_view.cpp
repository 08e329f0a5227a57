// The empirical-sampling view (ui/pipelines/empirical_histogram_view.h), offscreen: it
// draws off the GUI thread and shows the engine's counts and chi-square test.
#include <QtTest>

#include <QComboBox>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>

#include "engine/pipelines/pipeline_examples.h"
#include "engine/pipelines/pipeline_presets.h"
#include "ui/pipelines/empirical_histogram_view.h"

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
        QVERIFY(view.summary()->text().contains(QString::number(expected.test.p_value, 'g', 4)));
        QVERIFY(view.summary()->text().contains(QStringLiteral("consistent with the exact q")));
        QCOMPARE(view.progressBar()->value(), 1000);
        QVERIFY(view.drawButton()->isEnabled());
        QVERIFY(!view.cancelButton()->isEnabled());
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
