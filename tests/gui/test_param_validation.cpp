// The parameter panel's validation, offscreen: a refused value moves no widget
// (its message goes to one reserved line), Escape and the loss of focus bring
// back the value in force, messages quote the text as typed, boxes fit their
// values and a 20-digit seed never widens the panel; knob_notes on hand-made
// rows and their "no effect" badges; Compare pipelines' "Load engine defaults"
// listing what it changed and its note on llama.cpp's temperature.
#include <QtTest>

#include "tests/support/typing.h"

#include <QDir>
#include <QScrollArea>
#include <QScrollBar>

#include <cmath>
#include <limits>
#include <memory>

#include "engine/base/input_error.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/sampler.h"
#include "ui/common/examples.h"
#include "ui/panels/knob_notes.h"
#include "ui/panels/parameter_panel.h"
#include "ui/pipelines/pipeline_compare_view.h"
#include "ui/pipelines/pipeline_editor.h"
#include "ui/window/main_window.h"

using namespace samplescope;
using namespace samplescope::ui;
using samplescope::test::typeAndEnter;

namespace {

QList<QPair<QString, QRect>> geometries(const QWidget* root) {
    QList<QPair<QString, QRect>> out{{root->objectName(), root->geometry()}};
    for (const QWidget* widget : root->findChildren<QWidget*>()) {
        out.append({widget->objectName() + QStringLiteral(" (") + QString::fromLatin1(widget->metaObject()->className()) +
                        QStringLiteral(")"),
                    widget->geometry()});
    }
    return out;
}

std::optional<std::string> reason(const KnobNotes& notes, Param param) { return notes.reason(param); }

// Whether the knob has a note that contains `part`.
bool says(const KnobNotes& notes, Param param, const char* part) {
    const auto& note = notes.reason(param);
    return note && note->find(part) != std::string::npos;
}

KnobNotes notesFor(const std::vector<double>& logits, const SamplingParams& params,
                   const std::vector<std::int64_t>& prompt = {}, const std::vector<std::int64_t>& output = {}) {
    SamplingParams seeded = params;
    seeded.seed = 0;
    return knob_notes(trace_once(logits, seeded, prompt, output));
}

const std::vector<double> kRow{1.0, 3.0, 2.0, 3.0, -1.0};

// Saves the window when SAMPLESCOPE_TEST_SHOTS names a folder (for looking at it).
void shot(QWidget* window, const QString& name) {
    const QString dir = qEnvironmentVariable("SAMPLESCOPE_TEST_SHOTS");
    if (dir.isEmpty()) return;
    window->grab().save(QDir(dir).filePath(name));
}

}  // namespace

class ParamValidationTest : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<MainWindow> window_;

    void openWindow(int width, int height) {
        window_ = std::make_unique<MainWindow>(MainWindowOptions{false});
        window_->resize(width, height);
        window_->show();
        window_->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(window_.get()));
        QVERIFY(window_->loadExample(workedExample()));
        QVERIFY(window_->waitUntilDrawn());
    }

