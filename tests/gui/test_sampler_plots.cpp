// The stages outside the contract (llama.cpp's extra samplers,
// docs/samplers.md), offscreen: for each, a pipeline that runs it with the
// stage on and off, its plot drawn from that trace without a throw, with its
// title, and its box in the pipeline comparison's stage strip; then what each
// new plot shows (DRY's lengths, XTC's coin and branches, mirostat's mu,
// dynamic temperature's entropy and range, the off texts) and the strip of
// stage plots a pipeline run gets.
#include <QtTest>

#include <QLabel>

#include <cmath>
#include <memory>

#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"
#include "tests/support/random_cases.h"
#include "ui/common/trace_view.h"
#include "ui/pipelines/stage_strip.h"
#include "ui/stages/pipeline_stage_plots.h"
#include "ui/stages/stage_plot.h"

using namespace samplescope;
using namespace samplescope::ui;

namespace {

// Parameters that switch every extra stage on: values chosen to show each,
// and any stage still off (one added later) switched on by its descriptor.
SamplingParams every_stage_on(std::size_t vocab) {
    SamplingParams params;
    params.seed = 7;
    params.logit_bias = parse_logit_bias("0:1.5,5:-inf");
    params.typical_p = 0.6;
    params.top_n_sigma = 1.0;
    params.dry_multiplier = 1.0;
    params.xtc_probability = 1.0;
    params.xtc_threshold = 0.1;
    params.mirostat = 2;
    params.dynatemp_range = 0.5;
    for (const auto& info : kStages) {
        if (!info.contract && !stage_on(info.stage, params, vocab)) testing::switch_stage_on(params, info.stage, vocab);
    }
    return params;
}

std::shared_ptr<const TraceView> view_of(const SampleTrace& trace, std::shared_ptr<const PipelineTrace> run = nullptr) {
    auto view = std::make_shared<TraceView>();
    view->trace = std::make_shared<const SampleTrace>(trace);
    view->pipeline = std::move(run);
    view->labels = std::make_shared<const TokenLabels>();
    view->top_n = 10;
    for (const auto& stage : trace.stages) {
        if (stage.stage != Stage::Draw) view->stages.push_back(makeStagePlotData(trace, stage.stage, view->top_n));
    }
    return view;
}

// A plot's notes as one line (they are wrapped at spaces for display).
QString notesOf(const StagePlot& plot) { return plot.noteText().replace(QLatin1Char('\n'), QLatin1Char(' ')); }

QString itemText(StagePlot& plot, const QString& name) {
    auto* text = qobject_cast<QCPItemText*>(plot.item(name));
    return text ? text->text() : QString();
}

// Every text item of a plot with this name, joined.
QStringList itemTexts(StagePlot& plot, const QString& name) {
    QStringList texts;
    for (int i = 0; i < plot.itemCount(); ++i) {
        auto* text = qobject_cast<QCPItemText*>(plot.QCustomPlot::item(i));
        if (text && text->objectName() == name) texts << text->text();
    }
    return texts;
}

// A plot of `stage` from one run of `steps` (a custom step list).
struct Drawn {
    PipelineTrace run;
    std::unique_ptr<StagePlot> plot;
};

Drawn draw(Stage stage, const std::string& steps, const std::vector<double>& logits, const SamplingParams& params,
           const std::vector<std::int64_t>& output = {}) {
    Drawn d;
    d.run = trace_pipeline_once(custom_pipeline(steps), PipelineInput{logits, params, {}, output});
    d.plot = std::make_unique<StagePlot>(stage);
    d.plot->resize(420, 420);
    d.plot->showView(view_of(d.run.trace, std::make_shared<const PipelineTrace>(d.run)), -1, false);
    return d;
}

}  // namespace

