// The window with everything wired in, offscreen: the "Where engines differ"
// examples open Compare pipelines on the engine's own diff, vocabularies label
// every view (and a bad or mis-sized one is handled), every logits format
// opens from the File menu's path, and the views beside the plots follow the
// window's input only while they are on show.
#include <QtTest>

#include <QApplication>
#include <QClipboard>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QMenuBar>
#include <QProcess>
#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>

#include <qcustomplot.h>

#include "engine/stats/empirical_sampling.h"
#include "engine/io/logits_loader.h"
#include "engine/io/npy_writer.h"
#include "engine/pipelines/pipeline_diff.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/io/safetensors_writer.h"
#include "engine/io/vocabulary.h"
#include "tests/support/file_builders.h"
#include "ui/compare/compare_batch.h"
#include "ui/common/examples.h"
#include "ui/window/main_window.h"
#include "ui/pipelines/pipeline_editor.h"

using namespace samplescope;
using namespace samplescope::ui;

namespace {

QString qs(const std::string& text) { return QString::fromStdString(text); }

// The labels on a stage plot's x axis, in order.
QStringList tick_labels(QCustomPlot* plot) {
    const auto ticker = qSharedPointerDynamicCast<QCPAxisTickerText>(plot->xAxis->ticker());
    return ticker ? ticker->ticks().values() : QStringList();
}

bool on_show(MainWindow& window, QWidget* view) {
    return window.views()->currentWidget() == view || window.views()->currentWidget()->isAncestorOf(view);
}

}  // namespace

class GuiIntegrationTest : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<MainWindow> window_;
    QTemporaryDir dir_;

    QString write(const QString& name, const std::string& bytes) {
        const QString path = dir_.filePath(name);
        write_file_bytes(path.toStdString(), bytes);
        return path;
    }
    void load(const Example& example) {
        QVERIFY(window_->loadExample(example));
        QVERIFY(window_->waitUntilDrawn());
    }
    // Lets queued refreshes run.
    static void settle() {
        for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
    }
    // The token table's label for an id.
    QString table_label(std::int32_t id) {
        TokenTableModel* model = window_->tokenTable()->model();
        return model->data(model->index(model->rowOf(id), TokenTableModel::Label)).toString();
    }
    // Every place the window names tokens shows the vocabulary's readable label.
    void expect_labels_everywhere(const Vocabulary& vocabulary) {
        QVERIFY(window_->waitUntilDrawn());
        const SampleTrace& trace = *window_->currentView()->trace;
        const QString chosen = qs(vocabulary.label(static_cast<std::size_t>(trace.token)));
        QVERIFY(!chosen.isEmpty());
        QVERIFY2(window_->resultBar()->text().contains(chosen.toHtmlEscaped()), qPrintable(window_->resultBar()->text()));
        for (std::size_t id = 0; id < trace.vocab_size && id < vocabulary.size(); ++id) {
            QCOMPARE(table_label(static_cast<std::int32_t>(id)), qs(vocabulary.label(id)));
        }
        const QStringList ticks = tick_labels(window_->pipelineView()->plot(Stage::Softmax));
        QVERIFY2(ticks.contains(chosen), qPrintable(ticks.join(QLatin1Char('|'))));
    }

