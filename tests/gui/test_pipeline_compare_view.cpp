// The side-by-side view (ui/pipelines/pipeline_compare_view.h), offscreen: driving its
// combo boxes and step list shows the kept sets, per-token probabilities, TV
// distance and same-token verdict of the engine's own diff.
#include <QtTest>

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QTableWidget>
#include <QRegularExpression>
#include <QTextDocumentFragment>

#include <qcustomplot.h>

#include "engine/base/input_error.h"
#include "engine/io/token_display.h"
#include "engine/pipelines/pipeline_diff.h"
#include "engine/pipelines/pipeline_examples.h"
#include "engine/pipelines/pipeline_presets.h"
#include "ui/pipelines/pipeline_compare_view.h"
#include "ui/pipelines/pipeline_editor.h"
#include "ui/pipelines/stage_strip.h"

using namespace samplescope;

namespace {

const PipelineExample& example(const std::string& key) {
    for (const auto& e : pipeline_examples()) {
        if (e.key == key) return e;
    }
    qFatal("no example");
}

PipelineDiff engine_diff(const Pipeline& a, const Pipeline& b, const PipelineExample& e) {
    return diff_pipelines(a, b, PipelineInput{e.logits, e.params, e.prompt_ids, e.output_ids});
}

// The view's table against the engine's diff, row by row.
void compare_table(const PipelineCompareView& view, const PipelineDiff& expected) {
    const auto* table = view.table();
    QCOMPARE(table->rowCount(), static_cast<int>(expected.tokens.size()));
    for (int row = 0; row < table->rowCount(); ++row) {
        const auto& token = expected.tokens[static_cast<std::size_t>(row)];
        QCOMPARE(QString(table->item(row, 0)->text()).remove(QLatin1Char(',')).toInt(), token.id);  // grouped: 1,234
        QCOMPARE(table->item(row, 2)->text(), QString::number(token.prob_a, 'g', 6));
        QCOMPARE(table->item(row, 3)->text(), QString::number(token.prob_b, 'g', 6));
    }
    QVERIFY(view.verdict()->text().contains(QString::number(expected.total_variation, 'g', 4)));
    QVERIFY(view.verdict()->toolTip().contains(QString::fromStdString(format_number(expected.total_variation))));
    QCOMPARE(view.verdict()->text().contains(QStringLiteral("Same token")), expected.same_token);
}

void select(QComboBox* combo, const QVariant& data) {
    const int index = combo->findData(data);
    QVERIFY(index >= 0);
    combo->setCurrentIndex(index);
}

}  // namespace

class PipelineCompareViewTest : public QObject {
    Q_OBJECT
private slots:
    void examplesShowTheEnginesDiff() {
        PipelineCompareView view;
        for (const auto& e : pipeline_examples()) {
            view.showExample(e);
            QVERIFY(view.diff().has_value());
            const auto expected = engine_diff(preset_pipeline(e.pipeline_a), preset_pipeline(e.pipeline_b), e);
            QCOMPARE(view.diff()->a.trace.final_kept(), expected.a.trace.final_kept());
            QCOMPARE(view.diff()->b.trace.final_kept(), expected.b.trace.final_kept());
            QCOMPARE(view.diff()->total_variation, expected.total_variation);
            compare_table(view, expected);
            for (int row = 0; row < view.table()->rowCount(); ++row) {  // one label rule, tok_<id> without a label
                const std::int32_t id = expected.tokens[static_cast<std::size_t>(row)].id;
                QCOMPARE(view.table()->item(row, 1)->text(), QString::fromStdString(token_display_label(e.labels, id)));
            }
        }
    }

