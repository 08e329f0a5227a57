// One stage of the pipeline, in one of two views. "Bars (top N)": the top N
// candidates of the stage in rank order, kept ones at their probability after the stage, dropped ones
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
#include "ui/stages/item_text.h"
#include "ui/stages/opaque_plot.h"

namespace samplescope::ui {

// "Bars (top N)" or "Whole vocabulary".
QString plotModeName(PlotMode mode);

// The view a stage opens in: the whole vocabulary for the raw logits and the
// truncation stages when they received more candidates than the N bars show
// (what a cut does to a broad row); bars otherwise (penalties, temperature,
// the final distribution, and any stage whose candidates all fit in the bars).
PlotMode defaultPlotMode(Stage stage, const StagePlotData& data, std::size_t top_n);

// The hover text of one candidate at `stage`: label, id, rank, logit at this
// stage, q before and after, kept or dropped; `bucket_*` name the ranks a
// downsampled point stands for (0: none).
QString candidateTooltip(Stage stage, const RankedToken& token, std::size_t rank, std::size_t candidates,
                         const QString& label, std::size_t bucket_first = 0, std::size_t bucket_last = 0);

class StagePlot : public OpaquePlot {
    Q_OBJECT
public:
    explicit StagePlot(Stage stage, QWidget* parent = nullptr);

    Stage stage() const { return stage_; }
    // "4. Greedy": the contract's stages numbered in its order (llama.cpp's extra stages carry no number).
    QString stageTitle() const;
    void showView(const std::shared_ptr<const TraceView>& view, std::int32_t selected_id, bool log_scale);

    // A view for this plot, or none to follow defaultPlotMode; redraws.
    void setModeOverride(std::optional<PlotMode> mode);
    std::optional<PlotMode> modeOverride() const { return override_; }
    // The view drawn last.
    PlotMode mode() const { return mode_; }
    // The hover text at a widget pixel; empty where no candidate is.
    QString tooltipAt(const QPointF& pixel) const;
    // The candidate at a widget pixel, -1 where none.
    std::int32_t idAt(const QPointF& pixel) const;
    // Every note, also when a short plot shows only the first line.
    QString fullNoteText() const { return notes_; }
    bool notesCollapsed() const { return notes_collapsed_; }
    // Whether the stage's summary line gave way to the data area (it is in the tooltip).
    bool summaryHidden() const { return summary_hidden_; }
    // Shorter still: the legend gives way too, and the tooltip names the marks.
    bool legendHidden() const { return legend_wanted_ && !legend->visible(); }
    // The smallest height the data area gets before notes move to the tooltip.
    static constexpr int kMinDataHeight = 110;

    // What is drawn, for tests and exports: null when not drawn.
    QCPBars* bars(const QString& name);
    QCPAbstractItem* item(const QString& name);
    QCPGraph* graphNamed(const QString& name);
    QString titleText() const;
    QString noteText() const;

signals:
    void tokenClicked(std::int32_t id);
    // The user chose a view for this plot (the whole vocabulary needs a curve the worker makes).
    void modeOverrideChanged();

protected:
    bool event(QEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    struct Hit {
        RankedToken token;
        std::size_t rank = 0;
        std::size_t bucket_first = 0;
        std::size_t bucket_last = 0;
    };
    std::optional<Hit> hitAt(const QPointF& pixel) const;
    void redraw();
    void drawVocabulary(const TraceView& view, const StagePlotData& stage_data, std::int32_t selected_id, bool log_scale);
    // A text placed after each layout at the first of `choices` (alignments
    // around an anchor in plot coordinates) that fits the data area clear of
    // the labels before it and of `obstacles`.
    struct Placed {
        ItemText* text = nullptr;
        QCPAxis* value_axis = nullptr;
        QPointF anchor;                  // key, value
        bool anchor_x_ratio = false;     // key is a ratio of the axis rect's width
        bool anchor_y_ratio = false;     // value is a ratio of its height (0 top)
        std::vector<Qt::Alignment> choices;
        bool avoid_bars = false;
    };
    ItemText* placedText(const QString& name, const QString& text, QCPAxis* value_axis, QPointF anchor,
                            std::vector<Qt::Alignment> choices, bool avoid_bars);
    void placeLabels();     // after each layout
    void fitToSpace();      // before each layout: legend columns, notes, tick labels
    std::vector<QRectF> obstacleRects() const;
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

    // Everything a drawing depends on; an unchanged plot is not redrawn (a
    // top-p change leaves the five plots before it as they were).
    // A stage's data as drawn, read in place in the view that holds it (a copy
    // of a whole-vocabulary curve at every trace costs more than the comparison).
    struct ShownData {
        std::shared_ptr<const TraceView> view;
        const StagePlotData* data = nullptr;
        const StagePlotData& operator*() const { return *data; }
        const StagePlotData* operator->() const { return data; }
        bool operator==(const ShownData& other) const { return data == other.data || *data == *other.data; }
    };
    struct Drawn {
        ShownData data;
        std::int32_t token = -1;
        std::int32_t selected = -1;
        bool log_scale = false;
        const void* labels = nullptr;
        QString inactive_reason;
        std::vector<double> thresholds;
        const void* pipeline = nullptr;
        PlotMode mode = PlotMode::Bars;
        bool operator==(const Drawn&) const = default;
    };
    std::optional<Drawn> drawn_;

    Stage stage_;
    QCPTextElement* title_ = nullptr;
    QCPTextElement* subtitle_ = nullptr;
    QCPTextElement* info_ = nullptr;  // counts and threshold values, in words
    std::vector<std::int32_t> ids_by_key_;  // bar key (1-based rank) -> id, for clicks
    std::shared_ptr<const TraceView> view_;
    std::int32_t selected_ = -1;
    bool log_scale_ = false;
    std::optional<PlotMode> override_;
    PlotMode mode_ = PlotMode::Bars;
    QString notes_;                 // every note, one a line, unwrapped
    QString summary_;               // the stage's summary, unwrapped
    bool notes_collapsed_ = false;
    bool summary_hidden_ = false;
    QCPLayoutGrid* legend_row_ = nullptr;
    void placeLegend(bool shown);  // out of its row when hidden, so the row takes no height
    bool legend_wanted_ = true;  // an active stage's plot has a legend; fitToSpace shows it where it fits
    QString tip_;                   // the formula tip
    std::vector<Placed> placed_;
    std::vector<QPointF> markers_;  // plot coordinates (key, value on yAxis2 when the flag says) of markers labels avoid
    std::vector<bool> marker_on_y2_;
    QSharedPointer<QCPAxisTicker> label_ticker_;  // bars: token labels (or ranks) and the summed bars
    QSharedPointer<QCPAxisTicker> rank_ticker_;   // bars: ranks only, where token labels would run together
    std::size_t labelled_bars_ = 0;               // bars whose ticks are token labels (0: ranks)
};

// Breaks text into lines of at most `width` characters at spaces.
QString wrapWords(const QString& text, int width);

// Why a stage did nothing, in words ("Off: top_k = 0 ...").
QString inactiveReason(const SampleTrace& trace, Stage stage);

}  // namespace samplescope::ui