private slots:
    void init() {
        window_ = std::make_unique<MainWindow>(MainWindowOptions{false});
        window_->show();
        QVERIFY(window_->waitUntilDrawn());
    }
    void cleanup() { window_.reset(); }

    void viewsAreTabsOfTheWindow() {
        QStringList titles;
        for (int i = 0; i < window_->views()->count(); ++i) titles << window_->views()->tabText(i);
        QVERIFY(titles.contains(QStringLiteral("Compare")));
        QVERIFY(titles.contains(QStringLiteral("Histogram")));
        // Short titles, so a 1280-pixel screen shows every tab; the tooltip gives the full name.
        QVERIFY(window_->views()->tabToolTip(static_cast<int>(titles.indexOf(QStringLiteral("Compare")))).startsWith(QStringLiteral("Compare pipelines")));
        QVERIFY(window_->pipelineCompareView()->isAncestorOf(window_->pipelineCompareView()->table()));
        // The window keeps its size: a wide view scrolls inside its tab.
        QCOMPARE(window_->size(), QSize(1600, 1000));
    }

    void everyEnginesExampleOpensTheCompareTab() {
        auto* menu = window_->menuBar()->findChild<QMenu*>(QStringLiteral("engines_menu"));
        QVERIFY(menu);
        QCOMPARE(menu->title(), QStringLiteral("Where engines differ"));
        const auto actions = menu->actions();
        QCOMPARE(actions.size(), static_cast<qsizetype>(pipeline_examples().size()));
        for (std::size_t i = 0; i < pipeline_examples().size(); ++i) {
            const PipelineExample& e = pipeline_examples()[i];
            QCOMPARE(actions[static_cast<qsizetype>(i)]->text(), qs(e.title));
            window_->showView(window_->pipelineView());
            actions[static_cast<qsizetype>(i)]->trigger();
            QVERIFY(window_->waitUntilDrawn());
            settle();
            PipelineCompareView* view = window_->pipelineCompareView();
            QVERIFY2(on_show(*window_, view), e.key.c_str());
            // The window holds the example's row and parameters.
            QCOMPARE(*window_->session().logits(), e.logits);
            QVERIFY(window_->session().params() == e.params);
            QCOMPARE(window_->session().request().prompt_ids(), e.prompt_ids);
            QCOMPARE(window_->session().request().output_ids(), e.output_ids);
            // The two pipelines that disagree, and the kept sets of the engine's own diff.
            QCOMPARE(view->editorA()->pipeline().name, e.pipeline_a);
            QCOMPARE(view->editorB()->pipeline().name, e.pipeline_b);
            const PipelineDiff expected = diff_pipelines(preset_pipeline(e.pipeline_a), preset_pipeline(e.pipeline_b),
                                                         PipelineInput{e.logits, e.params, e.prompt_ids, e.output_ids});
            QVERIFY(view->diff().has_value());
            QCOMPARE(view->diff()->a.trace.final_kept(), expected.a.trace.final_kept());
            QCOMPARE(view->diff()->b.trace.final_kept(), expected.b.trace.final_kept());
            QCOMPARE(view->diff()->only_a, expected.only_a);
            QCOMPARE(view->diff()->only_b, expected.only_b);
            QCOMPARE(view->diff()->total_variation, expected.total_variation);
            // Each example is one where the pair parts: different kept sets or a different distribution.
            QVERIFY2(expected.total_variation > 0.0, e.key.c_str());
            QCOMPARE(view->table()->rowCount(), static_cast<int>(expected.tokens.size()));
        }
    }

    void tokenizerJsonLabelsEveryView() {
        load(workedExample());
        const QString path = write(QStringLiteral("tokenizer.json"),
                                   testing::tokenizer_json({"\xC4\xA0the", "\xC4\x8A", "cat", "\xC4\xA0sat", "on"}, {}, true));
        const Vocabulary vocabulary = load_vocabulary(path.toStdString());
        QVERIFY(vocabulary.label(0) != "\xC4\xA0the");  // the readable form, not the stored piece
        QVERIFY(window_->openVocabularyFile(path));
        QVERIFY(window_->errorBanner()->isHidden());
        expect_labels_everywhere(vocabulary);
        // The history names tokens too, and the label survives a new row of the same size.
        window_->step();
        const auto token = window_->session().request().output_ids().back();
        QVERIFY(window_->historyPanel()->findChildren<QLabel*>().size() > 0);
        QVERIFY(window_->pasteLogitsText(QStringLiteral("0, 0, 5, 0, 0"), QStringLiteral("clipboard")));
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(window_->currentView()->trace->token, 2);
        expect_labels_everywhere(vocabulary);
        QCOMPARE(qs(window_->session().labels()->label(token)), qs(vocabulary.label(static_cast<std::size_t>(token))));
        // Clearing it brings back ids.
        window_->clearVocabulary();
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(table_label(2), QStringLiteral("tok_2"));
    }

    void vocabTxtLabelsTheTableAndResult() {
        load(abcdExample());
        const QString path = write(QStringLiteral("vocab.txt"), " the\nnew\tline\nx\n\x01y\n");
        const Vocabulary vocabulary = load_vocabulary(path.toStdString());
        QCOMPARE(vocabulary.size(), std::size_t{4});
        QVERIFY(window_->openVocabularyFile(path));
        QVERIFY(window_->errorBanner()->isHidden());
        expect_labels_everywhere(vocabulary);
        QVERIFY(table_label(0) != QStringLiteral(" the"));  // the space is made visible
    }

    void vocabularyOfAnotherSizeWarnsAndLabelsWhatItHas() {
        load(workedExample());  // V = 5
        const QString small = write(QStringLiteral("small.txt"), "alpha\nbeta\ngamma\n");
        QVERIFY(window_->openVocabularyFile(small));
        const auto expected = token_labels(load_vocabulary(small.toStdString()), 5);
        QCOMPARE(expected.warnings.size(), std::size_t{1});
        QVERIFY(window_->errorBanner()->isVisible());
        QVERIFY(window_->errorBanner()->isWarning());
        QVERIFY(window_->errorBanner()->message().contains(qs(expected.warnings.front()).toHtmlEscaped()));
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(table_label(0), QStringLiteral("alpha"));
        QCOMPARE(table_label(2), QStringLiteral("gamma"));
        QCOMPARE(table_label(3), QStringLiteral("tok_3"));
        QCOMPARE(table_label(4), QStringLiteral("tok_4"));
        // A larger one: its extra tokens are not shown, and it says so.
        const QString large = write(QStringLiteral("large.txt"), "a\nb\nc\nd\ne\nf\ng\n");
        QVERIFY(window_->openVocabularyFile(large));
        QVERIFY(window_->errorBanner()->isWarning());
        QVERIFY(window_->errorBanner()->message().contains(QStringLiteral("are not shown")));
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(table_label(4), QStringLiteral("e"));
        // A row that fits it clears the warning.
        QVERIFY(window_->pasteLogitsText(QStringLiteral("1 2 3 4 5 6 7"), QStringLiteral("clipboard")));
        QVERIFY(window_->errorBanner()->isHidden());
    }

    void badVocabularyKeepsThePreviousLabels() {
        load(workedExample());
        const QString good = write(QStringLiteral("vocab.json"), testing::vocab_json({"a", "b", "c", "d", "e"}));
        QVERIFY(window_->openVocabularyFile(good));
        QVERIFY(window_->waitUntilDrawn());
        const auto before = window_->session().labels();
        const QString before_table = table_label(3);
        QCOMPARE(before_table, QStringLiteral("d"));
        const QString bad = write(QStringLiteral("broken.json"), "{\"model\": {\"vocab\": {\"a\": ");
        QVERIFY(!window_->openVocabularyFile(bad));
        QVERIFY(window_->errorBanner()->isVisible());
        QVERIFY(!window_->errorBanner()->isWarning());
        QVERIFY(window_->errorBanner()->message().contains(QStringLiteral("broken.json")));
        QVERIFY(window_->errorBanner()->message().contains(QStringLiteral("previous labels are unchanged")));
        QVERIFY(!window_->openVocabularyFile(dir_.filePath(QStringLiteral("missing.gguf"))));
        QVERIFY(window_->errorBanner()->message().contains(QStringLiteral("missing.gguf")));
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(window_->session().labels() == before);
        QCOMPARE(table_label(3), before_table);
    }

    void bfloat16NpyOpens() {
        const std::vector<double> values{1.0, -2.5, 0.15625, 3.0, -0.0078125, 2.75};  // exact in bfloat16
        NpyWriteOptions options;
        options.format = {FloatType::BF16, false};
        const QString path = write(QStringLiteral("row_bf16.npy"), encode_npy({6}, values, options));
        QVERIFY(window_->openLogitsFile(path));
        QCOMPARE(*window_->session().logits(), values);
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(window_->currentView()->trace->vocab_size, values.size());
        // A big-endian f16 batch opens on its first row.
        options.format = {FloatType::F16, true};
        const std::vector<double> batch{1, 2, 3, 4, 5, 6};
        QVERIFY(window_->openLogitsFile(write(QStringLiteral("batch_f16.npy"), encode_npy({2, 3}, batch, options))));
        QCOMPARE(*window_->session().logits(), (std::vector<double>{1, 2, 3}));
        QCOMPARE(window_->session().matrixRows(), std::size_t{2});
    }

    void multiTensorSafetensorsAsksForATensorAndFillsTheHistory() {
        const std::vector<double> a{1, 2, 3, 4};
        std::vector<double> b(15);
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 7) - 2.0;  // exact in bfloat16
        const QString path = write(QStringLiteral("dump.safetensors"),
                                   encode_safetensors({{"logits_a", {4}, a, FloatType::F32, {}},
                                                       {"logits_b", {1, 3, 5}, b, FloatType::BF16, {}},
                                                       {"prompt_ids", {2}, {}, FloatType::F32, {4, 1}},
                                                       {"output_ids", {1}, {}, FloatType::F32, {2}}}));
        QStringList offered;
        QString answer = QStringLiteral("logits_b");
        window_->setTensorChooser([&](const QString&, const QStringList& tensors) {
            offered = tensors;
            return answer;
        });
        QVERIFY(window_->openLogitsFile(path));
        QStringList expected_names;
        for (const auto& name : safetensors_float_tensors(path.toStdString())) expected_names << qs(name);
        QCOMPARE(offered, expected_names);
        QCOMPARE(offered, (QStringList{QStringLiteral("logits_a"), QStringLiteral("logits_b")}));
        LoadOptions pick_b;
        pick_b.tensor = "logits_b";
        const LogitsMatrix expected = load_logits_file(path.toStdString(), pick_b);
        QCOMPARE(*window_->session().logits(), expected.row(0));
        QCOMPARE(window_->session().request().prompt_ids(), expected.prompt_ids);
        QCOMPARE(window_->session().request().output_ids(), expected.output_ids);
        QCOMPARE(window_->historyPanel()->promptEntry()->text(), QStringLiteral("4, 1"));
        QCOMPARE(window_->historyPanel()->outputEntry()->text(), QStringLiteral("2"));
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(window_->currentView()->trace->vocab_size, std::size_t{5});

        // Cancelling the choice changes nothing.
        answer.clear();
        QVERIFY(!window_->openLogitsFile(path));
        QCOMPARE(*window_->session().logits(), expected.row(0));
        // logits_a has V = 4, so the file's prompt id 4 is out of range: refused whole.
        answer = QStringLiteral("logits_a");
        QVERIFY(!window_->openLogitsFile(path));
        QVERIFY(window_->errorBanner()->message().contains(QStringLiteral("prompt_ids has id 4 outside [0, 4)")));
        QVERIFY(window_->errorBanner()->message().contains(QStringLiteral("dump.safetensors")));
        QCOMPARE(*window_->session().logits(), expected.row(0));
        QCOMPARE(window_->session().request().prompt_ids(), expected.prompt_ids);
    }

    void tabSeparatedLinePastesAsNumbers() {
        load(abcdExample());
        QVERIFY(window_->pasteLogitsText(QStringLiteral("1\t2\t3"), QStringLiteral("clipboard")));
        QCOMPARE(*window_->session().logits(), (std::vector<double>{1, 2, 3}));
        QVERIFY(!window_->session().labels()->hasLabels());
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(table_label(0), QStringLiteral("tok_0"));
        // Through the clipboard and the editor's Paste button, as a user pastes a spreadsheet row.
        QApplication::clipboard()->setText(QStringLiteral("-1\t0.5\t2\t4\n"));
        QPushButton* paste = nullptr;
        for (auto* button : window_->logitsEditor()->findChildren<QPushButton*>()) {
            if (button->text() == QStringLiteral("Paste")) paste = button;
        }
        QVERIFY(paste);
        QTest::mouseClick(paste, Qt::LeftButton);
        QCOMPARE(*window_->session().logits(), (std::vector<double>{-1, 0.5, 2, 4}));
        QVERIFY(!window_->session().labels()->hasLabels());
        // A label that is not a number still makes a labelled line.
        QVERIFY(window_->pasteLogitsText(QStringLiteral("yes\t2\nno\t1\n"), QStringLiteral("clipboard")));
        QCOMPARE(window_->session().labels()->label(0), std::string("yes"));
    }

    void viewsFollowTheInputOnlyWhileOnShow() {
        load(workedExample());
        PipelineCompareView* compare = window_->pipelineCompareView();
        EmpiricalHistogramView* histogram = window_->histogramView();
        // Never shown: never computed.
        QVERIFY(!compare->diff().has_value());
        window_->showView(compare);
        QVERIFY(compare->diff().has_value());
        QCOMPARE(compare->diff()->a.trace.final_kept(), (IdList{1, 3}));  // spec on the worked example
        // A change while the tab is on show reaches it.
        SamplingParams params = window_->session().params();
        params.top_p = 1.0;
        window_->session().setParams(params);
        settle();
        QCOMPARE(compare->params().top_p, 1.0);
        QCOMPARE(compare->diff()->a.trace.final_kept(), (IdList{1, 2, 3}));
        // Hidden, it waits; shown again, it catches up.
        window_->showView(window_->pipelineView());
        params.top_k = 0;
        window_->session().setParams(params);
        settle();
        QCOMPARE(compare->params().top_k, std::int64_t{3});
        window_->showView(compare);
        QCOMPARE(compare->params().top_k, std::int64_t{0});
        QCOMPARE(compare->diff()->a.trace.final_kept(), (IdList{0, 1, 2, 3, 4}));
        // Loading an engine's defaults there sets the window's parameters.
        compare->editorA()->selectPreset(QStringLiteral("hf"));
        for (auto* button : compare->editorA()->findChildren<QPushButton*>()) button->click();
        QCOMPARE(window_->session().params().top_k, std::int64_t{50});
        // The histogram draws only on its button, from the window's input.
        window_->showView(histogram);
        QVERIFY(!histogram->result().has_value());
        histogram->setDraws(20000);
        QSignalSpy finished(histogram, &EmpiricalHistogramView::finished);
        QTest::mouseClick(histogram->drawButton(), Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        QVERIFY(histogram->result().has_value());
        const WindowInput input = window_->currentInput();
        const EmpiricalResult expected = sample_empirically(
            preset_pipeline("spec"), PipelineInput{input.logits, input.params, input.prompt_ids, input.output_ids}, 20000);
        QCOMPARE(histogram->result()->histogram.counts, expected.histogram.counts);
        QCOMPARE(histogram->result()->test.p_value, expected.test.p_value);
        // A new input retires the old sample instead of showing it as the new one's.
        QVERIFY2(window_->pasteLogitsText(QStringLiteral("1, 2"), QStringLiteral("clipboard")),
                 qPrintable(window_->errorBanner()->message()));
        settle();
        QVERIFY(!histogram->result().has_value());
        QVERIFY(histogram->summary()->text().contains(QStringLiteral("press Draw")));
        // So does a change while a run is going: its sample is not shown as the new input's.
        QTest::mouseClick(histogram->drawButton(), Qt::LeftButton);
        QVERIFY(window_->pasteLogitsText(QStringLiteral("3, 1"), QStringLiteral("clipboard")));
        if (histogram->running()) QVERIFY(finished.wait(60000));
        settle();
        QVERIFY(!histogram->running());
        QVERIFY(!histogram->result().has_value());
        QVERIFY(histogram->summary()->text().contains(QStringLiteral("press Draw")));
        // A run on the current input shows it.
        QTest::mouseClick(histogram->drawButton(), Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        QCOMPARE(histogram->result()->histogram.ids, (IdList{0, 1}));
    }

    void fullSizeRowStaysCheapInTheCompareTab() {
        // Opens on V = 128,256; every id kept, so the diff spans the whole row.
        SamplingParams params = window_->session().params();
        params.top_k = 0;
        params.top_p = 1.0;
        params.min_p = 0.0;
        window_->session().setParams(params);
        QVERIFY(window_->waitUntilDrawn());
        QElapsedTimer timer;
        timer.start();
        window_->showView(window_->pipelineCompareView());
        const double show_ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        PipelineCompareView* compare = window_->pipelineCompareView();
        QVERIFY(compare->diff().has_value());
        QCOMPARE(compare->diff()->tokens.size(), kRealisticVocab);
        // The table and plot hold the most probable 200, not a widget item per id.
        QCOMPARE(compare->table()->rowCount(), 200);
        QVERIFY(compare->keptSummary()->text().contains(QStringLiteral("most probable")));
        QVERIFY(compare->keptSummary()->text().size() < 4000);
        qInfo("Compare pipelines at V = %zu, every id kept: %.1f ms to show", kRealisticVocab, show_ms);
        // A parameter change while on show costs one refresh (timed here with the
        // sampling worker idle, so the figure is the view's own).
        window_->showView(window_->pipelineView());
        params.temperature = 0.9;
        window_->session().setParams(params);
        QVERIFY(window_->waitUntilDrawn());
        timer.restart();
        window_->showView(compare);
        qInfo("... and %.1f ms to refresh after a parameter change", static_cast<double>(timer.nsecsElapsed()) / 1e6);
        QCOMPARE(compare->params().temperature, 0.9);
        // While on show, a change reaches it through the queued refresh.
        params.temperature = 0.7;
        window_->session().setParams(params);
        settle();
        QCOMPARE(compare->params().temperature, 0.7);
    }

    void batchRowOpensInTheStageView() {
        CompareView* compare = window_->batchCompareView();
        QVERIFY(compare != nullptr);
        window_->showView(compare);
        CompareBatch generated = generateCompareBatch(6, 50, batch::Workload::Mixed, 3);
        generated.requests[4].skip_draws = 2;
        compare->setBatch(std::move(generated));
        QVERIFY(compare->runComparison());
        QTRY_VERIFY_WITH_TIMEOUT(!compare->isRunning() && compare->comparison() != nullptr, 30000);
        QVERIFY(compare->backendStatement().contains(QStringLiteral("host twin")));
        const auto batch = compare->comparedBatch();
        compare->openRow(4);
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(on_show(*window_, window_->pipelineView()));
        QCOMPARE(*window_->session().logits(), batch->rowLogits(4));
        const SampleTrace& trace = *window_->currentView()->trace;
        QCOMPARE(trace.draws_before, batch->requests[4].skip_draws);
        // The stage view's token is the reference's token for that row.
        QCOMPARE(trace.token, compare->comparison()->rows[4].reference_token);
    }

    void appTakesVocabAndTheNewTabs() {
        const QString vocab = write(QStringLiteral("three.txt"), "x\ny\nz\n");
        const QString shot = dir_.filePath(QStringLiteral("vocab.png"));
        QProcess app;
        app.start(QStringLiteral(SAMPLESCOPE_APP), {QStringLiteral("--screenshot"), shot, QStringLiteral("--values"),
                                                    QStringLiteral("3,2,1,0"), QStringLiteral("--vocab"), vocab,
                                                    QStringLiteral("--seed"), QStringLiteral("0"), QStringLiteral("--tab"),
                                                    QStringLiteral("tokens")});
        QVERIFY(app.waitForFinished(60000));
        QCOMPARE(app.exitCode(), 0);
        const auto warning = token_labels(load_vocabulary(vocab.toStdString()), 4).warnings.front();
        QStringList own_lines;  // Qt's platform notes aside
        for (const QString& line : QString::fromUtf8(app.readAllStandardError()).split(QLatin1Char('\n'))) {
            if (line.startsWith(QStringLiteral("samplescope"))) own_lines << line;
        }
        QCOMPARE(own_lines, QStringList{QStringLiteral("samplescope: warning: ") + qs(warning)});
        QVERIFY(!QImage(shot).isNull());

        QProcess bad;
        bad.start(QStringLiteral(SAMPLESCOPE_APP), {QStringLiteral("--screenshot"), dir_.filePath(QStringLiteral("bad.png")),
                                                    QStringLiteral("--vocab"), dir_.filePath(QStringLiteral("none.json"))});
        QVERIFY(bad.waitForFinished(60000));
        QCOMPARE(bad.exitCode(), 2);
        const QString line = QString::fromUtf8(bad.readAllStandardError()).trimmed();
        QVERIFY2(line.startsWith(QStringLiteral("samplescope: ")) && line.contains(QStringLiteral("none.json")), qPrintable(line));
        QVERIFY(!line.contains(QLatin1Char('\n')));
        QVERIFY(!QFile::exists(dir_.filePath(QStringLiteral("bad.png"))));

        const QString compare = dir_.filePath(QStringLiteral("compare.png"));
        QProcess example;
        example.start(QStringLiteral(SAMPLESCOPE_APP), {QStringLiteral("--screenshot"), compare, QStringLiteral("--pipeline-example"),
                                                        QStringLiteral("B")});
        QVERIFY(example.waitForFinished(60000));
        QCOMPARE(example.exitCode(), 0);
        QCOMPARE(QImage(compare).size(), QSize(1600, 1000));

        const QString histogram = dir_.filePath(QStringLiteral("histogram.png"));
        QProcess draws;
        draws.start(QStringLiteral(SAMPLESCOPE_APP), {QStringLiteral("--screenshot"), histogram, QStringLiteral("--pipeline-example"),
                                                      QStringLiteral("order"), QStringLiteral("--histogram-draws"),
                                                      QStringLiteral("5000")});
        QVERIFY(draws.waitForFinished(60000));
        QCOMPARE(draws.exitCode(), 0);
        QCOMPARE(QImage(histogram).size(), QSize(1600, 1000));
    }
};

QTEST_MAIN(GuiIntegrationTest)
#include "test_gui_integration.moc"
