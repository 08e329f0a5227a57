// The Generate tab, driven offscreen through its real widgets on a small
// model built here (so Debian's model need not be installed): a prompt shows
// the model's row for it in the window's session, Step and Generate write
// what the engine's Generation writes, Undo puts the state back exactly, a
// word clicked in a plot branches, any node can be shown again, Regenerate
// rewrites the rest, a parameter redraws the same row, bad input keeps
// everything, a missing model says what to install, and the tab fits 1280 x 720.
#include <QtTest>

#include <QAction>
#include <QProcess>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>

#include "engine/generation/generation.h"
#include "engine/json/generation_json.h"
#include "engine/models/ngram_model.h"
#include "engine/pipelines/pipeline_presets.h"
#include "tests/support/ngram_builder.h"
#include "tests/support/typing.h"
#include "ui/stages/pipeline_view.h"
#include "ui/window/main_window.h"

using namespace samplescope;
using namespace samplescope::ui;
using samplescope::test::typeAndEnter;

namespace {

// The tiny model with a longer tail of words, so a step has several candidates
// and a text several branches: "</s> <s> a b c d" and then e..l.
testing::TinyNgram testModel() {
    testing::TinyNgram m = testing::tiny_trigram_model();
    for (char c = 'e'; c <= 'l'; ++c) {
        m.words.emplace_back(1, c);
        m.unigrams.push_back({-9500.0F - 400.0F * static_cast<float>(c - 'e'), -1000.0F});
    }
    return m;
}

QAction* action(MainWindow& window, const char* name) { return window.findChild<QAction*>(QString::fromLatin1(name)); }

bool sameState(const GenerationState& a, const GenerationState& b) {
    return a.generated == b.generated && a.draws == b.draws && a.mirostat_mu == b.mirostat_mu;
}

}  // namespace

class GenerateTabTest : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<MainWindow> window_;
    std::string model_path_;
    std::shared_ptr<const NgramModel> model_;
    QTemporaryDir dir_;

    GenerateView* tab() const { return window_->generateView(); }
    Session& session() const { return window_->session(); }

    void startText(const QString& prompt) {
        window_->showView(tab());
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(tab()->modelState(), GenerateView::ModelState::Ready);
        typeAndEnter(tab()->promptEntry(), prompt);
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(tab()->attached());
    }
    void press(QAbstractButton* button) {
        QVERIFY2(button->isEnabled(), qPrintable(button->text()));
        QTest::mouseClick(button, Qt::LeftButton);
        QVERIFY(window_->waitUntilDrawn());
    }
    void generate(int n) {
        tab()->countBox()->setValue(n);
        press(tab()->generateButton());
    }
    std::vector<std::int64_t> lineTokens() const {
        std::vector<std::int64_t> ids;
        for (const int node : tab()->tree().line()) ids.push_back(tab()->tree().node(node).token.id);
        return ids;
    }
    // The engine's own generation from the same start, with the window's parameters.
    Generation engine(const char* prompt, GenerationState state = {}) const {
        return Generation(model_, preset_pipeline("spec"), session().params(), model_->tokenize(prompt), {}, std::move(state));
    }
    // A pixel of the final distribution's plot where `id` is drawn, found through the plot's own hit test.
    QPoint pixelOf(StagePlot* plot, std::int32_t id) const {
        for (int y = 0; y < plot->height(); y += 3) {
            for (int x = 0; x < plot->width(); x += 2) {
                if (plot->idAt(QPointF(x, y)) == id) return {x, y};
            }
        }
        return {-1, -1};
    }
    std::string messageLine() const { return window_->errorBanner()->message().toStdString(); }