private slots:
    void cleanup() { window_.reset(); }

    // Every widget of the panel keeps its geometry through a series of refusals.
    void refusalsMoveNothing() {
        openWindow(1280, 720);
        auto* panel = window_->parameterPanel();
        QCoreApplication::processEvents();
        const auto before = geometries(panel);
        const QSize window_size = window_->size();
        const SamplingParams in_force = window_->session().params();
        auto* temperature = panel->control(Param::Temperature);
        const struct {
            ParameterControl* control;
            QString typed;
        } refusals[] = {{temperature, QStringLiteral("abc")},
                        {temperature, QStringLiteral("-1")},
                        {temperature, QStringLiteral("1e999")},
                        {panel->control(Param::TopK), QStringLiteral("99999999999999999999")},
                        {panel->control(Param::RepetitionPenalty), QStringLiteral("0")}};
        for (const auto& refusal : refusals) {
            typeAndEnter(refusal.control->entry(), refusal.typed);
            QCoreApplication::processEvents();
            QVERIFY2(!refusal.control->error().isEmpty(), qPrintable(refusal.typed));
            QVERIFY2(refusal.control->error().endsWith(QStringLiteral("got \"%1\"").arg(refusal.typed)),
                     qPrintable(refusal.control->error()));
            QCOMPARE(panel->messageLine()->text(), refusal.control->error());
            if (refusal.control == panel->control(Param::TopK)) {  // param_error's words, the text as typed
                QCOMPARE(refusal.control->error(), QStringLiteral("top_k must be %1, got \"99999999999999999999\"")
                                                       .arg(QString::fromUtf8(param_info(Param::TopK).valid_range.data())));
            }
            QCOMPARE(refusal.control->entry()->text(), refusal.typed);  // the typed text stays while focus does
            const auto after = geometries(panel);
            QCOMPARE(after.size(), before.size());
            for (qsizetype i = 0; i < before.size(); ++i) {
                QVERIFY2(after[i] == before[i], qPrintable(QStringLiteral("%1 moved from %2,%3 %4x%5 to %6,%7 %8x%9 after \"%10\"")
                                                               .arg(before[i].first)
                                                               .arg(before[i].second.x()).arg(before[i].second.y())
                                                               .arg(before[i].second.width()).arg(before[i].second.height())
                                                               .arg(after[i].second.x()).arg(after[i].second.y())
                                                               .arg(after[i].second.width()).arg(after[i].second.height())
                                                               .arg(refusal.typed)));
            }
        }
        shot(window_.get(), QStringLiteral("refused-1280x720.png"));
        QCOMPARE(window_->size(), window_size);
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(window_->session().params() == in_force);
    }

    void escapeAndFocusLossRestoreTheValueInForce() {
        openWindow(1280, 720);
        auto* panel = window_->parameterPanel();
        auto* temperature = panel->control(Param::Temperature);
        const QString in_force = temperature->entry()->text();
        typeAndEnter(temperature->entry(), QStringLiteral("abc"));
        QVERIFY(!temperature->error().isEmpty());
        QTest::keyClick(temperature->entry(), Qt::Key_Escape);
        QCOMPARE(temperature->entry()->text(), in_force);
        QVERIFY(temperature->error().isEmpty());
        QVERIFY(!panel->messageLine()->text().contains(QStringLiteral("abc")));
        QVERIFY(temperature->entry()->styleSheet().isEmpty());

        // Refused, then focus leaves: the box shows the value in force, the line says what happened.
        auto* top_p = panel->control(Param::TopP);
        typeAndEnter(top_p->entry(), QStringLiteral("1.5"));
        QTRY_VERIFY(top_p->entry()->hasFocus());
        QVERIFY(!top_p->error().isEmpty());
        panel->control(Param::MinP)->entry()->setFocus();
        QTRY_VERIFY(!top_p->entry()->hasFocus());
        QCOMPARE(top_p->entry()->text(), QStringLiteral("0.8"));
        QVERIFY(top_p->error().isEmpty());
        QCOMPARE(panel->messageLine()->text(), QStringLiteral("top_p stays 0.8 (\"1.5\" was refused)"));
        // Typed without Enter, then focus leaves: refused and restored the same way.
        auto* min_p = panel->control(Param::MinP);
        min_p->entry()->selectAll();
        QTest::keyClicks(min_p->entry(), QStringLiteral("2"));
        temperature->entry()->setFocus();
        QTRY_VERIFY(!min_p->entry()->hasFocus());
        QCOMPARE(min_p->entry()->text(), QStringLiteral("0"));
        QCOMPARE(panel->messageLine()->text(), QStringLiteral("min_p stays 0 (\"2\" was refused)"));
        // A valid value is applied and the line goes back to its hint.
        typeAndEnter(top_p->entry(), QStringLiteral("0.7"));
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(window_->session().params().top_p, 0.7);
        QVERIFY(!panel->messageLine()->text().contains(QStringLiteral("refused")));

        // The seed box: Escape restores it too.
        const QString seed = panel->seedEntry()->text();
        typeAndEnter(panel->seedEntry(), QStringLiteral("-3"));
        QVERIFY(!panel->seedError().isEmpty());
        QCOMPARE(panel->messageLine()->text(), panel->seedError());
        QTest::keyClick(panel->seedEntry(), Qt::Key_Escape);
        QCOMPARE(panel->seedEntry()->text(), seed);
        QVERIFY(panel->seedError().isEmpty());
    }

    // Boxes fit the values users type; a 20-digit seed scrolls in its box and never widens the panel.
    void boxesFitTheirValues() {
        openWindow(1280, 720);
        auto* panel = window_->parameterPanel();
        for (const auto& info : kParams) {
            QLineEdit* entry = panel->control(info.param)->entry();
            for (const QString& value : {QStringLiteral("0.0001"), QStringLiteral("1e999"), QStringLiteral("-0.00001")}) {
                QVERIFY2(entry->width() >= entryWidthFor(entry, value),
                         qPrintable(QStringLiteral("%1 is %2 px, \"%3\" needs %4")
                                        .arg(entry->objectName()).arg(entry->width()).arg(value)
                                        .arg(entryWidthFor(entry, value))));
            }
        }
        // The panel fits its dock at 1280 x 720: nothing of it is scrolled off to the right.
        QScrollArea* scroll = nullptr;
        for (QWidget* up = panel->parentWidget(); up && !scroll; up = up->parentWidget()) scroll = qobject_cast<QScrollArea*>(up);
        QVERIFY(scroll);
        QVERIFY2(panel->minimumSizeHint().width() <= scroll->viewport()->width(),
                 qPrintable(QStringLiteral("the panel needs %1 px, its dock shows %2")
                                .arg(panel->minimumSizeHint().width()).arg(scroll->viewport()->width())));
        // With the llama.cpp group open (wider rows, and a vertical bar) nothing is cut either: the
        // panel keeps its minimum width and the dock scrolls sideways to it.
        panel->setExtrasExpanded(true);
        QCoreApplication::processEvents();
        QVERIFY2(panel->width() >= panel->minimumSizeHint().width(),
                 qPrintable(QStringLiteral("the open panel is %1 px, it needs %2").arg(panel->width()).arg(panel->minimumSizeHint().width())));
        // What the dock cannot show is reachable: a sideways bar is up.
        QVERIFY2(panel->width() <= scroll->viewport()->width() || scroll->horizontalScrollBar()->isVisible(),
                 qPrintable(QStringLiteral("%1 px of panel in a %2 px dock without a bar").arg(panel->width()).arg(scroll->viewport()->width())));
        panel->setExtrasExpanded(false);
        QCoreApplication::processEvents();
        const QSize hint = panel->sizeHint();
        const QSize minimum = panel->minimumSizeHint();
        const int width = panel->width();
        const QSize window_size = window_->size();
        const QString long_seed = QStringLiteral("18446744073709551615");
        typeAndEnter(panel->seedEntry(), long_seed);
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(window_->session().params().seed == std::optional<std::uint64_t>(18446744073709551615ULL));
        QCoreApplication::processEvents();
        QCOMPARE(panel->sizeHint().width(), hint.width());
        QCOMPARE(panel->minimumSizeHint().width(), minimum.width());
        QCOMPARE(panel->width(), width);
        QCOMPARE(window_->size(), window_size);
        QVERIFY(panel->seedEntry()->toolTip().contains(long_seed));
        QCOMPARE(panel->seedEntry()->text(), long_seed);
    }

    void knobNotesOnHandMadeRows() {
        SamplingParams p;
        // Nothing on: nothing to say.
        for (const auto& info : kParams) QVERIFY(!reason(notesFor(kRow, p), info.param));
        // Greedy: truncation is skipped; the temperature itself matters.
        p.temperature = 0.0;
        p.top_p = 0.5;
        auto notes = notesFor(kRow, p);
        QVERIFY(reason(notes, Param::TopK) && reason(notes, Param::TopP) && reason(notes, Param::MinP));
        QVERIFY(says(notes, Param::TopP, "greedy"));
        QVERIFY(!reason(notes, Param::Temperature));
        // top-k = 1: one token whatever T; top-p then sees one token.
        p = SamplingParams{};
        p.temperature = 0.7;
        p.top_k = 1;
        p.top_p = 0.9;
        notes = notesFor(kRow, p);
        QVERIFY(reason(notes, Param::Temperature));
        QVERIFY(says(notes, Param::TopP, "only one token"));
        QVERIFY(!reason(notes, Param::TopK));
        // top-p that keeps everything top-k left; min-p whose floor is below every kept q.
        p = SamplingParams{};
        p.top_k = 2;
        p.top_p = 0.999;
        p.min_p = 0.01;
        notes = notesFor(kRow, p);
        QVERIFY(says(notes, Param::TopP, "keeps all 2 tokens"));
        QVERIFY(says(notes, Param::MinP, "floor"));
        QVERIFY(!reason(notes, Param::Temperature));
        // A top-p that drops something, a min-p that drops something: no note.
        p.top_k = 0;
        p.top_p = 0.6;
        p.min_p = 0.5;
        notes = notesFor(kRow, p);
        QVERIFY(!reason(notes, Param::TopP));
        // k at or above the candidates (one id is -inf: 4 candidates).
        p = SamplingParams{};
        p.top_k = 4;
        notes = notesFor({1.0, 3.0, -std::numeric_limits<double>::infinity(), 3.0, -1.0}, p);
        QVERIFY(says(notes, Param::TopK, "4 candidates"));
        p.top_k = 3;
        QVERIFY(!reason(notesFor({1.0, 3.0, -std::numeric_limits<double>::infinity(), 3.0, -1.0}, p), Param::TopK));
        // Penalties: on but no history, or nothing generated yet.
        p = SamplingParams{};
        p.repetition_penalty = 1.3;
        p.presence_penalty = 0.5;
        notes = notesFor(kRow, p);
        QVERIFY(reason(notes, Param::RepetitionPenalty));
        QVERIFY(reason(notes, Param::PresencePenalty));
        QVERIFY(!reason(notes, Param::FrequencyPenalty));
        notes = notesFor(kRow, p, {1}, {3});
        QVERIFY(!reason(notes, Param::RepetitionPenalty));
        QVERIFY(!reason(notes, Param::PresencePenalty));
        // One finite logit: every knob.
        notes = notesFor({-std::numeric_limits<double>::infinity(), 2.0}, SamplingParams{});
        for (std::size_t i = 0; i < kContractParamCount; ++i) QVERIFY(reason(notes, kParams[i].param));
        // llama.cpp's knobs get none.
        for (std::size_t i = kContractParamCount; i < kParams.size(); ++i) QVERIFY(!reason(notes, kParams[i].param));
    }

    void panelShowsNotesWhileTheyHold() {
        ParameterPanel panel;
        panel.resize(420, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        SamplingParams p;
        p.top_k = 2;
        p.top_p = 0.999;
        p.seed = 5;
        panel.setParams(p, kRow.size());
        auto* top_p = panel.control(Param::TopP);
        QCOMPARE(top_p->stateLabel()->text(), QStringLiteral("on"));
        const QRect badge = top_p->stateLabel()->geometry();
        panel.setKnobNotes(knob_notes(trace_once(kRow, p)));
        QCOMPARE(top_p->stateLabel()->text(), QStringLiteral("no effect"));
        QCOMPARE(top_p->stateLabel()->geometry(), badge);
        QVERIFY(top_p->stateLabel()->toolTip().contains(QStringLiteral("keeps all 2 tokens")));
        QCOMPARE(panel.control(Param::TopK)->stateLabel()->text(), QStringLiteral("on"));
        // Hovering the knob names the reason in the line; leaving brings the hint back.
        QEvent enter(QEvent::Enter);
        QCoreApplication::sendEvent(top_p->slider(), &enter);
        QVERIFY(panel.messageLine()->text().startsWith(QStringLiteral("top_p has no effect now: p = 0.999 keeps all 2")));
        QEvent leave(QEvent::Leave);
        QCoreApplication::sendEvent(top_p->slider(), &leave);
        QVERIFY(!panel.messageLine()->text().contains(QStringLiteral("no effect")));
        // An edit makes the notes stale: they go until the next trace.
        typeAndEnter(top_p->entry(), QStringLiteral("0.5"));
        QCOMPARE(top_p->stateLabel()->text(), QStringLiteral("on"));
        // The same parameters with another seed still hold them.
        SamplingParams other = panel.params();
        other.seed = 99;
        panel.setKnobNotes(knob_notes(trace_once(kRow, other)));
        QCOMPARE(panel.control(Param::TopK)->stateLabel()->text(), QStringLiteral("on"));
    }

    void loadEngineDefaultsSaysWhatChanged() {
        PipelineCompareView view;
        SamplingParams p;
        p.temperature = 0.7;
        p.top_p = 0.9;
        p.seed = 1;
        view.setInput(kRow, {}, p, {}, {});
        QVERIFY(view.defaultsNote()->isHidden());
        QList<SamplingParams> emitted;
        QStringList summaries;
        connect(&view, &PipelineCompareView::paramsChanged, this, [&](const SamplingParams& params) { emitted << params; });
        connect(&view, &PipelineCompareView::defaultsLoaded, this, [&](const QString& summary) { summaries << summary; });
        emit view.editorB()->engineDefaultsRequested(QStringLiteral("llamacpp"));
        QCOMPARE(emitted.size(), 1);
        QCOMPARE(emitted[0].seed, p.seed);
        const QString expected = QStringLiteral("temperature 0.7 -> 0.8, top_k 0 -> 40, top_p 0.9 -> 0.95, min_p 0 -> 0.05");
        QVERIFY2(view.defaultsNote()->text().contains(expected), qPrintable(view.defaultsNote()->text()));
        QVERIFY(view.defaultsNote()->text().startsWith(QStringLiteral("Loaded ")));
        QCOMPARE(summaries, QStringList{view.defaultsNote()->text()});
        QVERIFY(!view.defaultsNote()->isHidden());
        // Fed back the same parameters, the note stays; another edit retires it.
        view.setInput(kRow, {}, emitted[0], {}, {});
        QVERIFY(!view.defaultsNote()->isHidden());
        SamplingParams edited = emitted[0];
        edited.top_k = 3;
        view.setInput(kRow, {}, edited, {}, {});
        QVERIFY(view.defaultsNote()->isHidden());
        // Loading again with nothing to change says so.
        emit view.editorB()->engineDefaultsRequested(QStringLiteral("llamacpp"));
        emit view.editorB()->engineDefaultsRequested(QStringLiteral("llamacpp"));
        QVERIFY(view.defaultsNote()->text().contains(QStringLiteral("already")));
        QCOMPARE(paramChanges(SamplingParams{}, SamplingParams{}), QStringList{});
    }

    void llamacppTemperatureAfterTruncationIsNoted() {
        PipelineCompareView view;
        SamplingParams p;
        p.temperature = 0.7;
        p.top_k = 3;
        view.setInput(kRow, {}, p, {}, {});
        view.setPipelines(preset_pipeline("spec"), preset_pipeline("vllm"));
        QVERIFY(view.orderNote()->isHidden());
        view.setPipelines(preset_pipeline("spec"), preset_pipeline("llamacpp"));
        QVERIFY(!view.orderNote()->isHidden());
        QVERIFY2(view.orderNote()->text().startsWith(QStringLiteral("B (")), qPrintable(view.orderNote()->text()));
        QVERIFY(view.orderNote()->text().contains(QStringLiteral("after truncation")));
    }
};

QTEST_MAIN(ParamValidationTest)
#include "test_param_validation.moc"