class TestSamplerPlots : public QObject {
    Q_OBJECT

private slots:
    void everyExtraStageRendersOnAndOff() {
        const std::vector<double> logits{2.0, 1.0, 0.5, 0.25, -1.0, 3.0, 0.0, -0.5};
        for (const auto& info : kStages) {
            if (info.contract) continue;
            const std::string name(info.name);
            const Pipeline pipeline = custom_pipeline(name + ",top_k");
            for (const bool on : {true, false}) {
                SamplingParams params = every_stage_on(logits.size());
                if (!on) params = SamplingParams{};
                params.seed = 7;
                // A history whose suffix 0 1 repeats, for DRY.
                const std::vector<std::int64_t> output{0, 1, 2, 0, 1};
                const PipelineTrace t = trace_pipeline_once(pipeline, PipelineInput{logits, params, {}, output});
                QCOMPARE(t.trace.stage(info.stage).active, on);
                StagePlot plot(info.stage);
                plot.resize(400, 300);
                plot.showView(view_of(t.trace), -1, false);
                QVERIFY2(plot.titleText().contains(QString::fromUtf8(info.title.data(), static_cast<int>(info.title.size()))),
                         qPrintable(plot.titleText()));
                QVERIFY(!plot.grab().isNull());
                plot.showView(view_of(t.trace), 0, true);  // a selected id, log scale
                StageStrip strip;
                strip.setTrace(QStringLiteral("custom"), t);
                QVERIFY(strip.boxTexts().join(QLatin1Char(' '))
                            .contains(QString::fromUtf8(info.title.data(), static_cast<int>(info.title.size()))));
            }
        }
    }

    // DRY: the penalised id carries its repeat length over its bar and its penalty on the right-hand axis.
    void dryPlotShowsLengthsAndPenalties() {
        SamplingParams params;
        params.seed = 1;
        params.dry_multiplier = 0.8;
        // "0 1 2 3 0 4 5 0 1 2 3 0": the next 4 would repeat "0 1 2 3 0 4", L = 5.
        const std::vector<std::int64_t> output{0, 1, 2, 3, 0, 4, 5, 0, 1, 2, 3, 0};
        auto d = draw(Stage::Dry, "dry", {1.0, 0.5, 0.2, 0.0, 3.0, 0.8, 1.5}, params, output);
        const StageTrace& dry = d.run.trace.stage(Stage::Dry);
        QCOMPARE(*dry.dry_ids, (IdList{4}));
        QCOMPARE(itemTexts(*d.plot, QStringLiteral("dry_length")), (QStringList{QStringLiteral("L=5")}));
        QVERIFY(d.plot->graphNamed(QStringLiteral("dry_penalty")));
        QCOMPARE(d.plot->graphNamed(QStringLiteral("dry_penalty"))->data()->size(), 1);
        QCOMPARE(d.plot->graphNamed(QStringLiteral("dry_penalty"))->data()->begin()->value, (*dry.dry_penalties)[0]);
        QVERIFY(d.plot->yAxis2->visible());
        QVERIFY(!d.plot->yAxis2->label().isEmpty());
        QVERIFY2(notesOf(*d.plot).contains(QStringLiteral("0.8 x 1.75^(L - 2)")), qPrintable(notesOf(*d.plot)));
        QVERIFY2(notesOf(*d.plot).contains(QStringLiteral("L=5 -4.28")), qPrintable(notesOf(*d.plot)));
        QVERIFY(d.plot->bars(QStringLiteral("before")));  // the q before the penalty, dotted
        QVERIFY(d.plot->toolTip().contains(QStringLiteral("multiplier x base^(L - allowed)")));

        // On, but no repeat long enough: said in words.
        auto none = draw(Stage::Dry, "dry", {1.0, 0.5, 0.2}, params, {0, 1, 2});
        QVERIFY(none.run.trace.stage(Stage::Dry).active);
        QVERIFY2(notesOf(*none.plot).contains(QStringLiteral("nothing penalised")), qPrintable(notesOf(*none.plot)));
    }

    // XTC: the threshold on q, the removed set marked, the coin in the title and notes, both branches.
    void xtcPlotShowsTheCoinAndBothBranches() {
        const std::vector<double> logits{std::log(0.35), std::log(0.25), std::log(0.2), std::log(0.1), std::log(0.06),
                                         std::log(0.04)};
        for (const double p : {1.0, 1e-9}) {  // always fires; practically never
            SamplingParams params;
            params.seed = 3;
            params.xtc_probability = p;
            params.xtc_threshold = 0.15;
            auto d = draw(Stage::Xtc, "xtc", logits, params);
            const StageTrace& xtc = d.run.trace.stage(Stage::Xtc);
            QVERIFY(xtc.xtc_fired.has_value());
            const bool fired = *xtc.xtc_fired;
            QCOMPARE(fired, p == 1.0);
            QCOMPARE(*xtc.xtc_removed, (IdList{0, 1}));
            QVERIFY2(d.plot->titleText().contains(fired ? QStringLiteral("coin fired") : QStringLiteral("coin did not fire")),
                     qPrintable(d.plot->titleText()));
            const QString notes = notesOf(*d.plot);
            QVERIFY2(notes.contains(QStringLiteral("coin u = ")), qPrintable(notes));
            QVERIFY2(notes.contains(fired ? QStringLiteral("fired, 2 removed") : QStringLiteral("did not fire")), qPrintable(notes));
            QVERIFY2(notes.contains(QStringLiteral("without the cut")) && notes.contains(QStringLiteral("with the cut")),
                     qPrintable(notes));
            QVERIFY(itemText(*d.plot, QStringLiteral("threshold_label")).contains(QStringLiteral("0.15")));
            QCOMPARE(d.plot->graphNamed(QStringLiteral("xtc_removed"))->data()->size(), 2);
            QCOMPARE(d.plot->bars(QStringLiteral("dropped")) != nullptr, fired);
            QVERIFY(d.plot->toolTip().contains(QStringLiteral("(1 - p) q_without + p q_with")));
        }
    }

