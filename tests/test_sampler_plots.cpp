// The stages outside the contract (llama.cpp's extra samplers,
// docs/samplers.md), offscreen: for each, a pipeline that runs it with the
// stage on and off, its plot drawn from that trace without a throw, with its
// title, and its box in the pipeline comparison's stage strip.
#include <QtTest>

#include <memory>

#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"
#include "ui/common/trace_view.h"
#include "ui/pipelines/stage_strip.h"
#include "ui/stages/stage_plot.h"

using namespace samplescope;
using namespace samplescope::ui;

namespace {

// Parameters that switch every extra stage on.
SamplingParams every_stage_on() {
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
    return params;
}

std::shared_ptr<const TraceView> view_of(const SampleTrace& trace) {
    auto view = std::make_shared<TraceView>();
    view->trace = std::make_shared<const SampleTrace>(trace);
    view->labels = std::make_shared<const TokenLabels>();
    view->top_n = 10;
    for (const auto& stage : trace.stages) {
        if (stage.stage != Stage::Draw) view->stages.push_back(makeStagePlotData(trace, stage.stage, view->top_n));
    }
    return view;
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
                SamplingParams params = every_stage_on();
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
};

QTEST_MAIN(TestSamplerPlots)
#include "test_sampler_plots.moc"
