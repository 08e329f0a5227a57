// The window explains itself and forgives: undo and redo of every kind of
// change, a selection that never outlives its row, the selected token followed
// through the stages, the help text from the one stage and parameter tables,
// the history read as text through a vocabulary, and a window that fits a
// laptop's 1280 x 720 on every tab.
#include <QtTest>

#include <QRegularExpression>

#include "tests/support/typing.h"

#include <QAction>
#include <QScrollArea>
#include <QScrollBar>
#include <QTextBrowser>

#include "engine/base/input_error.h"
#include "ui/common/examples.h"
#include "ui/common/token_path.h"
#include "ui/window/help.h"
#include "ui/window/main_window.h"

using namespace samplescope;
using namespace samplescope::ui;
using samplescope::test::typeAndEnter;

namespace {

QAction* action(MainWindow& window, const char* name) { return window.findChild<QAction*>(QString::fromLatin1(name)); }

}  // namespace

class GuiExplainTest : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<MainWindow> window_;

    void load(const Example& example) {
        QVERIFY(window_->loadExample(example));
        QVERIFY(window_->waitUntilDrawn());
        window_->undo().recordNow();
    }
    void undo() {
        window_->undo().recordNow();
        action(*window_, "action_undo")->trigger();
        QVERIFY(window_->waitUntilDrawn());
    }
    void redo() {
        action(*window_, "action_redo")->trigger();
        QVERIFY(window_->waitUntilDrawn());
    }

