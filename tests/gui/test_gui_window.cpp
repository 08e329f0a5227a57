// The real window, offscreen: parameters set through its controls, and what it
// shows (chosen token, kept counts, thresholds, the CDF's points) checked
// against the engine's own trace of the same input.
#include <QtTest>

#include <algorithm>

#include "tests/support/typing.h"

#include <QFile>
#include <QImage>
#include <QProcess>
#include <QScrollArea>
#include <QTemporaryDir>
#include <QTextDocumentFragment>

#include "engine/base/input_error.h"
#include "engine/pipelines/sampler.h"
#include "engine/core/synthetic_logits.h"
#include "engine/core/stage.h"
#include "ui/common/examples.h"
#include "ui/common/font_scale.h"
#include "ui/window/export.h"
#include "ui/window/help.h"
#include "ui/panels/result_bar.h"
#include "ui/window/main_window.h"

using namespace samplescope;
using namespace samplescope::ui;
using samplescope::test::typeAndEnter;

namespace {

QString stage_info_text(MainWindow& window, Stage stage) { return window.pipelineView()->plot(stage)->noteText(); }

double line_y(QCPAbstractItem* item) { return static_cast<QCPItemStraightLine*>(item)->point1->coords().y(); }

}  // namespace

class GuiWindowTest : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<MainWindow> window_;
    QTemporaryDir dir_;

    SampleTrace engine_trace() {
        const auto& session = window_->session();
        return trace_once(*session.logits(), session.params(), session.request().prompt_ids(), session.request().output_ids(),
                          session.request().draws_consumed());
    }
    void load(const Example& example) {
        QVERIFY(window_->loadExample(example));
        QVERIFY(window_->waitUntilDrawn());
    }

