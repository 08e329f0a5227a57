// One stage of the pipeline as a bar chart: the top N candidates of the stage
// in rank order, kept ones at their probability after the stage, dropped ones
// greyed and hatched at the probability they had coming in, one aggregate bar
// per kind for everything beyond N, and the stage's own threshold drawn
// (k-th logit, cumulative curve with p and the crossing token, min-p floor;
// llama.cpp's DRY penalties with their repeat lengths, XTC's threshold, coin
// and removed set, mirostat's mu, dynamic temperature's entropy and range).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <qcustomplot.h>

#include "engine/core/stage.h"
#include "ui/common/trace_view.h"

namespace samplescope::ui {

class StagePlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit StagePlot(Stage stage, QWidget* parent = nullptr);

    Stage stage() const { return stage_; }
    void showView(const std::shared_ptr<const TraceView>& view, std::int32_t selected_id, bool log_scale);

    // What is drawn, for tests and exports: null when not drawn.
    QCPBars* bars(const QString& name);
    QCPAbstractItem* item(const QString& name);
    QCPGraph* graphNamed(const QString& name);
    QString titleText() const;
    QString noteText() const;

signals:
    void tokenClicked(std::int32_t id);

private:
    void drawInactive(const TraceView& view);
    void drawThreshold(const TraceView& view, const StagePlotData& stage_data);
    QCPItemStraightLine* thresholdLine(double y, QCPAxis* value_axis, const QString& text);
    void drawDry(const TraceView& view, const StagePlotData& stage_data);
    void drawXtc(const TraceView& view, const StagePlotData& stage_data);
    void drawMirostat(const TraceView& view, const StagePlotData& stage_data);
    void drawDynamicTemperature(const TraceView& view, const StagePlotData& stage_data);
    // The stage's formula with these parameters, for the plot's tooltip.
    QString formulaTip(const SamplingParams& params) const;
    void addNote(const QString& text);
    QCPBars* addBars(const QString& name, const QString& legend, const QBrush& brush, const QPen& pen);
    void onPlottableClick(QCPAbstractPlottable* plottable, int index, QMouseEvent* event);

    // Everything a drawing depends on; an unchanged plot is not redrawn (a
    // top-p change leaves the five plots before it as they were).
    struct Drawn {
        StagePlotData data;
        std::int32_t token = -1;
        std::int32_t selected = -1;
        bool log_scale = false;
        const void* labels = nullptr;
        QString inactive_reason;
        std::vector<double> thresholds;
        const void* pipeline = nullptr;
        bool operator==(const Drawn&) const = default;
    };
    std::optional<Drawn> drawn_;

    Stage stage_;
    QCPTextElement* title_ = nullptr;
    QCPTextElement* subtitle_ = nullptr;
    QCPTextElement* info_ = nullptr;  // counts and threshold values, in words
    std::vector<std::int32_t> ids_by_key_;  // bar key (1-based rank) -> id, for clicks
};

// Breaks text into lines of at most `width` characters at spaces.
QString wrapWords(const QString& text, int width);

// Why a stage did nothing, in words ("Off: top_k = 0 ...").
QString inactiveReason(const SampleTrace& trace, Stage stage);

}  // namespace samplescope::ui