private slots:
    void init() {
        window_ = std::make_unique<MainWindow>(MainWindowOptions{false});
        window_->show();
        QVERIFY(window_->waitUntilDrawn());
    }
    void cleanup() { window_.reset(); }

    void undoStartsEmpty() {
        QVERIFY(!window_->undo().stack()->canUndo());
        QVERIFY(!action(*window_, "action_undo")->isEnabled());
    }

    void undoAndRedoAParameterTyped() {
        load(workedExample());
        const double before = window_->session().params().temperature;
        auto* entry = window_->findChild<QLineEdit*>(QStringLiteral("entry_temperature"));
        QVERIFY(entry);
        typeAndEnter(entry, QStringLiteral("0.5"));
        QCOMPARE(window_->session().params().temperature, 0.5);
        window_->undo().recordNow();
        QVERIFY(action(*window_, "action_undo")->text().contains(QStringLiteral("temperature")));
        undo();
        QCOMPARE(window_->session().params().temperature, before);
        QCOMPARE(entry->text(), QStringLiteral("1"));
        QCOMPARE(window_->currentView()->trace->params.temperature, before);
        redo();
        QCOMPARE(window_->session().params().temperature, 0.5);
        QCOMPARE(window_->currentView()->trace->params.temperature, 0.5);
    }

    void aSliderDragIsOneCommand() {
        load(workedExample());
        const int commands = window_->undo().stack()->count();
        auto* slider = window_->findChild<QSlider*>(QStringLiteral("slider_top_p"));
        QVERIFY(slider);
        for (int step = 0; step < 5; ++step) {
            slider->setValue(slider->value() - 3);
            window_->undo().recordNow();
        }
        QCOMPARE(window_->undo().stack()->count(), commands + 1);
        undo();
        QCOMPARE(window_->session().params().top_p, workedExample().params.top_p);
    }

    void undoAndRedoTheHistoryAndAStep() {
        load(workedExample());
        window_->session().setHistory({1}, {2});
        window_->undo().recordNow();
        window_->step();
        QCOMPARE(window_->session().request().output_ids().size(), std::size_t{2});
        QCOMPARE(window_->session().request().draws_consumed(), std::uint64_t{1});
        window_->undo().recordNow();
        QVERIFY(action(*window_, "action_undo")->text().contains(QStringLiteral("step")));
        undo();
        QCOMPARE(window_->session().request().output_ids(), std::vector<std::int64_t>{2});
        QCOMPARE(window_->session().request().draws_consumed(), std::uint64_t{0});
        undo();
        QVERIFY(window_->session().request().output_ids().empty());
        redo();
        redo();
        QCOMPARE(window_->session().request().output_ids().size(), std::size_t{2});
        QCOMPARE(window_->session().request().draws_consumed(), std::uint64_t{1});
    }

    void undoAnExampleAndAPaste() {
        load(workedExample());
        QVERIFY(window_->pasteLogitsText(QStringLiteral("0.5, 0.25, 0"), QStringLiteral("clipboard")));
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(window_->session().vocabSize(), std::size_t{3});
        undo();
        QCOMPARE(window_->session().vocabSize(), std::size_t{5});
        QCOMPARE(window_->currentView()->trace->vocab_size, std::size_t{5});
        undo();  // the worked example itself
        QCOMPARE(window_->session().vocabSize(), kRealisticVocab);
        redo();
        QCOMPARE(window_->session().vocabSize(), std::size_t{5});
    }

    void undoEngineDefaultsListsWhatChanged() {
        load(workedExample());
        SamplingParams defaults = window_->session().params();
        defaults.temperature = 0.7;
        defaults.top_p = 0.95;
        window_->session().setParams(defaults);  // what "Load engine defaults" does
        window_->undo().recordNow();
        const QString text = action(*window_, "action_undo")->text();
        QVERIFY2(text.contains(QStringLiteral("temperature 1 -> 0.7")) && text.contains(QStringLiteral("top_p 0.8 -> 0.95")),
                 qPrintable(text));
        undo();
        QCOMPARE(window_->session().params().temperature, 1.0);
        QCOMPARE(window_->session().params().top_p, 0.8);
    }

    void aSelectionIsClearedByAnotherRowAndKeptByAParameter() {
        window_->selectToken(11);
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(window_->tokenPathBar()->isVisible());
        // Another parameter: the same row, so the selection stays and every stage ranks it anew.
        SamplingParams params = window_->session().params();
        params.top_k = 40;
        window_->session().setParams(params);
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(window_->selectedToken(), 11);
        const QString raw = window_->pipelineView()->plot(Stage::Widen)->noteText();
        QVERIFY2(!raw.contains(QStringLiteral("not a candidate")), qPrintable(raw));
        QVERIFY2(raw.contains(QStringLiteral("selected tok_11")), qPrintable(raw));
        // Another row: the selection named a token of the old one.
        load(abcdExample());
        QCOMPARE(window_->selectedToken(), -1);
        QVERIFY(!window_->tokenPathBar()->isVisible());
        for (const Stage stage : {Stage::Widen, Stage::TopK, Stage::TopP}) {
            QVERIFY(!window_->pipelineView()->plot(stage)->noteText().contains(QStringLiteral("selected")));
        }
    }

    void theSelectedTokenIsFollowedThroughTheStages() {
        load(workedExample());  // 1,3,2,3,-1 with top-k 3, top-p 0.8, seed 0: token 3
        window_->selectToken(2);
        const QString two = window_->tokenPathBar()->plainText();
        QVERIFY2(two.startsWith(QStringLiteral("Selected tok_2 (id 2): logit 2 -> Top-k: kept, rank 3 of 5")), qPrintable(two));
        QVERIFY2(two.contains(QStringLiteral("-> Top-p: dropped, rank 3 of 3")), qPrintable(two));
        QVERIFY(!two.contains(QStringLiteral("final q")));
        window_->selectToken(3);
        const QString three = window_->tokenPathBar()->plainText();
        QVERIFY2(three.contains(QStringLiteral("Top-k: kept, rank 2 of 5")) && three.contains(QStringLiteral("Top-p: kept, rank 2 of 3")),
                 qPrintable(three));
        QVERIFY2(three.endsWith(QStringLiteral("-> drawn")), qPrintable(three));
        window_->selectToken(-1);
        QVERIFY(!window_->tokenPathBar()->isVisible());
        // Ids and ranks in the one number format of every view: grouped.
        load(realisticExample());
        window_->selectToken(12825);
        const QString far = window_->tokenPathBar()->plainText();
        QVERIFY2(far.startsWith(QStringLiteral("Selected tok_12825 (id 12,825): ")) &&
                     far.contains(QRegularExpression(QStringLiteral("rank \\d{1,3},\\d{3} of 128,256"))),
                 qPrintable(far));
    }

    void aPathShowsPenaltiesAndTemperature() {
        // Token 0 is in the output: the repetition penalty divides its positive logit by 2; then T = 0.5.
        SamplingParams params;
        params.temperature = 0.5;
        params.repetition_penalty = 2.0;
        params.seed = 1;
        load(Example{"path", "", {4.0, 1.0, 0.0}, {}, params, {}, {0}});
        const auto steps = tokenPath(*window_->currentView()->trace, 0);
        const std::string text = tokenPathText(steps);
        QVERIFY2(text.find("logit 4 -> Repetition penalty 2 -> / T 0.5 = 4 (q ") == 0, text.c_str());
        QVERIFY(tokenPath(*window_->currentView()->trace, 3).empty());
    }

    void aValidEditClearsAnEarlierRefusal() {
        load(abcdExample());
        LogitsTableModel* model = window_->logitsEditor()->model();
        QVERIFY(!model->setData(model->index(1, LogitsTableModel::Logit), QStringLiteral("nan")));
        QVERIFY(window_->errorBanner()->isVisible());
        QVERIFY(model->setData(model->index(1, LogitsTableModel::Logit), QStringLiteral("7.5")));
        QVERIFY(!window_->errorBanner()->isVisible());
    }

    void noPlotIsCutAtTheRightEdge() {
        for (const QSize size : {QSize(1280, 720), QSize(1024, 700), QSize(1600, 1000)}) {
            window_->resize(size);
            QVERIFY(window_->waitUntilDrawn());
            QCoreApplication::processEvents();
            auto* scroll = window_->pipelineView()->findChild<QScrollArea*>();
            QVERIFY(scroll);
            QVERIFY2(scroll->horizontalScrollBar()->maximum() == 0,
                     qPrintable(QStringLiteral("%1x%2: the plots are %3 px wider than the view")
                                    .arg(size.width()).arg(size.height()).arg(scroll->horizontalScrollBar()->maximum())));
        }
    }

    void curvesAreMadeOnlyForPlotsThatShowTheWholeVocabulary() {
        // The realistic example: raw logits and top-k open on the whole vocabulary, temperature on bars.
        const auto curve = [this](Stage stage) { return window_->currentView()->plot(stage).curve.candidates; };
        QVERIFY(curve(Stage::Widen) > 0);
        QVERIFY(curve(Stage::TopK) > 0);
        QCOMPARE(curve(Stage::Temperature), std::size_t{0});
        QCOMPARE(window_->pipelineView()->plot(Stage::Temperature)->mode(), PlotMode::Bars);
        window_->pipelineView()->plot(Stage::Temperature)->setModeOverride(PlotMode::Vocabulary);
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(curve(Stage::Temperature), kRealisticVocab);
        QCOMPARE(window_->pipelineView()->plot(Stage::Temperature)->mode(), PlotMode::Vocabulary);
        window_->pipelineView()->viewBox()->setCurrentIndex(1);  // bars everywhere: no curve at all
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(curve(Stage::Widen), std::size_t{0});
        QCOMPARE(window_->pipelineView()->plot(Stage::Widen)->mode(), PlotMode::Bars);
    }

    void helpListsEveryStageAndParameter() {
        const QString html = howSamplingWorksHtml();
        for (const auto& info : kStages) QVERIFY(html.contains(QString::fromUtf8(info.title.data(), static_cast<qsizetype>(info.title.size()))));
        for (const auto& info : kParams) QVERIFY(html.contains(QString::fromUtf8(info.key.data(), static_cast<qsizetype>(info.key.size()))));
        QMenu* help = nullptr;
        for (QAction* menu : window_->menuBar()->actions()) {
            if (menu->text() == QStringLiteral("&Help")) help = menu->menu();
        }
        QVERIFY(help);
        help->actions().front()->trigger();
        auto* browser = window_->findChild<QTextBrowser*>(QStringLiteral("help_text"));
        QVERIFY(browser);
        QVERIFY(browser->toPlainText().contains(QStringLiteral("Top-p")));
        QVERIFY(browser->isVisible());
    }

    void theHistoryReadsAsTextWithAVocabulary() {
        load(workedExample());
        window_->session().setHistory({0, 1}, {2, 3});
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(!window_->historyPanel()->textLabel()->text().contains(QStringLiteral("Hello")));
        Vocabulary vocabulary;
        vocabulary.pieces = {"Hello", ",", " wor", "ld", "!"};
        vocabulary.defined.assign(5, 1);
        vocabulary.special.assign(5, 0);
        window_->setVocabulary(vocabulary);
        QVERIFY(window_->waitUntilDrawn());
        const QString html = window_->historyPanel()->textLabel()->text();
        QVERIFY2(html.contains(QStringLiteral("Hello,</span> wor<span style='background:#FFE08A'>ld</span>")), qPrintable(html));
        // A long history shows its end in the two lines the dock gives it, never a line cut in half.
        window_->session().setHistory({0, 1}, std::vector<std::int64_t>(150, 2));
        QVERIFY(window_->waitUntilDrawn());
        QLabel* label = window_->historyPanel()->textLabel();
        QVERIFY2(label->text().contains(QStringLiteral("'white-space: pre-wrap'>... ")), qPrintable(label->text()));
        const int lines = label->heightForWidth(label->contentsRect().width()) / label->fontMetrics().lineSpacing();
        QVERIFY2(lines <= 2, qPrintable(QString::number(lines)));
        QVERIFY(label->height() >= 2 * label->fontMetrics().lineSpacing());
    }

    void fitsALaptopOnEveryTabAndExample() {
        checkEveryTabFits(QStringLiteral("realistic"));
        // A 20-digit seed once widened the window past the screen.
        SamplingParams params = window_->session().params();
        params.seed = 18446744073709551615ULL;
        window_->session().setParams(params);
        QVERIFY(window_->waitUntilDrawn());
        checkEveryTabFits(QStringLiteral("20-digit seed"));
        for (const auto& make : {&workedExample, &abcdExample}) {
            load(make());
            checkEveryTabFits(QString::fromStdString(make().name));
        }
        for (const auto& example : pipeline_examples()) {
            QVERIFY(window_->loadPipelineExample(example));
            checkEveryTabFits(QString::fromStdString(example.key));
        }
        for (const auto& example : samplerExamples()) {
            QVERIFY(window_->loadSamplerExample(example));
            checkEveryTabFits(QString::fromStdString(example.key));
        }
    }