    void presetComboDrivesTheDiff() {
        PipelineCompareView view;
        const auto& e = example("A");
        view.showExample(e);  // vllm vs sglang: {0,1} vs {0,1,2}; unlabelled, so tok_<id>
        QVERIFY(view.keptSummary()->text().contains(QStringLiteral("Only B: {tok_2}")));
        select(view.editorB()->presetCombo(), QStringLiteral("flashinfer-joint"));
        QCOMPARE(view.editorB()->pipeline().name, std::string("flashinfer-joint"));
        const auto expected = engine_diff(preset_pipeline("vllm"), preset_pipeline("flashinfer-joint"), e);
        QCOMPARE(view.diff()->b.trace.final_kept(), (IdList{0, 1, 2, 3}));
        QVERIFY(view.keptSummary()->text().contains(QStringLiteral("Only B: {tok_2, tok_3}")));
        compare_table(view, expected);
        // The strips show each pipeline's own order and flags.
        const auto boxes = view.stripA()->boxTexts();
        QVERIFY(boxes.join(QLatin1Char('|')).contains(QStringLiteral("tie at the boundary")));
    }

    void ruleCombosMakeACustomPipeline() {
        PipelineCompareView view;
        const auto& e = example("A");
        view.showExample(e);
        // B starts as sglang; its top-p rule switched to vLLM's makes the two agree.
        select(view.editorB()->ruleCombo(Stage::TopP), static_cast<int>(Rule::TopPAscendingCumsum));
        QCOMPARE(view.editorB()->pipeline().name, std::string("custom"));
        QCOMPARE(view.diff()->b.trace.final_kept(), (IdList{0, 1}));
        QCOMPARE(view.diff()->total_variation, 0.0);
        QVERIFY(view.diff()->same_token);
        QVERIFY(view.verdict()->text().contains(QStringLiteral("Same token")));
    }

    void dragOrderAndTicksMakeACustomPipeline() {
        PipelineCompareView view;
        const auto& e = example("order");  // spec vs llamacpp
        view.showExample(e);
        QCOMPARE(view.diff()->a.trace.final_kept(), (IdList{0, 1, 2, 3}));
        // Move A's temperature step (row 3 of the spec: rep, pf, greedy, temperature, ...) below top-p.
        auto* list = view.editorA()->stepList();
        QCOMPARE(list->item(3)->text(), QStringLiteral("Temperature"));
        QVERIFY(list->model()->moveRows(QModelIndex(), 3, 1, QModelIndex(), 6));
        QCOMPARE(view.editorA()->pipeline().name, std::string("custom"));
        QCOMPARE(step_list(view.editorA()->pipeline()),
                 std::string("repetition_penalty:context,presence_frequency:output,greedy:contract,top_k:contract,"
                             "top_p:contract,temperature:divide,min_p:prob"));
        const auto expected = engine_diff(view.editorA()->pipeline(), preset_pipeline("llamacpp"), e);
        QCOMPARE(view.diff()->a.trace.final_kept(), (IdList{0, 1, 2}));
        compare_table(view, expected);
        // Unticking top-p switches it off: all four are back.
        for (int row = 0; row < list->count(); ++row) {
            if (list->item(row)->text() == QStringLiteral("Top-p")) list->item(row)->setCheckState(Qt::Unchecked);
        }
        QCOMPARE(view.diff()->a.trace.final_kept(), (IdList{0, 1, 2, 3}));
        QVERIFY(view.keptSummary()->text().contains(QStringLiteral("ignores top_p")));
    }

    void jointBoxAndEngineDefaults() {
        PipelineCompareView view;
        const auto& e = example("B");
        view.showExample(e);  // vllm {0} vs sglang {0,1}
        QVERIFY(view.editorB()->jointBox(Stage::TopP)->isChecked());
        view.editorB()->jointBox(Stage::TopP)->setChecked(false);
        QCOMPARE(view.diff()->b.trace.final_kept(), (IdList{0}));  // sequential now

        QSignalSpy spy(&view, &PipelineCompareView::paramsChanged);
        QSignalSpy changed(view.editorA(), &PipelineEditor::pipelineChanged);
        view.editorA()->selectPreset(QStringLiteral("hf"));
        QCOMPARE(changed.count(), 1);
        auto* button = view.editorA()->findChild<QPushButton*>();
        QVERIFY(button);
        button->click();
        QCOMPARE(spy.count(), 1);
        QCOMPARE(view.params().top_k, std::int64_t{50});
        QCOMPARE(view.params().seed, e.params.seed);  // the seed is kept
    }

