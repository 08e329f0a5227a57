// llama.cpp's extra samplers in the window, offscreen: the parameter panel's
// collapsed "llama.cpp samplers" group with its badges and the two list
// controls (bad text answered in place, string breakers resolved through the
// token texts), the "llama.cpp samplers" examples (each opens Compare
// pipelines on a pair that parts, on the sampler side's stage plots), and
// mirostat's mu carried by Step and restored by Reset request.
#include <QtTest>

#include <QMenu>
#include <QMenuBar>

#include <cmath>
#include <memory>
#include <random>

#include "engine/base/input_error.h"
#include "engine/pipelines/pipeline_diff.h"
#include "engine/pipelines/pipeline_presets.h"
#include "tests/support/random_cases.h"
#include "ui/common/examples.h"
#include "ui/panels/parameter_panel.h"
#include "ui/stages/stage_plot.h"
#include "ui/window/main_window.h"

using namespace samplescope;
using namespace samplescope::ui;

namespace {

// A plot's notes as one line (they are wrapped at spaces for display).
QString notesOf(const StagePlot& plot) { return plot.noteText().replace(QLatin1Char('\n'), QLatin1Char(' ')); }

void settle() {
    for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
}

// Types `text` into an entry and finishes the edit, as a user does.
void type(QLineEdit* entry, const QString& text) {
    entry->setText(text);
    emit entry->editingFinished();
}

const SamplerExample& samplerExample(const std::string& key) {
    for (const auto& e : samplerExamples()) {
        if (e.key == key) return e;
    }
    qFatal("no sampler example %s", key.c_str());
}

}  // namespace

class TestSamplerGui : public QObject {
    Q_OBJECT

private slots:
    // The panel writes no badge of its own: each is its row's param_badge
    // (the stage descriptors), and the group's summary lists the on ones.
    void everyBadgeIsItsRowsBadge() {
        ParameterPanel panel;
        std::mt19937_64 random(3);
        for (int i = 0; i < 400; ++i) {
            const SamplingParams p = testing::random_params(random);
            const std::size_t vocab = 1 + random() % 40;
            panel.setParams(p, vocab);
            QStringList on;
            for (const auto& info : kParams) {
                const ParamBadge badge = param_badge(info, p, vocab);
                QCOMPARE(panel.control(info.param)->stateLabel()->text(), QString::fromStdString(badge.text));
                if (!badge.summary.empty()) on << QString::fromStdString(badge.summary);
            }
            const auto list_badge = [&](std::string_view key) { return list_param_badge(*list_param_from_key(key), p, vocab); };
            QCOMPARE(panel.logitBiasControl()->stateLabel()->text(), QString::fromStdString(list_badge("logit_bias").text));
            QCOMPARE(panel.dryBreakersControl()->stateLabel()->text(),
                     QString::fromStdString(list_badge("dry_sequence_breakers").text));
            if (list_badge("logit_bias").on) on << QStringLiteral("logit bias");
            QCOMPARE(panel.extrasSummary()->text(),
                     on.isEmpty() ? QStringLiteral("all off") : QStringLiteral("on: ") + on.join(QStringLiteral(", ")));
        }
    }