private slots:
    void initTestCase() {
        model_path_ = testing::write_temp_file(testing::write_ngram_trie(testModel()), "generate-tab.lm.bin");
        qputenv("SAMPLESCOPE_NGRAM_MODEL", QByteArray::fromStdString(model_path_));
        model_ = NgramModel::load(model_path_);
        QVERIFY(dir_.isValid());
    }
    void init() {
        window_ = std::make_unique<MainWindow>(MainWindowOptions{false});
        window_->resize(1600, 1000);
        window_->show();
        QVERIFY(window_->waitUntilDrawn());
    }
    void cleanup() { window_.reset(); }

    void isTheFirstTab() {
        QCOMPARE(window_->views()->tabText(0), QStringLiteral("Generate"));
        QCOMPARE(window_->views()->widget(0), static_cast<QWidget*>(tab()));
        // The window opens on the Pipeline tab (the app picks Generate itself when its model is there).
        QCOMPARE(window_->views()->currentWidget(), static_cast<QWidget*>(window_->pipelineView()));
    }

    void aPromptShowsTheModelsRowThroughEveryStage() {
        startText(QStringLiteral("a b"));
        QCOMPARE(session().vocabSize(), model_->vocab_size());
        QCOMPARE(session().request().prompt_ids(), (std::vector<std::int64_t>{2, 3}));
        QVERIFY(session().request().output_ids().empty());
        QCOMPARE(session().request().draws_consumed(), 0U);
        auto generation = engine("a b");
        QCOMPARE(*session().logits(), generation.next_row());
        QCOMPARE(session().labels()->label(3), std::string("b"));
        // The tab's own plots show the window's trace of that row; the Pipeline tab's wait until shown.
        QVERIFY(tab()->pipelineView()->isVisible());
        QCOMPARE(window_->currentView()->raw_logits, session().logits());
        QVERIFY(tab()->pipelineView()->plot(Stage::Softmax)->titleText().size() > 0);
        QVERIFY(tab()->stepLabel()->text().contains(QStringLiteral("next word")));
        QCOMPARE(tab()->textView()->pieces().size(), std::size_t{2});
        QVERIFY(tab()->textView()->nextText().startsWith(QStringLiteral("next: ")));
        window_->showView(window_->pipelineView());
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(window_->pipelineView()->plot(Stage::Softmax)->titleText(),
                 tab()->pipelineView()->plot(Stage::Softmax)->titleText());
    }

    void stepWritesTheTokenThePlotsShow() {
        startText(QStringLiteral("a"));
        const std::int32_t previewed = window_->currentView()->trace->token;
        press(tab()->stepButton());
        QCOMPARE(lineTokens(), (std::vector<std::int64_t>{previewed}));
        QCOMPARE(session().request().output_ids(), (std::vector<std::int64_t>{previewed}));
        QCOMPARE(session().request().draws_consumed(), 1U);
        QCOMPARE(tab()->cursor(), tab()->tree().lineEnd());
        // Sampling > Step (and the History dock's Step) write into the text while the tab's step is on show.
        window_->step();
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(lineTokens().size(), std::size_t{2});
        QCOMPARE(session().request().output_ids(), lineTokens());
    }

    void generateWritesWhatTheEngineWrites() {
        SamplingParams params = session().params();
        params.seed = 11;
        params.temperature = 1.3;
        session().setParams(params);
        startText(QStringLiteral("a"));
        generate(12);
        auto generation = engine("a");
        std::vector<std::int64_t> expected;
        for (int i = 0; i < 12 && !generation.ended(); ++i) expected.push_back(generation.step().token);
        QCOMPARE(lineTokens(), expected);
        QVERIFY(sameState(tab()->tree().state(tab()->cursor()), generation.state()));
        QCOMPARE(session().request().draws_consumed(), generation.request().draws_consumed());
        QCOMPARE(tab()->lineText().toStdString(), generation.text());
        // Each token's colour and hover come from its step's trace (token_standing).
        auto replay = engine("a");
        for (const int node : tab()->tree().line()) {
            const GenerationStep step = replay.step();
            const WrittenToken& token = tab()->tree().node(node).token;
            const TokenStanding standing = token_standing(step.trace);
            QCOMPARE(token.probability, standing.probability);
            QCOMPARE(token.rank, standing.rank);
            QCOMPARE(*token.logprob, step.trace.trace.logprob);
        }
        const int last = tab()->tree().line().back();
        const QString tip = tab()->textView()->tooltipAt(tab()->textView()->nodeRect(last).center());
        for (const char* part : {"q ", "rank ", "logprob ", "u = ", "kept", "temperature 1.3"}) {
            QVERIFY2(tip.contains(QLatin1String(part)), qPrintable(tip));
        }
    }

    void undoPutsTheStateBackExactly() {
        SamplingParams params = session().params();
        params.mirostat = 2;  // mirostat's mu is part of the state (the contract's pipeline leaves it at 2 tau)
        session().setParams(params);
        startText(QStringLiteral("a"));
        generate(3);
        const GenerationState before = tab()->tree().state(tab()->cursor());
        const Request request = session().request();
        const auto row = *session().logits();
        const std::size_t tokens = tab()->tree().tokenCount();
        press(tab()->stepButton());
        QCOMPARE(tab()->tree().tokenCount(), tokens + 1);
        press(tab()->undoButton());
        QCOMPARE(tab()->tree().tokenCount(), tokens);
        QVERIFY(sameState(tab()->tree().state(tab()->cursor()), before));
        QVERIFY(before.mirostat_mu.has_value());
        QCOMPARE(session().request().output_ids(), request.output_ids());
        QCOMPARE(session().request().prompt_ids(), request.prompt_ids());
        QCOMPARE(session().request().draws_consumed(), request.draws_consumed());
        QCOMPARE(*session().logits(), row);
        // The same step again draws the same token.
        const auto line = lineTokens();
        press(tab()->stepButton());
        press(tab()->undoButton());
        QCOMPARE(lineTokens(), line);
    }

    void aWordClickedInAPlotBranches() {
        startText(QStringLiteral("a"));
        const std::int32_t drawn = window_->currentView()->trace->token;
        // Any other word the final distribution draws as a bar.
        const auto& kept = window_->currentView()->trace->final_kept();
        std::int32_t other = -1;
        for (const auto id : kept) {
            if (id != drawn) other = id;
        }
        QVERIFY(other >= 0);
        StagePlot* plot = tab()->pipelineView()->plot(Stage::Softmax);
        const QPoint at = pixelOf(plot, other);
        QVERIFY2(at.x() >= 0, "the word has no bar in the final distribution's plot");
        QTest::mouseClick(plot, Qt::LeftButton, {}, at);
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(lineTokens(), (std::vector<std::int64_t>{other}));
        const WrittenToken& written = tab()->tree().node(tab()->tree().line().front()).token;
        QVERIFY(written.clicked);
        QCOMPARE(written.drawn, drawn);
        // Coloured by its own standing at that step, not the drawn word's; no logprob is made up for it.
        auto replay = engine("a");
        const TokenStanding standing = token_standing(replay.step().trace, other);
        QCOMPARE(written.probability, standing.probability);
        QCOMPARE(written.rank, standing.rank);
        QVERIFY(written.rank > 1);
        QVERIFY(!written.logprob);
        // The step's draw is spent: the text goes on from the clicked word with the next uniform.
        QCOMPARE(session().request().draws_consumed(), 1U);
        QCOMPARE(session().request().output_ids(), (std::vector<std::int64_t>{other}));
        // Back to the prompt's step and a Step: the drawn word, a second branch beside the clicked one.
        tab()->goToStart();
        QVERIFY(window_->waitUntilDrawn());
        press(tab()->stepButton());
        QCOMPARE(lineTokens(), (std::vector<std::int64_t>{drawn}));
        QCOMPARE(tab()->tree().node(GenerationTree::kRoot).children.size(), std::size_t{2});
        QTreeWidgetItem* root = tab()->treeView()->topLevelItem(0);
        QCOMPARE(root->childCount(), 2);
        // Clicking the other branch in the tree shows the step that wrote it, and the line goes through it.
        QTreeWidgetItem* clicked_branch = tab()->treeView()->itemFor(tab()->tree().node(GenerationTree::kRoot).children[0]);
        QVERIFY(clicked_branch);
        const QRect rect = tab()->treeView()->visualItemRect(clicked_branch);
        QTest::mouseClick(tab()->treeView()->viewport(), Qt::LeftButton, {}, rect.center());
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(lineTokens(), (std::vector<std::int64_t>{other}));
        QCOMPARE(tab()->cursor(), GenerationTree::kRoot);
        QCOMPARE(tab()->markedNode(), tab()->tree().node(GenerationTree::kRoot).children[0]);
        QVERIFY(session().request().output_ids().empty());
    }

    // A token selected elsewhere (the token table, the Pipeline tab's plots) is written with a button.
    void aSelectedTokenCanBeWritten() {
        startText(QStringLiteral("a"));
        QVERIFY(!tab()->writeSelectedButton()->isVisible());
        const std::int32_t drawn = window_->currentView()->trace->token;
        const std::int32_t other = drawn == 5 ? 4 : 5;  // "d" or "c"
        window_->selectToken(other);
        QVERIFY(tab()->writeSelectedButton()->isVisible());
        QCOMPARE(tab()->writeSelectedButton()->text(),
                 QStringLiteral("Write \u201c%1\u201d here").arg(QString::fromStdString(model_->token_text(other))));
        press(tab()->writeSelectedButton());
        QCOMPARE(lineTokens(), (std::vector<std::int64_t>{other}));
        QVERIFY(tab()->tree().node(tab()->tree().line().front()).token.clicked);
        QVERIFY(!tab()->writeSelectedButton()->isVisible());  // a new step: the selection belonged to the old row
    }

    void anyTokenCanBeShownAgain() {
        startText(QStringLiteral("a"));
        generate(5);
        const auto line = tab()->tree().line();
        QVERIFY(line.size() >= 3);
        const int second = line[1];
        QTest::mouseClick(tab()->textView(), Qt::LeftButton, {}, tab()->textView()->nodeRect(second).center());
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(tab()->cursor(), line[0]);
        QCOMPARE(tab()->markedNode(), second);
        QCOMPARE(tab()->tree().line(), line);  // the text stays
        QCOMPARE(session().request().output_ids(), tab()->tree().state(line[0]).generated);
        auto at_first = engine("a", tab()->tree().state(line[0]));
        QCOMPARE(*session().logits(), at_first.next_row());
        // With the same parameters the step on show draws the token it wrote.
        QCOMPARE(static_cast<std::int64_t>(window_->currentView()->trace->token), tab()->tree().node(second).token.id);
        QVERIFY(tab()->stepLabel()->text().contains(QStringLiteral("wrote")));
        // The next slot brings back the step after the last token.
        QTest::mouseClick(tab()->textView(), Qt::LeftButton, {}, tab()->textView()->nextRect().center());
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(tab()->cursor(), line.back());
        // Sampling > Reset request goes back to the prompt's step; the text stays.
        window_->resetRequest();
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(tab()->cursor(), GenerationTree::kRoot);
        QVERIFY(session().request().output_ids().empty());
        QCOMPARE(session().request().draws_consumed(), 0U);
        QCOMPARE(tab()->tree().line(), line);
    }

    void regenerateRewritesTheRestWithTheParametersNow() {
        SamplingParams params = session().params();
        params.seed = 5;
        session().setParams(params);
        startText(QStringLiteral("a"));
        generate(6);
        const auto old_line = lineTokens();
        const auto line = tab()->tree().line();
        QVERIFY(line.size() >= 3);
        tab()->showStepOf(line[1]);  // the step that wrote the second token
        QVERIFY(window_->waitUntilDrawn());
        params.temperature = 2.5;
        session().setParams(params);
        QVERIFY(window_->waitUntilDrawn());
        press(tab()->regenerateButton());
        auto expected = engine("a", tab()->tree().state(line[0]));
        std::vector<std::int64_t> rest;
        for (std::size_t i = 1; i < old_line.size() && !expected.ended(); ++i) rest.push_back(expected.step().token);
        const auto now = lineTokens();
        QCOMPARE(now.front(), old_line.front());
        QCOMPARE(std::vector<std::int64_t>(now.begin() + 1, now.end()), rest);
        QCOMPARE(tab()->cursor(), line[0]);  // the step on show stays
        if (now != old_line) QVERIFY(tab()->tree().node(line[0]).children.size() >= 2);  // the old rest is a branch
    }

    void aParameterRedrawsTheSameRow() {
        startText(QStringLiteral("a b"));
        generate(2);
        const auto row = session().logits();
        const auto output = session().request().output_ids();
        const auto before = window_->currentView();
        typeAndEnter(window_->parameterPanel()->control(Param::Temperature)->entry(), QStringLiteral("1.7"));
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(session().logits(), row);  // no model call: the session's row stays
        QCOMPARE(window_->currentView()->raw_logits, row);
        QVERIFY(window_->currentView() != before);
        QCOMPARE(window_->currentView()->trace->params.temperature, 1.7);
        QCOMPARE(session().request().output_ids(), output);
        QVERIFY(tab()->attached());
        // A new seed is the same step on the new seed's stream, where the text stands.
        const auto draws = session().request().draws_consumed();
        SamplingParams params = session().params();
        params.seed = *params.seed + 1;
        session().setParams(params);
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(tab()->attached());
        QCOMPARE(session().request().draws_consumed(), draws);
        QCOMPARE(session().request().seed(), *params.seed);
    }

    void badPromptsKeepTheText() {
        startText(QStringLiteral("a b"));
        generate(2);
        const QString text = tab()->lineText();
        const auto row = session().logits();
        const auto output = session().request().output_ids();
        for (const QString& bad : {QString(), QStringLiteral("   "), QStringLiteral("a\u0001b"), QStringLiteral("c\u007f")}) {
            tab()->start(bad);
            QVERIFY(window_->waitUntilDrawn());
            QVERIFY2(!window_->errorBanner()->isHidden(), qPrintable(bad));
            QVERIFY2(window_->errorBanner()->message().contains(QStringLiteral("prompt")), qPrintable(window_->errorBanner()->message()));
            QVERIFY(!window_->errorBanner()->message().contains(QLatin1Char('\n')));
            QCOMPARE(tab()->lineText(), text);
            QCOMPARE(session().logits(), row);
            QCOMPARE(session().request().output_ids(), output);
            QVERIFY(tab()->attached());
        }
        // Typed into the prompt box too.
        typeAndEnter(tab()->promptEntry(), QStringLiteral("  "));
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(tab()->lineText(), text);
        QVERIFY(window_->errorBanner()->message().contains(QStringLiteral("empty")));
    }

    void aCorruptModelKeepsTheOne() {
        startText(QStringLiteral("a b"));
        generate(2);
        const QString text = tab()->lineText();
        const auto model = tab()->model();
        std::string bytes = testing::write_ngram_trie(testModel());
        bytes.resize(bytes.size() / 2);
        const std::string truncated = testing::write_temp_file(bytes, "truncated.lm.bin");
        for (const std::string& path : {truncated, std::string("/nonexistent/model.lm.bin")}) {
            tab()->openModelFile(QString::fromStdString(path));
            QVERIFY(window_->waitUntilDrawn());
            QVERIFY(!window_->errorBanner()->isHidden());
            QVERIFY2(window_->errorBanner()->message().contains(QString::fromStdString(path)), qPrintable(window_->errorBanner()->message()));
            QCOMPARE(tab()->model(), model);
            QCOMPARE(tab()->lineText(), text);
            QVERIFY(tab()->attached());
        }
    }

    void anotherRowLeavesTheTextAndAClickBringsItBack() {
        startText(QStringLiteral("a b"));
        generate(2);
        QVERIFY(window_->loadExample(workedExample()));
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(!tab()->attached());
        QVERIFY(tab()->placeholder()->isVisible());
        QVERIFY(tab()->placeholder()->text().contains(QStringLiteral("now shows")));
        QVERIFY(!tab()->pipelineView()->isVisible());
        // Sampling > Step is the window's own again.
        window_->step();
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(session().request().output_ids().size(), std::size_t{1});
        QTest::mouseClick(tab()->textView(), Qt::LeftButton, {}, tab()->textView()->nextRect().center());
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(tab()->attached());
        QCOMPARE(session().vocabSize(), model_->vocab_size());
        // Edit > Undo goes back to the example, and redo finds the text's step again.
        window_->undo().recordNow();
        action(*window_, "action_undo")->trigger();
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(!tab()->attached());
        action(*window_, "action_redo")->trigger();
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(tab()->attached());
        QCOMPARE(tab()->cursor(), tab()->tree().lineEnd());
    }

    void editUndoOfAStepShowsThePreviousStep() {
        startText(QStringLiteral("a"));
        press(tab()->stepButton());
        press(tab()->stepButton());
        const auto line = tab()->tree().line();
        window_->undo().recordNow();
        action(*window_, "action_undo")->trigger();
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(tab()->attached());
        QCOMPARE(tab()->cursor(), line[0]);
        QCOMPARE(tab()->tree().line(), line);  // the token stays in the text; the step before it is on show
    }

    void withoutTheModelTheTabSaysWhatToInstall() {
        const QByteArray saved = qgetenv("SAMPLESCOPE_NGRAM_MODEL");
        qputenv("SAMPLESCOPE_NGRAM_MODEL", "/nonexistent/en-us.lm.bin");
        window_ = std::make_unique<MainWindow>(MainWindowOptions{false});
        window_->show();
        window_->showView(tab());
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(tab()->modelState(), GenerateView::ModelState::Missing);
        QVERIFY(tab()->placeholder()->isVisible());
        QVERIFY(tab()->placeholder()->text().contains(QStringLiteral("apt install pocketsphinx-en-us")));
        QVERIFY(tab()->placeholder()->text().contains(QStringLiteral("/nonexistent/en-us.lm.bin")));
        QVERIFY(!tab()->stepButton()->isEnabled());
        QVERIFY(!tab()->startButton()->isEnabled());
        tab()->start(QStringLiteral("a b"));
        QVERIFY(window_->errorBanner()->message().contains(QStringLiteral("apt install pocketsphinx-en-us")));
        QVERIFY(window_->errorBanner()->message().contains(QStringLiteral("Open model")));
        QVERIFY(!tab()->hasText());
        // The rest of the window works.
        window_->showView(window_->pipelineView());
        QVERIFY(window_->loadExample(workedExample()));
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(window_->currentView()->trace->token, 3);
        qputenv("SAMPLESCOPE_NGRAM_MODEL", saved);
    }

    void fitsALaptopScreen() {
        startText(QStringLiteral("a b"));
        generate(20);
        window_->resize(1280, 720);
        QVERIFY(window_->waitUntilDrawn());
        QCoreApplication::processEvents();
        QVERIFY2(window_->minimumSizeHint().width() <= 1280, qPrintable(QString::number(window_->minimumSizeHint().width())));
        QCOMPARE(window_->size(), QSize(1280, 720));
        for (QWidget* part : std::initializer_list<QWidget*>{tab()->promptEntry(), tab()->stepButton(), tab()->regenerateButton(),
                                                             tab()->textView(), tab()->treeView(), tab()->pipelineView()}) {
            QVERIFY2(part->isVisible(), part->objectName().toUtf8().constData());
            const QRect shown(part->mapTo(tab(), QPoint(0, 0)), part->size());
            QVERIFY2(tab()->rect().contains(shown.topLeft()) && shown.right() <= tab()->width(),
                     qPrintable(part->objectName()));
        }
        // A row of stage plots is on screen under the text.
        QVERIFY2(tab()->pipelineView()->height() >= 300, qPrintable(QString::number(tab()->pipelineView()->height())));
    }

    // The app's own flags: --prompt and --steps, refused input in one line.
    void theAppOpensOnAPrompt() {
        const QString png = dir_.filePath(QStringLiteral("generate.png"));
        QProcess app;
        app.start(QStringLiteral(SAMPLESCOPE_APP), {QStringLiteral("--screenshot"), png, QStringLiteral("--prompt"),
                                                     QStringLiteral("a b"), QStringLiteral("--steps"), QStringLiteral("3"),
                                                     QStringLiteral("--window-size"), QStringLiteral("1280x720")});
        QVERIFY(app.waitForFinished(60000));
        QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
        QVERIFY(QImage(png).size() == QSize(1280, 720));

        const QList<QStringList> bad{
            {QStringLiteral("--prompt"), QStringLiteral("a \u0001")},
            {QStringLiteral("--prompt"), QStringLiteral("a"), QStringLiteral("--steps"), QStringLiteral("1001")},
            {QStringLiteral("--prompt"), QStringLiteral("a"), QStringLiteral("--values"), QStringLiteral("1,2")},
            {QStringLiteral("--steps"), QStringLiteral("3")},
            {QStringLiteral("--prompt"), QStringLiteral("a"), QStringLiteral("--top-k"), QStringLiteral("-1")},
        };
        for (const QStringList& flags : bad) {
            QProcess refused;
            refused.start(QStringLiteral(SAMPLESCOPE_APP), QStringList{QStringLiteral("--screenshot"), dir_.filePath(QStringLiteral("bad.png"))} + flags);
            QVERIFY(refused.waitForFinished(60000));
            const QByteArray err = refused.readAllStandardError();
            QVERIFY2(refused.exitCode() == 2, qPrintable(flags.join(QLatin1Char(' ')) + QStringLiteral(": ") + QString::fromUtf8(err)));
            QCOMPARE(err.count('\n'), 1);
        }
        // Without the model --prompt names the package to install.
        QProcess missing;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SAMPLESCOPE_NGRAM_MODEL"), QStringLiteral("/nonexistent/en-us.lm.bin"));
        missing.setProcessEnvironment(env);
        missing.start(QStringLiteral(SAMPLESCOPE_APP), {QStringLiteral("--screenshot"), dir_.filePath(QStringLiteral("bad.png")),
                                                         QStringLiteral("--prompt"), QStringLiteral("a")});
        QVERIFY(missing.waitForFinished(60000));
        QCOMPARE(missing.exitCode(), 2);
        QVERIFY(missing.readAllStandardError().contains("apt install pocketsphinx-en-us"));
        // --tab generate without the model still draws the window, the tab saying what to install.
        QProcess tab_only;
        tab_only.setProcessEnvironment(env);
        tab_only.start(QStringLiteral(SAMPLESCOPE_APP), {QStringLiteral("--screenshot"), png, QStringLiteral("--tab"), QStringLiteral("generate")});
        QVERIFY(tab_only.waitForFinished(60000));
        QVERIFY2(tab_only.exitCode() == 0, tab_only.readAllStandardError().constData());
    }
};

QTEST_MAIN(GenerateTabTest)
#include "test_generate_tab.moc"