    // Mirostat: v2's line at q = 2^-mu and mu before and after; v1's k and s_hat.
    void mirostatNotesShowMu() {
        const std::vector<double> logits{std::log(0.3), std::log(0.2), std::log(0.15), std::log(0.1), std::log(0.08),
                                         std::log(0.06), std::log(0.04), std::log(0.03), std::log(0.02), std::log(0.02)};
        SamplingParams params;
        params.seed = 5;
        params.mirostat = 2;
        params.mirostat_tau = 2.0;
        auto d = draw(Stage::Mirostat, "mirostat", logits, params);
        QVERIFY(d.run.mirostat.has_value());
        QVERIFY2(d.plot->titleText().contains(QStringLiteral("Mirostat v2")), qPrintable(d.plot->titleText()));
        QVERIFY2(notesOf(*d.plot).contains(QStringLiteral("mu = 4 bits")), qPrintable(notesOf(*d.plot)));
        QVERIFY2(notesOf(*d.plot).contains(QStringLiteral("mu after = 4 - ")), qPrintable(notesOf(*d.plot)));
        QVERIFY(notesOf(*d.plot).contains(QString::number(d.run.mirostat->mu_after, 'g', 5)));
        QVERIFY(itemText(*d.plot, QStringLiteral("threshold_label")).contains(QStringLiteral("0.0625")));

        params.mirostat = 1;
        auto v1 = draw(Stage::Mirostat, "mirostat", logits, params);
        const StageTrace& m = v1.run.trace.stage(Stage::Mirostat);
        QVERIFY(m.mirostat_k && m.mirostat_s_hat);
        const auto kept = static_cast<std::size_t>(std::max(1.0, std::floor(*m.mirostat_k)));
        QCOMPARE(m.kept_count(), kept);
        QVERIFY2(notesOf(*v1.plot).contains(QStringLiteral("keeps the top max(1, floor k) = %1").arg(kept)),
                 qPrintable(notesOf(*v1.plot)));
        QVERIFY(notesOf(*v1.plot).contains(QStringLiteral("s_hat = ")));
    }

    // Dynamic temperature: H, log n, T' and the range [max(0, T - range), T + range].
    void dynamicTemperatureNotes() {
        SamplingParams params;
        params.seed = 2;
        params.dynatemp_range = 0.8;
        auto d = draw(Stage::Temperature, "temperature:llamacpp", {3.0, 1.0, 0.5, 0.0}, params);
        const StageTrace& t = d.run.trace.stage(Stage::Temperature);
        QVERIFY(t.temperature_used && t.entropy && t.max_entropy);
        QVERIFY2(d.plot->titleText().contains(QStringLiteral("(dynamic)")), qPrintable(d.plot->titleText()));
        const QString notes = notesOf(*d.plot);
        QVERIFY2(notes.contains(QStringLiteral("H = %1").arg(QString::number(*t.entropy, 'g', 4))), qPrintable(notes));
        QVERIFY(notes.contains(QStringLiteral("log n = %1").arg(QString::number(*t.max_entropy, 'g', 4))));
        QVERIFY(notes.contains(QStringLiteral("= %1,").arg(QString::number(*t.temperature_used, 'g', 5))));
        QVERIFY(notes.contains(QStringLiteral("[0.2, 1.8]")));
    }