    void llamaCppParametersHaveTheirOwnCollapsedGroup() {
        ParameterPanel panel;
        panel.setParams(SamplingParams{}, 8);
        panel.resize(380, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY(panel.extrasToggle());
        QCOMPARE(panel.extrasToggle()->text(), QStringLiteral("llama.cpp samplers"));
        QVERIFY(!panel.extrasExpanded());
        QVERIFY(!panel.extrasGroup()->isVisible());
        // Every row after the contract's is inside the group, the contract's outside it.
        for (std::size_t i = 0; i < kParams.size(); ++i) {
            const bool inside = panel.extrasGroup()->isAncestorOf(panel.control(kParams[i].param)->entry());
            QCOMPARE(inside, i >= kContractParamCount);
        }
        QVERIFY(panel.extrasGroup()->isAncestorOf(panel.logitBiasControl()->entry()));
        QVERIFY(panel.extrasGroup()->isAncestorOf(panel.dryBreakersControl()->entry()));
        panel.extrasToggle()->click();
        QVERIFY(panel.extrasExpanded());
        QVERIFY(panel.extrasGroup()->isVisible());

        // Badges: typical-p and top-n-sigma have one now; a shaping parameter says whether its sampler is on.
        QCOMPARE(panel.control(Param::TypicalP)->stateLabel()->text(), QStringLiteral("off"));
        QCOMPARE(panel.control(Param::TopNSigma)->stateLabel()->text(), QStringLiteral("off"));
        QCOMPARE(panel.control(Param::MirostatTau)->stateLabel()->text(), QStringLiteral("unused"));
        type(panel.control(Param::Mirostat)->entry(), QStringLiteral("2"));
        QCOMPARE(panel.control(Param::Mirostat)->stateLabel()->text(), QStringLiteral("v2"));
        QCOMPARE(panel.control(Param::MirostatTau)->stateLabel()->text(), QStringLiteral("used"));
        type(panel.control(Param::XtcProbability)->entry(), QStringLiteral("0.5"));
        type(panel.control(Param::XtcThreshold)->entry(), QStringLiteral("0.6"));
        QCOMPARE(panel.control(Param::XtcProbability)->stateLabel()->text(), QStringLiteral("off (t > 0.5)"));
        QVERIFY(panel.findChild<QLabel*>(QStringLiteral("llamacpp_samplers_summary"))->text().contains(QStringLiteral("mirostat 2")));
    }

    void listControlsAnswerBadTextInPlace() {
        ParameterPanel panel;
        panel.setParams(SamplingParams{}, 8);
        panel.setExtrasExpanded(true);
        QSignalSpy edited(&panel, &ParameterPanel::paramsEdited);

        type(panel.dryBreakersControl()->entry(), QStringLiteral("13;x"));
        QVERIFY2(panel.dryBreakersControl()->error().startsWith(QStringLiteral("dry_sequence_breakers")),
                 qPrintable(panel.dryBreakersControl()->error()));
        QCOMPARE(edited.count(), 0);
        QVERIFY(panel.params().dry_sequence_breakers.empty());
        type(panel.dryBreakersControl()->entry(), QStringLiteral("2;\"ab"));  // unterminated string
        QVERIFY(panel.dryBreakersControl()->error().contains(QStringLiteral("unterminated")));
        type(panel.dryBreakersControl()->entry(), QStringLiteral("3;9"));  // an id >= V = 8
        QVERIFY2(!panel.dryBreakersControl()->error().isEmpty(), "an id beyond V is refused");
        QCOMPARE(edited.count(), 0);

        type(panel.dryBreakersControl()->entry(), QStringLiteral("3;5,6"));
        QVERIFY(panel.dryBreakersControl()->error().isEmpty());
        QCOMPARE(edited.count(), 1);
        QCOMPARE(panel.params().dry_sequence_breakers, (std::vector<std::vector<std::int64_t>>{{3}, {5, 6}}));

        type(panel.logitBiasControl()->entry(), QStringLiteral("1:2,banana"));
        QVERIFY2(panel.logitBiasControl()->error().startsWith(QStringLiteral("logit_bias")),
                 qPrintable(panel.logitBiasControl()->error()));
        QCOMPARE(edited.count(), 1);
        type(panel.logitBiasControl()->entry(), QStringLiteral("1:2.5,7:-inf"));
        QVERIFY(panel.logitBiasControl()->error().isEmpty());
        QCOMPARE(panel.params().logit_bias.size(), std::size_t{2});
        QCOMPARE(panel.logitBiasControl()->stateLabel()->text(), QStringLiteral("on"));
    }

    void stringBreakersStandForEveryTokenContainingThem() {
        const std::vector<std::string> texts{"the", "\n", "cat", ".\n", "sat", ":", ""};
        const DryBreakerText parsed = parseDryBreakerText(QStringLiteral("\"\\n\"; \":\" ;4,2"), texts);
        QCOMPARE(parsed.breakers, (std::vector<std::vector<std::int64_t>>{{1}, {3}, {5}, {4, 2}}));
        QVERIFY2(parsed.note.contains(QStringLiteral("2 tokens")), qPrintable(parsed.note));
        QVERIFY_THROWS_EXCEPTION(InputError, parseDryBreakerText(QStringLiteral("\"\""), texts));
        QVERIFY_THROWS_EXCEPTION(InputError, parseDryBreakerText(QStringLiteral("\"a\" 4"), texts));
        QVERIFY_THROWS_EXCEPTION(InputError, parseDryBreakerText(QStringLiteral("\"a\";;4"), texts));
        QVERIFY(parseDryBreakerText(QString(), texts).breakers.empty());

        ParameterPanel panel;
        panel.setTokenTexts([texts] { return texts; });
        panel.setParams(SamplingParams{}, texts.size());
        panel.setExtrasExpanded(true);
        panel.resize(360, 900);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        // The resolution note has a line of its own, reserved: no widget moves when it appears.
        const auto geometries = [&panel] {
            QList<QRect> out;
            for (const auto* widget : panel.findChildren<QWidget*>()) {
                // An entry's own parts (its clear button shows with text) are not rows.
                if (widget->isVisible() && !qobject_cast<QLineEdit*>(widget->parentWidget())) {
                    out << QRect(widget->mapTo(&panel, QPoint(0, 0)), widget->size());
                }
            }
            return out;
        };
        const QList<QRect> before = geometries();
        type(panel.dryBreakersControl()->entry(), QStringLiteral("\"\\n\""));
        QCOMPARE(panel.params().dry_sequence_breakers, (std::vector<std::vector<std::int64_t>>{{1}, {3}}));
        QVERIFY(panel.dryBreakersControl()->note().contains(QStringLiteral("2 tokens")));
        QCoreApplication::processEvents();
        QCOMPARE(geometries(), before);
        // The text as typed stays while it still stands for the parameters.
        panel.setParams(panel.params(), texts.size());
        QCOMPARE(panel.dryBreakersControl()->entry()->text(), QStringLiteral("\"\\n\""));
    }

    void everySamplerExampleShowsItsSampler() {
        MainWindow window(MainWindowOptions{false});
        window.resize(1280, 720);
        window.show();
        QVERIFY(window.waitUntilDrawn());
        auto* menu = window.menuBar()->findChild<QMenu*>(QStringLiteral("samplers_menu"));
        QVERIFY(menu);
        QCOMPARE(menu->actions().size(), static_cast<qsizetype>(samplerExamples().size()));
        const std::vector<std::pair<std::string, Stage>> sampler{
            {"dry", Stage::Dry},           {"xtc", Stage::Xtc},           {"mirostat2", Stage::Mirostat},
            {"mirostat1", Stage::Mirostat}, {"dynatemp", Stage::Temperature}, {"typical", Stage::TypicalP},
            {"top_n_sigma", Stage::TopNSigma}, {"order_xtc", Stage::Xtc}};
        QCOMPARE(sampler.size(), samplerExamples().size());
        for (std::size_t i = 0; i < samplerExamples().size(); ++i) {
            const SamplerExample& e = samplerExamples()[i];
            QCOMPARE(e.key, sampler[i].first);
            menu->actions()[static_cast<qsizetype>(i)]->trigger();
            settle();
            QVERIFY(window.waitUntilDrawn());
            const auto& diff = window.pipelineCompareView()->diff();
            QVERIFY2(diff.has_value(), e.key.c_str());
            QVERIFY2(diff->total_variation > 1e-3, e.key.c_str());
            const PipelineTrace& side = e.stages_side == 0 ? diff->a : diff->b;
            QVERIFY2(side.trace.stage(sampler[i].second).active, e.key.c_str());
            // Its side's stage plots are on show, drawn, with the sampler's plot among them.
            PipelineStagePlots* plots = window.pipelineStagePlots(e.stages_side);
            QVERIFY2(plots->isVisible(), e.key.c_str());
            StagePlot* plot = plots->plot(sampler[i].second);
            QVERIFY2(plot, e.key.c_str());
            QVERIFY2(!plot->titleText().endsWith(QStringLiteral(": off")), qPrintable(plot->titleText()));
        }
        // The order example: top-k then XTC keeps B; XTC then top-k keeps D.
        const auto& diff = window.pipelineCompareView()->diff();
        QCOMPARE(diff->a.trace.final_kept(), (IdList{1}));
        QCOMPARE(diff->b.trace.final_kept(), (IdList{3}));
    }

    void stepCarriesMirostatMuAndResetRestoresIt() {
        MainWindow window(MainWindowOptions{false});
        window.show();
        QVERIFY(window.waitUntilDrawn());
        const SamplerExample& e = samplerExample("mirostat2");
        QVERIFY(window.loadSamplerExample(e));
        settle();
        const double start = 2.0 * e.params.mirostat_tau;
        QVERIFY(!window.session().mirostatMu().has_value());
        QCOMPARE(window.pipelineCompareView()->diff()->b.mirostat->mu_before, start);

        std::vector<double> mus{start};
        for (int step = 0; step < 3; ++step) {
            const double expected = window.pipelineCompareView()->diff()->b.mirostat->mu_after;
            window.step();
            settle();
            QVERIFY(window.session().mirostatMu().has_value());
            QCOMPARE(*window.session().mirostatMu(), expected);
            // The pipeline view's next step starts from it, and the mirostat plot says so.
            QVERIFY(window.waitUntilDrawn());
            QCOMPARE(window.pipelineCompareView()->diff()->b.mirostat->mu_before, expected);
            StagePlot* plot = window.pipelineStagePlots(1)->plot(Stage::Mirostat);
            QVERIFY(plot);
            QVERIFY2(notesOf(*plot).contains(QStringLiteral("mu = %1 bits").arg(QString::number(expected, 'g', 6))),
                     qPrintable(notesOf(*plot)));
            mus.push_back(expected);
        }
        QVERIFY(mus[1] != mus[0]);
        QCOMPARE(window.session().request().output_ids().size(), std::size_t{3});

        window.resetRequest();
        settle();
        QVERIFY(!window.session().mirostatMu().has_value());
        QCOMPARE(window.session().mirostatMuNow(), start);
        QCOMPARE(window.pipelineCompareView()->diff()->b.mirostat->mu_before, start);
        QVERIFY(window.session().request().output_ids().empty());
    }
};

QTEST_MAIN(TestSamplerGui)
#include "test_sampler_gui.moc"