    // What the engines would refuse, where their float32 run differs, and each
    // engine's logprob modes, shown beside the kept sets.
    void engineRefusalsAndLogprobModes() {
        PipelineCompareView view;
        view.setPipelines(preset_pipeline("spec"), preset_pipeline("vllm"));
        SamplingParams params;
        params.presence_penalty = 3.0;
        params.seed = 5;
        view.setInput({1.0, 3.0, 2.0, 3.0, -1.0}, {}, params, {}, {1});
        QVERIFY(view.diff().has_value());
        QVERIFY(view.engineNotes()->isVisibleTo(&view));
        QVERIFY(view.engineNotes()->text().contains(QStringLiteral("vLLM would refuse this request: presence_penalty")));
        const auto* table = view.logprobTable();
        QStringList modes;
        for (int row = 0; row < table->rowCount(); ++row) modes << table->item(row, 1)->text();
        // A (spec): the contract's only; B (vLLM): the contract's and vLLM's four modes.
        QCOMPARE(modes, (QStringList{"contract", "contract", "raw_logprobs (default)", "raw_logits",
                                     "processed_logprobs", "processed_logits"}));
        const auto& b = view.diff()->b;
        QCOMPARE(table->item(2, 2)->text(), QString::number(b.engine_logprobs[0].value, 'g', 8));
        QVERIFY(!table->item(2, 3)->text().isEmpty());

        // Valid parameters: no notes line.
        params.presence_penalty = 0.5;
        view.setInput({1.0, 3.0, 2.0, 3.0, -1.0}, {}, params, {}, {1});
        QVERIFY(!view.engineNotes()->isVisibleTo(&view));
    }

    // The verdict leads the view (a laptop shows it without scrolling), the stage
    // boxes are never narrower than their longest word, and few bars carry their q.
    void verdictFirstBoxesWholeValuesLabelled() {
        PipelineCompareView view;
        view.resize(1240, 560);
        view.showExample(example("order"));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.layout()->itemAt(0)->widget(), static_cast<QWidget*>(view.verdict()));
        QVERIFY(view.verdict()->text().contains(QStringLiteral("total-variation distance")));
        for (auto* strip : view.findChildren<StageStrip*>()) {
            for (auto* box : strip->findChildren<QLabel*>()) {
                if (!box->wordWrap() || box->text().isEmpty() || !box->text().contains(QStringLiteral("<b>"))) continue;
                const QString title = QTextDocumentFragment::fromHtml(box->text())
                                          .toPlainText()
                                          .split(QRegularExpression(QStringLiteral("[\\n\\x{2028}]")))
                                          .front();
                QFont bold = box->font();
                bold.setBold(true);
                for (const QString& word : title.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
                    QVERIFY2(box->minimumWidth() >= QFontMetrics(bold).horizontalAdvance(word),
                             qPrintable(word + QStringLiteral(" in ") + QString::number(box->minimumWidth())));
                }
            }
        }
        int labels = 0;
        for (int i = 0; i < view.plot()->itemCount(); ++i) labels += view.plot()->item(i)->objectName() == QStringLiteral("value_label");
        QVERIFY(view.table()->rowCount() > 0 && view.table()->rowCount() <= 12);
        QCOMPARE(labels, 2 * view.table()->rowCount());  // one per bar, A and B
    }

    void refusedInputShowsOneLine() {
        PipelineCompareView view;
        view.setInput({1.0, std::nan("")}, {}, SamplingParams{}, {}, {});
        QVERIFY(!view.diff().has_value());
        QVERIFY(view.verdict()->text().contains(QStringLiteral("logit of id 1")));
        QCOMPARE(view.table()->rowCount(), 0);
    }

    void screenshot() {
        // Runs under CTest too: into a scratch folder unless SAMPLESCOPE_SCREENSHOT_DIR names one.
        QTemporaryDir scratch;
        const QByteArray env = qgetenv("SAMPLESCOPE_SCREENSHOT_DIR");
        const QString dir = env.isEmpty() ? scratch.path() : QString::fromLocal8Bit(env);
        PipelineCompareView view;
        view.resize(1200, 820);
        view.showExample(example("order"));
        view.show();
        const QString path = dir + QStringLiteral("/pipeline_compare_view.png");
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

QTEST_MAIN(PipelineCompareViewTest)
#include "test_pipeline_compare_view.moc"