private:
    void checkEveryTabFits(const QString& example) {
        for (int tab = 0; tab < window_->views()->count(); ++tab) {
            window_->views()->setCurrentIndex(tab);
            window_->resize(1280, 720);
            QVERIFY(window_->waitUntilDrawn());
            QCoreApplication::processEvents();
            const QString name = example + QStringLiteral(", ") + window_->views()->tabText(tab);
            QVERIFY2(window_->minimumSizeHint().width() <= 1280,
                     qPrintable(name + QStringLiteral(": needs %1 px").arg(window_->minimumSizeHint().width())));
            QVERIFY2(window_->width() == 1280 && window_->height() == 720,
                     qPrintable(name + QStringLiteral(": %1x%2").arg(window_->width()).arg(window_->height())));
            // Nothing on the tab is scrolled off to the right (it may scroll down).
            if (auto* page = qobject_cast<QScrollArea*>(window_->views()->currentWidget())) {
                QCoreApplication::processEvents();
                QVERIFY2(page->widget()->width() <= page->viewport()->width(),
                         qPrintable(name + QStringLiteral(": %1 px wide in a %2 px page")
                                               .arg(page->widget()->width())
                                               .arg(page->viewport()->width())));
            }
        }
    }
};

QTEST_MAIN(GuiExplainTest)
#include "test_gui_explain.moc"