private slots:
    void init() {
        window_ = std::make_unique<MainWindow>(MainWindowOptions{false});
        window_->show();
        QVERIFY(window_->waitUntilDrawn());
    }
    void cleanup() {
        window_.reset();
        if (fontScale() != 1.0) setFontScale(1.0);  // a failed check must not leave the next test's fonts scaled
    }

    void opensOnAFullSizeExample() {
        QCOMPARE(window_->currentView()->trace->vocab_size, kRealisticVocab);
        QCOMPARE(window_->tokenTable()->model()->rowCount(), static_cast<int>(kRealisticVocab));
        for (const auto& stage : window_->currentView()->trace->stages) {
            if (stage.stage != Stage::Greedy) QVERIFY(stage.active);
        }
    }

    // Stages that are off get no cell (the default): the stages at work and the
    // draw fit a laptop's 1280 x 720 without scrolling; unticking shows them again.
    void offStagesCollapseAndTheDrawFits() {
        window_->resize(1280, 720);
        load(workedExample());  // top-k and top-p on; the penalties, greedy and min-p off
        auto* pipeline = window_->pipelineView();
        QVERIFY(pipeline->hideOffBox()->isChecked());
        QVERIFY(pipeline->plot(Stage::RepetitionPenalty)->isHidden());
        QVERIFY(pipeline->plot(Stage::MinP)->isHidden());
        QVERIFY(!pipeline->plot(Stage::TopK)->isHidden());
        QVERIFY2(pipeline->offNote()->text().contains(pipeline->plot(Stage::MinP)->stageTitle()), qPrintable(pipeline->offNote()->text()));
        QVERIFY(pipeline->offNote()->toolTip().contains(QStringLiteral("Min-p")));
        QCoreApplication::processEvents();
        auto* scroll = pipeline->findChild<QScrollArea*>();
        QVERIFY(scroll);
        for (QCustomPlot* plot : pipeline->shownPlots()) {
            const QPoint bottom = plot->mapTo(scroll->viewport(), QPoint(0, plot->height()));
            QVERIFY2(bottom.y() <= scroll->viewport()->height(),
                     qPrintable(QStringLiteral("%1 ends at %2 of %3").arg(plot->objectName()).arg(bottom.y()).arg(scroll->viewport()->height())));
        }
        pipeline->hideOffBox()->setChecked(false);
        QVERIFY(!pipeline->plot(Stage::MinP)->isHidden());
        QVERIFY(pipeline->plot(Stage::MinP)->titleText().contains(QStringLiteral("off")));  // drawn when shown again
        QVERIFY(pipeline->offNote()->text().startsWith(QStringLiteral("Off: ")));
    }

    // Every stage on at 1280 x 720: the legends give their row to the data
    // (their entries go to the tooltip); at 1600 x 1000 they are shown.
    void shortPlotsGiveTheLegendsRowToTheData() {
        window_->resize(1280, 720);
        QCoreApplication::processEvents();
        StagePlot* plot = window_->pipelineView()->plot(Stage::TopK);
        plot->replot();
        QVERIFY(plot->legendHidden());
        QVERIFY2(plot->toolTip().contains(QStringLiteral("Marks: kept")), qPrintable(plot->toolTip()));
        QVERIFY2(plot->axisRect()->rect().height() >= 60, qPrintable(QString::number(plot->axisRect()->rect().height())));
        window_->resize(1600, 1000);
        QCoreApplication::processEvents();
        plot->replot();
        QVERIFY(!plot->legendHidden());
        QVERIFY(plot->legend->visible());
        QVERIFY(!plot->toolTip().contains(QStringLiteral("Marks: ")));
    }

    // The answer line sits in a holder without a layout (its text changes at
    // every press without a relayout of the window): the holder still gives
    // it the height its text needs, before and after a new row.
    void answerLineHasTheHeightItsTextNeeds() {
        ResultBar* bar = window_->resultBar();
        window_->resize(1280, 720);
        QCoreApplication::processEvents();
        QVERIFY(bar->isVisible());
        QCOMPARE(bar->geometry(), bar->parentWidget()->rect());
        QCOMPARE(bar->height(), bar->heightForWidth(bar->width()));
        load(workedExample());
        QCoreApplication::processEvents();
        QCOMPARE(bar->height(), bar->heightForWidth(bar->width()));
        QVERIFY(bar->text().contains(QStringLiteral("logprob")));
    }

    void ctrlTabSwitchesTabs() {
        window_->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(window_.get()));
        auto* views = window_->views();
        const int start = views->currentIndex();
        QTest::keyClick(window_.get(), Qt::Key_Tab, Qt::ControlModifier);
        QCOMPARE(views->currentIndex(), (start + 1) % views->count());
        QTest::keyClick(window_.get(), Qt::Key_Backtab, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(views->currentIndex(), start);
        views->setCurrentIndex(views->count() - 1);
        QTest::keyClick(window_.get(), Qt::Key_Tab, Qt::ControlModifier);
        QCOMPARE(views->currentIndex(), 0);  // round
    }

    // View > Presentation font size and setFontScale: the window's font and the plots' text grow together;
    // a factor out of range changes nothing.
    void presentationFontScalesTextAndPlots() {
        const double app_points = QApplication::font().pointSizeF();
        StagePlot* plot = window_->pipelineView()->plot(Stage::TopK);
        const double tick_points = plot->xAxis->tickLabelFont().pointSizeF();
        auto* action = window_->findChild<QAction*>(QStringLiteral("action_presentation_font"));
        QVERIFY(action && !action->isChecked());
        action->trigger();
        QCOMPARE(fontScale(), kPresentationFontScale);
        QVERIFY(qAbs(QApplication::font().pointSizeF() - app_points * kPresentationFontScale) < 0.01);
        QVERIFY(qAbs(plot->xAxis->tickLabelFont().pointSizeF() - tick_points * kPresentationFontScale) < 0.01);
        QVERIFY_THROWS_EXCEPTION(InputError, window_->setFontScale(9.0));
        QCOMPARE(fontScale(), kPresentationFontScale);
        action->trigger();
        QCOMPARE(fontScale(), 1.0);
        QVERIFY(qAbs(QApplication::font().pointSizeF() - app_points) < 0.01);
        QVERIFY(qAbs(plot->xAxis->tickLabelFont().pointSizeF() - tick_points) < 0.01);
        // Ctrl++ and Ctrl+- step by a fifth.
        auto* larger = window_->findChild<QAction*>(QStringLiteral("action_larger_text"));
        QVERIFY(larger && larger->shortcuts().contains(QKeySequence(QKeySequence::ZoomIn)));
        larger->trigger();
        QCOMPARE(fontScale(), 1.2);
        window_->findChild<QAction*>(QStringLiteral("action_smaller_text"))->trigger();
        QCOMPARE(fontScale(), 1.0);
    }

    void glossaryNamesTheTermsTheViewsUse() {
        QStringList terms;
        for (const auto& entry : glossary()) terms << entry.term;
        for (const char* term : {"Logprob", "Kept set", "Rest", "TV distance", "u", "Candidates", "Near tie"}) {
            QVERIFY2(terms.contains(QString::fromLatin1(term)), term);
        }
        for (const auto& info : kStages) {
            QVERIFY(terms.contains(QString::fromUtf8(info.title.data(), static_cast<qsizetype>(info.title.size())) + QStringLiteral(" (stage)")));
        }
        QVERIFY(window_->findChild<QAction*>(QStringLiteral("action_glossary")));
        QVERIFY(glossaryHtml().contains(QStringLiteral("<dt><b>Logprob</b></dt>")));
    }

    // The window opens on a row with words and a history that reads as text; the answer
    // line names its logprob's mode and rounds it, the tip holds the exact value.
    void opensOnWordsAndTheAnswerSaysWhatItShows() {
        const auto& view = *window_->currentView();
        QCOMPARE(view.labels->label(realistic_id_of_rank(0, kRealisticVocab)), std::string("and"));
        QVERIFY(view.labels->label(view.trace->token).rfind("tok_", 0) != 0);  // the drawn token is a word
        const QString history = QTextDocumentFragment::fromHtml(
                                    window_->historyPanel()->findChild<QLabel*>(QStringLiteral("history_text"))->text())
                                    .toPlainText();
        QVERIFY2(history.contains(QStringLiteral("and the cat sat very very still")), qPrintable(history));
        const QString answer = window_->resultBar()->text();
        QVERIFY2(answer.contains(QStringLiteral("logprob %1 <i>(after penalties, before T)</i>").arg(QString::number(view.trace->logprob, 'g', 5))),
                 qPrintable(answer));
        QVERIFY(window_->resultBar()->termTip(QStringLiteral("logprob")).contains(QString::fromStdString(format_number(view.trace->logprob))));
        QVERIFY(window_->resultBar()->termTip(QStringLiteral("logprob")).contains(QStringLiteral("before</b> temperature")));
    }

    void workedExampleShowsTheContractsAnswer() {
        load(workedExample());
        const SampleTrace& shown = *window_->currentView()->trace;
        QCOMPARE(shown.token, 3);
        QVERIFY(std::fabs(shown.logprob - (-0.92487)) < 5e-6);
        QVERIFY(window_->resultBar()->text().contains(QStringLiteral("(id 3)")));
        QVERIFY(stage_info_text(*window_, Stage::TopK).contains(QStringLiteral("kept 3 of 5")));
        QVERIFY(stage_info_text(*window_, Stage::TopP).contains(QStringLiteral("kept 2 of 3")));
        // The draw plot: its points are the trace's cumulative sums, its line is u.
        DrawPlot* draw = window_->pipelineView()->drawPlot();
        QCPGraph* cdf = draw->graphNamed(QStringLiteral("cumulative"));
        QVERIFY(cdf);
        QCOMPARE(cdf->data()->size(), static_cast<int>(shown.cumulative.size()));
        for (int i = 0; i < cdf->data()->size(); ++i) QCOMPARE((cdf->data()->begin() + i)->value, shown.cumulative[static_cast<std::size_t>(i)]);
        QCOMPARE(line_y(draw->item(QStringLiteral("u"))), 0.80209496430867);
        auto* interval = static_cast<QCPItemRect*>(draw->item(QStringLiteral("chosen_interval")));
        QCOMPARE(interval->bottomRight->coords().y(), 0.5);
        QCOMPARE(interval->topLeft->coords().y(), 1.0);
    }

    void parametersSetThroughTheControlsMatchTheEngine() {
        load(workedExample());
        auto* panel = window_->parameterPanel();
        typeAndEnter(panel->control(Param::TopK)->entry(), QStringLiteral("4"));
        typeAndEnter(panel->control(Param::TopP)->entry(), QStringLiteral("0.95"));
        panel->control(Param::MinP)->slider()->setValue(20);  // 0.20
        panel->control(Param::Temperature)->slider()->setValue(150);  // 1.50
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(window_->session().params().top_k, std::int64_t{4});
        QCOMPARE(window_->session().params().top_p, 0.95);
        QCOMPARE(window_->session().params().min_p, 0.2);
        QCOMPARE(window_->session().params().temperature, 1.5);

        const SampleTrace expected = engine_trace();
        const SampleTrace& shown = *window_->currentView()->trace;
        QCOMPARE(shown.token, expected.token);
        QCOMPARE(shown.logprob, expected.logprob);
        QCOMPARE(shown.final_kept(), expected.final_kept());
        auto* pipeline = window_->pipelineView();
        for (Stage stage : {Stage::TopK, Stage::TopP, Stage::MinP}) {
            QVERIFY2(stage_info_text(*window_, stage).contains(QStringLiteral("kept %1 of").arg(expected.stage(stage).kept_count())),
                     qPrintable(stage_info_text(*window_, stage)));
        }
        // Thresholds drawn where the engine put them.
        QCOMPARE(line_y(pipeline->plot(Stage::TopK)->item(QStringLiteral("threshold"))), *expected.stage(Stage::TopK).kth_logit);
        QCOMPARE(line_y(pipeline->plot(Stage::TopP)->item(QStringLiteral("threshold"))), 0.95);
        QCOMPARE(line_y(pipeline->plot(Stage::MinP)->item(QStringLiteral("threshold"))), *expected.stage(Stage::MinP).prob_floor);
        QCPGraph* curve = pipeline->plot(Stage::TopP)->graphNamed(QStringLiteral("cumulative"));
        const auto& walk = *expected.stage(Stage::TopP).walk_mass;
        QCOMPARE(curve->data()->size(), static_cast<int>(walk.size()));
        for (int i = 0; i < curve->data()->size(); ++i) QCOMPARE((curve->data()->begin() + i)->value, walk[static_cast<std::size_t>(i)]);
        QCPGraph* crossing = pipeline->plot(Stage::TopP)->graphNamed(QStringLiteral("crossing"));
        QCOMPARE(crossing->data()->begin()->key, static_cast<double>(*expected.stage(Stage::TopP).crossing_rank));
        // Kept bars hold the q after the stage; the chosen bar is the token.
        QCPBars* chosen = pipeline->plot(Stage::Softmax)->bars(QStringLiteral("chosen"));
        QVERIFY(chosen);
        QCOMPARE(chosen->data()->begin()->value, expected.stage(Stage::Softmax).prob_of(expected.token));
    }

    void inactiveStagesSaySo() {
        load(workedExample());
        window_->pipelineView()->hideOffBox()->setChecked(false);  // off stages get a cell of their own
        StagePlot* temperature = window_->pipelineView()->plot(Stage::Temperature);
        QVERIFY(temperature->titleText().endsWith(QStringLiteral("off")));
        QVERIFY(temperature->item(QStringLiteral("inactive")));
        QCOMPARE(temperature->plottableCount(), 0);
    }

    void badTypedValuesAreRefusedInPlace() {
        load(workedExample());
        const SamplingParams before = window_->session().params();
        auto* panel = window_->parameterPanel();
        // The contract's words, quoting the value as typed.
        typeAndEnter(panel->control(Param::TopP)->entry(), QStringLiteral("1.5"));
        QCOMPARE(panel->control(Param::TopP)->error(), QStringLiteral("top_p must be in [0, 1], got \"1.5\""));
        typeAndEnter(panel->control(Param::Temperature)->entry(), QStringLiteral("-1"));
        QCOMPARE(panel->control(Param::Temperature)->error(),
                 QStringLiteral("temperature must be >= 0 and finite, got \"-1\""));
        typeAndEnter(panel->control(Param::RepetitionPenalty)->entry(), QStringLiteral("nan"));
        QCOMPARE(panel->control(Param::RepetitionPenalty)->error(),
                 QStringLiteral("repetition_penalty must be > 0 and finite, got \"nan\""));
        typeAndEnter(panel->control(Param::TopK)->entry(), QStringLiteral("2.5"));
        QCOMPARE(panel->control(Param::TopK)->error(), QStringLiteral("top_k must be an integer >= 0, got \"2.5\""));
        typeAndEnter(panel->control(Param::MinP)->entry(), QStringLiteral("abc"));
        QVERIFY(panel->control(Param::MinP)->error().contains(QStringLiteral("\"abc\"")));
        typeAndEnter(panel->seedEntry(), QStringLiteral("-3"));
        try {
            parse_seed("-3");
            QFAIL("parse_seed accepted -3");
        } catch (const InputError& error) {
            QCOMPARE(panel->seedError(), QString::fromUtf8(error.what()));
        }
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(window_->session().params() == before);
        // A valid value clears the message.
        typeAndEnter(panel->control(Param::TopP)->entry(), QStringLiteral("0.7"));
        QVERIFY(panel->control(Param::TopP)->error().isEmpty());
        QCOMPARE(window_->session().params().top_p, 0.7);
    }

    void badHistoryIsRefusedInPlace() {
        load(workedExample());
        typeAndEnter(window_->historyPanel()->promptEntry(), QStringLiteral("1, 9"));
        auto* error = window_->findChild<QLabel*>(QStringLiteral("error_history"));
        QVERIFY(error->isVisible());
        QCOMPARE(error->text(), QStringLiteral("prompt_ids has id 9 outside [0, 5)"));
        QVERIFY(window_->session().request().prompt_ids().empty());
    }

    void badFileShowsTheBannerAndKeepsTheLogits() {
        load(abcdExample());
        const auto before = *window_->session().logits();
        const QString missing = dir_.filePath(QStringLiteral("missing.txt"));
        QVERIFY(!window_->openLogitsFile(missing));
        QVERIFY(window_->errorBanner()->isVisible());
        QVERIFY(window_->errorBanner()->message().contains(QStringLiteral("missing.txt")));
        const QString bad = dir_.filePath(QStringLiteral("bad.txt"));
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("1.0, 2.0, oops\n");
        file.close();
        QVERIFY(!window_->openLogitsFile(bad));
        QVERIFY(window_->errorBanner()->message().contains(QStringLiteral("oops")));
        const QString nan_file = dir_.filePath(QStringLiteral("nan.txt"));
        QFile nan(nan_file);
        QVERIFY(nan.open(QIODevice::WriteOnly));
        nan.write("1.0\nnan\n");
        nan.close();
        QVERIFY(!window_->openLogitsFile(nan_file));
        QVERIFY(window_->errorBanner()->message().contains(QStringLiteral("id 1")));
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(*window_->session().logits(), before);
        QCOMPARE(window_->currentView()->trace->vocab_size, before.size());
        // A good file replaces the row and clears the banner.
        const QString good = dir_.filePath(QStringLiteral("good.txt"));
        QFile ok(good);
        QVERIFY(ok.open(QIODevice::WriteOnly));
        ok.write("x: 0.5\ny: 1.5\nz: -inf\n");
        ok.close();
        QVERIFY(window_->openLogitsFile(good));
        QVERIFY(window_->errorBanner()->isHidden());
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(window_->currentView()->trace->vocab_size, std::size_t{3});
        QCOMPARE(window_->currentView()->labels->label(1), std::string("y"));
    }

    void pasteAndTableEdits() {
        load(abcdExample());
        QVERIFY(!window_->pasteLogitsText(QStringLiteral("1, 2, inf"), QStringLiteral("clipboard")));
        QVERIFY(window_->errorBanner()->isVisible());
        QCOMPARE(window_->session().vocabSize(), std::size_t{4});
        QVERIFY(window_->pasteLogitsText(QStringLiteral("a\t1\nb\t2\nc\t3\n"), QStringLiteral("clipboard")));
        QCOMPARE(window_->session().vocabSize(), std::size_t{3});
        QCOMPARE(window_->session().labels()->label(2), std::string("c"));
        QVERIFY(window_->pasteLogitsText(QStringLiteral("1, 2, 3"), QStringLiteral("clipboard")));
        QCOMPARE(window_->session().vocabSize(), std::size_t{3});
        LogitsTableModel* model = window_->logitsEditor()->model();
        QSignalSpy refused(model, &LogitsTableModel::editRefused);
        QVERIFY(!model->setData(model->index(1, LogitsTableModel::Logit), QStringLiteral("nan")));
        QCOMPARE(refused.count(), 1);
        QVERIFY(refused.front().front().toString().contains(QStringLiteral("logit of id 1 is nan")));
        QVERIFY(model->setData(model->index(1, LogitsTableModel::Logit), QStringLiteral("7.5")));
        QCOMPARE((*window_->session().logits())[1], 7.5);
        window_->logitsEditor()->table()->setCurrentIndex(model->index(2, 0));
        window_->logitsEditor()->addRow();
        QCOMPARE(window_->session().vocabSize(), std::size_t{4});
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(window_->currentView()->trace->token, 1);  // 7.5 dominates; top_p 0.9 of the example keeps only id 1
    }

    void stepAndResetFollowTheDrawAccounting() {
        load(workedExample());
        QCOMPARE(window_->session().request().draws_consumed(), std::uint64_t{0});
        const std::int32_t previewed = window_->currentView()->trace->token;
        QTest::mouseClick(window_->historyPanel()->stepButton(), Qt::LeftButton);
        QCOMPARE(window_->session().request().draws_consumed(), std::uint64_t{1});
        QCOMPARE(window_->session().request().output_ids(), std::vector<std::int64_t>{previewed});
        QVERIFY(window_->historyPanel()->drawsLabel()->text().contains(QStringLiteral("<b>1</b>")));
        QVERIFY(window_->waitUntilDrawn());
        // The next preview is the stream's second draw, with the first token in the history.
        const SampleTrace expected = engine_trace();
        QCOMPARE(window_->currentView()->trace->u, expected.u);
        QCOMPARE(window_->currentView()->trace->draws_before, std::uint64_t{1});
        // Greedy takes no draw.
        window_->parameterPanel()->greedyBox()->setChecked(true);
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(window_->currentView()->trace->greedy);
        QVERIFY(window_->pipelineView()->drawPlot()->captionText().contains(QStringLiteral("No draw was taken")));
        QVERIFY(!window_->pipelineView()->drawPlot()->item(QStringLiteral("u")));
        window_->step();
        QCOMPARE(window_->session().request().draws_consumed(), std::uint64_t{1});
        QTest::mouseClick(window_->historyPanel()->resetButton(), Qt::LeftButton);
        QCOMPARE(window_->session().request().draws_consumed(), std::uint64_t{0});
        QVERIFY(window_->session().request().output_ids().empty());
        window_->parameterPanel()->greedyBox()->setChecked(false);
        QCOMPARE(window_->session().params().temperature, 1.0);
    }

    void tokenTableSortsSearchesAndSelects() {
        QVERIFY(window_->waitUntilDrawn());
        TokenTableModel* model = window_->tokenTable()->model();
        const SampleTrace& trace = *window_->currentView()->trace;
        const int final_column = TokenTableModel::FirstStage + static_cast<int>(tableStages().size()) - 1;
        QCOMPARE(TokenTableModel::stageOfColumn(final_column), Stage::Softmax);
        window_->tokenTable()->table()->sortByColumn(final_column, Qt::DescendingOrder);
        const auto& probs = trace.final_probs();
        const auto best = static_cast<std::size_t>(std::max_element(probs.begin(), probs.end()) - probs.begin());
        QCOMPARE(model->idAt(0), trace.final_kept()[best]);
        QCOMPARE(model->data(model->index(model->rowCount() - 1, final_column)).toString(), QStringLiteral("dropped"));
        window_->tokenTable()->search()->setText(QStringLiteral("tok_12825"));
        QVERIFY(model->rowCount() >= 1 && model->rowCount() < 20);
        window_->tokenTable()->search()->setText(QStringLiteral("64586"));
        QVERIFY(model->rowOf(64586) >= 0);
        window_->tokenTable()->search()->clear();
        // Selecting a row highlights the token in the plots.
        const std::int32_t id = trace.final_kept().front();
        window_->tokenTable()->table()->selectRow(model->rowOf(id));
        QCOMPARE(window_->selectedToken(), id);
        QVERIFY(window_->pipelineView()->plot(Stage::Softmax)->bars(QStringLiteral("selected")));
        QVERIFY(window_->pipelineView()->drawPlot()->item(QStringLiteral("selected")));
    }

    void exportsMatchTheCli() {
        load(workedExample());
        const QString json_path = dir_.filePath(QStringLiteral("trace.json"));
        exportTraceJson(*window_->currentView()->trace, json_path);
        QProcess cli;
        cli.start(QStringLiteral(SAMPLESCOPE_CLI), {QStringLiteral("trace"), QStringLiteral("--values"), QStringLiteral("1,3,2,3,-1"),
                                                    QStringLiteral("--top-k"), QStringLiteral("3"), QStringLiteral("--top-p"),
                                                    QStringLiteral("0.8"), QStringLiteral("--seed"), QStringLiteral("0")});
        QVERIFY(cli.waitForFinished(30000));
        QFile json(json_path);
        QVERIFY(json.open(QIODevice::ReadOnly));
        QCOMPARE(json.readAll(), cli.readAllStandardOutput());

        const QString csv_path = dir_.filePath(QStringLiteral("tokens.csv"));
        exportTableCsv(*window_->tokenTable()->model(), csv_path);
        QFile csv(csv_path);
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(csv.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 6);
        QVERIFY(lines[0].startsWith(QStringLiteral("id,label,raw logit")));
        QVERIFY(lines[4].startsWith(QStringLiteral("3,tok_3,3,")));
        QVERIFY(lines[4].endsWith(QStringLiteral(",0.5")));

        for (const char* suffix : {"png", "pdf"}) {
            const QString plot_path = dir_.filePath(QStringLiteral("top_p.") + QLatin1String(suffix));
            exportPlot(*window_->pipelineView()->plot(Stage::TopP), plot_path);
            QVERIFY(QFileInfo(plot_path).size() > 1000);
        }
        QVERIFY_EXCEPTION_THROWN(exportTraceJson(*window_->currentView()->trace, dir_.filePath(QStringLiteral("no/such/dir.json"))),
                                 InputError);
    }

    void screenshotIsNotBlank() {
        load(workedExample());
        const QString path = dir_.filePath(QStringLiteral("window.png"));
        window_->saveScreenshot(path);
        const QImage image(path);
        QVERIFY(!image.isNull());
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7) {
            for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
        }
        QVERIFY2(colours.size() > 50, qPrintable(QString::number(colours.size())));
    }

    void screenshotCommandUsesTheCliFlags() {
        const QString path = dir_.filePath(QStringLiteral("app.png"));
        QProcess app;
        app.start(QStringLiteral(SAMPLESCOPE_APP), {QStringLiteral("--screenshot"), path, QStringLiteral("--values"),
                                                    QStringLiteral("3,2,1,0"), QStringLiteral("--top-p"), QStringLiteral("0.9"),
                                                    QStringLiteral("--seed"), QStringLiteral("0")});
        QVERIFY(app.waitForFinished(60000));
        QCOMPARE(app.exitCode(), 0);
        const QImage image(path);
        QCOMPARE(image.size(), QSize(1600, 1000));
        QVERIFY(image.pixel(10, 10) != image.pixel(800, 300) || image.pixel(800, 300) != image.pixel(1200, 700));
        // Bad input: one line, exit 2, nothing written.
        QProcess bad;
        bad.start(QStringLiteral(SAMPLESCOPE_APP), {QStringLiteral("--screenshot"), dir_.filePath(QStringLiteral("bad.png")),
                                                    QStringLiteral("--values"), QStringLiteral("1,2"), QStringLiteral("--top-p"),
                                                    QStringLiteral("2")});
        QVERIFY(bad.waitForFinished(60000));
        QCOMPARE(bad.exitCode(), 2);
        QCOMPARE(QString::fromUtf8(bad.readAllStandardError()).trimmed(),
                 QStringLiteral("samplescope: ") + QString::fromStdString(*param_error(Param::TopP, 2.0)));
        QVERIFY(!QFile::exists(dir_.filePath(QStringLiteral("bad.png"))));
    }

    // What the CLI refuses only once it samples (a temperature so small that the
    // logits overflow), the screenshot refuses too: exit 2, the CLI's line, no PNG.
    void screenshotRefusesWhatTheCliRefuses() {
        const QStringList input{QStringLiteral("--values"), QStringLiteral("1000,2"), QStringLiteral("--temperature"),
                                QStringLiteral("1e-308"), QStringLiteral("--seed"), QStringLiteral("0")};
        QProcess cli;
        cli.start(QStringLiteral(SAMPLESCOPE_CLI), QStringList{QStringLiteral("trace")} + input);
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 2);
        const QString cli_line = QString::fromUtf8(cli.readAllStandardError()).trimmed();
        QVERIFY(cli_line.startsWith(QStringLiteral("samplescope-cli: ")));

        const QString png = dir_.filePath(QStringLiteral("refused.png"));
        QProcess app;
        app.start(QStringLiteral(SAMPLESCOPE_APP), QStringList{QStringLiteral("--screenshot"), png} + input);
        QVERIFY(app.waitForFinished(60000));
        QCOMPARE(app.exitCode(), 2);
        // Qt may say something of its own first (offscreen platform notes): the refusal is the last line.
        const QString app_line = QString::fromUtf8(app.readAllStandardError()).trimmed().split('\n').last();
        QCOMPARE(app_line.mid(QStringLiteral("samplescope: ").size()), cli_line.mid(QStringLiteral("samplescope-cli: ").size()));
        QVERIFY(!QFile::exists(png));

        // A count the CLI refuses as typed, the GUI refuses with the same words.
        QProcess wrapped;
        wrapped.start(QStringLiteral(SAMPLESCOPE_APP), {QStringLiteral("--screenshot"), png, QStringLiteral("--values"),
                                                        QStringLiteral("1,2"), QStringLiteral("--skip-draws"), QStringLiteral("-1")});
        QVERIFY(wrapped.waitForFinished(60000));
        QCOMPARE(wrapped.exitCode(), 2);
        QCOMPARE(QString::fromUtf8(wrapped.readAllStandardError()).trimmed(),
                 QStringLiteral("samplescope: --skip-draws must be an integer in [0, 18446744073709551615], got \"-1\""));
        QVERIFY(!QFile::exists(png));
        // The GUI's own index flag: an id past 2^31 was cut to 32 bits.
        QProcess select;
        select.start(QStringLiteral(SAMPLESCOPE_APP), {QStringLiteral("--screenshot"), png, QStringLiteral("--values"),
                                                       QStringLiteral("1,2"), QStringLiteral("--select"), QStringLiteral("4294967297")});
        QVERIFY(select.waitForFinished(60000));
        QCOMPARE(select.exitCode(), 2);
        QCOMPARE(QString::fromUtf8(select.readAllStandardError()).trimmed(),
                 QStringLiteral("samplescope: --select must be an integer in [0, 2147483647], got \"4294967297\""));
        QVERIFY(!QFile::exists(png));
    }

    // The window's own flags are checked like the CLI's: an empty
    // --screenshot (it opened the window and waited), flags an example would
    // have ignored, a --select past V, and a file that cannot be written
    // (libpng printed a line of its own). Exit 2, one line of ours, no PNG.
    void guiFlagsAreCheckedBeforeAnythingRuns() {
        const auto run = [](const QStringList& args) {
            QProcess app;
            app.start(QStringLiteral(SAMPLESCOPE_APP), args);
            const bool finished = app.waitForFinished(30000);
            if (!finished) {
                app.kill();
                app.waitForFinished();
            }
            // Qt may say something of its own first (offscreen platform notes).
            QStringList lines = QString::fromUtf8(app.readAllStandardError()).split('\n', Qt::SkipEmptyParts);
            lines.erase(std::remove_if(lines.begin(), lines.end(),
                                       [](const QString& l) { return !l.startsWith(QStringLiteral("samplescope: ")) &&
                                                                     !l.contains(QStringLiteral("libpng")); }),
                        lines.end());
            return std::make_pair(finished ? app.exitCode() : -1, lines);
        };
        const QString png = dir_.filePath(QStringLiteral("flags.png"));
        const std::vector<std::pair<QStringList, QString>> cases{
            {{"--screenshot", ""}, "--screenshot: the value is empty"},
            {{"--screenshot", png, "--sampler-example", "dry", "--max-memory", "lots"}, "max-memory"},
            {{"--screenshot", png, "--sampler-example", "dry", "--logit-bias", "0:1"}, "--sampler-example brings its own"},
            {{"--screenshot", png, "--pipeline-example", "B", "--dry-sequence-breakers", "1"},
             "--pipeline-example brings its own"},
            {{"--screenshot", png, "--max-memory", "lots"}, "max-memory"},
            {{"--screenshot", png, "--values", "1,2", "--row", "1"}, "--row, --tensor and --u2-as-bf16 read a logits file"},
            {{"--screenshot", png, "--values", "1,2,3,4,5", "--select", "99"}, "--select 99 is outside [0, 5) for V = 5"},
            {{"--screenshot", png, "--pipeline-example", "B", "--select", "99999"}, "--select 99999 is outside [0, "},
            {{"--screenshot", png, "--font-scale", "9"}, "--font-scale must be a number in [0.75, 2.5], got \"9\""},
            {{"--screenshot", png, "--font-scale", "nan"}, "--font-scale must be a number in [0.75, 2.5], got \"nan\""},
            {{"--screenshot", png, "--font-scale", "1.4x"}, "got \"1.4x\""},
        };
        for (const auto& [args, expected] : cases) {
            const auto [code, lines] = run(args);
            QVERIFY2(code == 2, qPrintable(args.join(' ') + " -> " + QString::number(code)));
            QVERIFY2(lines.size() == 1 && lines.front().contains(expected), qPrintable(args.join(' ') + ": " + lines.join(" | ")));
            QVERIFY(!QFile::exists(png));
        }
        // /dev/full opens but takes no bytes: our one line, none of libpng's.
        const auto [code, lines] = run({"--screenshot", "/dev/full", "--values", "1,2"});
        QCOMPARE(code, 2);
        QCOMPARE(lines.size(), qsizetype{1});
        QVERIFY2(lines.front().startsWith(QStringLiteral("samplescope: /dev/full: cannot write (")), qPrintable(lines.front()));
        // Valid neighbours still run.
        QCOMPARE(run({"--screenshot", png, "--values", "1,2,3,4,5", "--select", "4"}).first, 0);
        QVERIFY(QFile::exists(png));
        QVERIFY(QFile::remove(png));
        QCOMPARE(run({"--screenshot", png, "--values", "1,2,3,4,5", "--font-scale", "1.4"}).first, 0);
        QVERIFY(QFile::exists(png));
    }
};

QTEST_MAIN(GuiWindowTest)
#include "test_gui_window.moc"