    // Each new stage, off, says why in words; a step that mirostat's chain skips says so too.
    void offTextsNameTheirSwitch() {
        const std::vector<double> logits{2.0, 1.0, 0.5};
        const std::vector<std::pair<Stage, QString>> cases{
            {Stage::Dry, QStringLiteral("Off: dry_multiplier = 0")},
            {Stage::Xtc, QStringLiteral("Off: xtc_probability = 0")},
            {Stage::Mirostat, QStringLiteral("Off: mirostat = 0")},
        };
        for (const auto& [stage, text] : cases) {
            SamplingParams params;
            params.seed = 1;
            auto d = draw(stage, std::string(stage_info(stage).name), logits, params);
            QVERIFY(d.plot->titleText().endsWith(QStringLiteral(": off")));
            QVERIFY2(itemText(*d.plot, QStringLiteral("inactive")).contains(text), qPrintable(itemText(*d.plot, QStringLiteral("inactive"))));
        }
        SamplingParams params;
        params.seed = 1;
        params.mirostat = 2;
        params.xtc_probability = 1.0;
        const PipelineTrace run = trace_pipeline_once(preset_pipeline("llamacpp"), PipelineInput{logits, params, {}, {}});
        StagePlot plot(Stage::Xtc);
        plot.resize(400, 400);
        plot.showView(view_of(run.trace, std::make_shared<const PipelineTrace>(run)), -1, false);
        QVERIFY2(itemText(plot, QStringLiteral("inactive")).contains(QStringLiteral("skipped")),
                 qPrintable(itemText(plot, QStringLiteral("inactive"))));
    }

    // A pipeline run as a row of stage plots in its own order, without Widen and Draw.
    void pipelineStagePlotsFollowTheRun() {
        SamplingParams params;
        params.seed = 7;
        params.dry_multiplier = 1.0;
        params.xtc_probability = 1.0;
        params.xtc_threshold = 0.1;
        const std::vector<std::int64_t> output{0, 1, 2, 0, 1};
        const std::vector<double> logits{2.0, 1.0, 0.5, 0.25, -1.0, 3.0, 0.0, -0.5};
        auto run = std::make_shared<const PipelineTrace>(
            trace_pipeline_once(preset_pipeline("llamacpp"), PipelineInput{logits, params, {}, output}));
        PipelineStagePlots plots;
        plots.resize(900, 500);
        plots.setTrace(run, std::make_shared<const TokenLabels>());
        QVERIFY(plots.plots().isEmpty());  // built on show
        plots.build();
        // By default a stage that is off gets no plot, only its name in the line above the plots.
        QVERIFY(plots.hideOff());
        std::vector<Stage> active;
        QStringList off;
        for (const auto& stage : run->trace.stages) {
            if (stage.stage == Stage::Widen || stage.stage == Stage::Draw) continue;
            if (stage.active) {
                active.push_back(stage.stage);
            } else {
                off << QString::fromUtf8(stage_info(stage.stage).title.data(), static_cast<qsizetype>(stage_info(stage.stage).title.size()));
            }
        }
        QVERIFY(!off.isEmpty());
        QCOMPARE(plots.plots().size(), static_cast<qsizetype>(active.size()));
        for (qsizetype i = 0; i < plots.plots().size(); ++i) QCOMPARE(plots.plots()[i]->stage(), active[static_cast<std::size_t>(i)]);
        auto* note = plots.findChild<QLabel*>(QStringLiteral("off_stages"));
        QVERIFY(note);
        QCOMPARE(note->text(), QStringLiteral("Hidden, off: ") + off.join(QStringLiteral(", ")));
        // Every stage, in the run's order, when asked for.
        plots.setHideOff(false);
        plots.build();
        QCOMPARE(plots.plots().size(), static_cast<qsizetype>(run->trace.stages.size() - 2));
        for (qsizetype i = 0; i < plots.plots().size(); ++i) {
            QCOMPARE(plots.plots()[i]->stage(), run->trace.stages[static_cast<std::size_t>(i) + 1].stage);
        }
        QVERIFY(plots.plot(Stage::Xtc) && plots.plot(Stage::Dry));
        QVERIFY2(run->trace.stage(Stage::Xtc).active, qPrintable(plots.plot(Stage::Xtc)->titleText()));
        QVERIFY(notesOf(*plots.plot(Stage::Xtc)).contains(QStringLiteral("coin u = ")));
        QVERIFY(!plots.grab().isNull());
        plots.setTrace(nullptr, nullptr, QStringLiteral("No run"));
        QVERIFY(plots.plots().isEmpty());
    }
};

QTEST_MAIN(TestSamplerPlots)
#include "test_sampler_plots.moc"
