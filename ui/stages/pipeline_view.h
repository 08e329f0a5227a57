// Every stage of the pipeline in order, one plot each (generated from
// kStages), then the draw; with the top-N and log-scale controls.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <QCheckBox>
#include <QComboBox>
#include <QSpinBox>
#include <QGridLayout>
#include <QLabel>
#include <QScrollArea>
#include <QWidget>

#include "ui/stages/draw_plot.h"
#include "ui/stages/stage_plot.h"

namespace samplescope::ui {

class PipelineView : public QWidget {
    Q_OBJECT
public:
    explicit PipelineView(QWidget* parent = nullptr);

    void showView(const std::shared_ptr<const TraceView>& view, std::int32_t selected_id);
    StagePlot* plot(Stage stage) const;
    DrawPlot* drawPlot() const { return draw_; }
    std::vector<QCustomPlot*> allPlots() const;

    QSpinBox* topNBox() const { return top_n_; }
    QCheckBox* logScaleBox() const { return log_scale_; }
    // "Per stage" (each plot's default), "Bars (top N)" or "Whole vocabulary" for every plot.
    QComboBox* viewBox() const { return view_mode_; }
    // "Hide off stages" (on by default): a stage that did nothing gets no cell, only a word in offNote().
    QCheckBox* hideOffBox() const { return hide_off_; }
    QLabel* offNote() const { return off_note_; }
    // The plots laid out now, in order (the draw last); a hidden stage is not among them.
    std::vector<QCustomPlot*> shownPlots() const;
    // A plot's height (times the font scale) where the plots on show fit the view in rows of this
    // height (a laptop's 1280 x 720: three rows); below it they keep kPlotHeight and the view scrolls.
    static constexpr int kCompactHeight = 176;
    static constexpr int kPlotHeight = 250;
    std::size_t topN() const { return static_cast<std::size_t>(top_n_->value()); }
    bool logScale() const { return log_scale_->isChecked(); }

    // Each stage's chosen view (nothing: its default), indexed by Stage: what the worker makes curves for.
    std::vector<std::optional<PlotMode>> plotModes() const;

signals:
    void plotModesChanged();
    void topNChanged(int n);
    void logScaleChanged(bool on);
    void tokenClicked(std::int32_t id);
    void exportPlotRequested(QCustomPlot* plot);

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    static constexpr int kMaxColumns = 4;
    void placePlots(int columns, bool force = false);
    void fitHeights();
    void showOffNote();
    bool hidden(const StagePlot* plot) const;

    QGridLayout* grid_ = nullptr;
    QScrollArea* scroll_ = nullptr;
    int columns_ = 0;
    std::vector<StagePlot*> plots_;
    DrawPlot* draw_;
    QSpinBox* top_n_;
    QCheckBox* log_scale_;
    QComboBox* view_mode_;
    QCheckBox* hide_off_;
    QLabel* off_note_;
    std::vector<const StagePlot*> laid_out_;     // the stage plots in the grid
    std::shared_ptr<const TraceView> view_;       // the trace on show (a plot shown again draws it)
    std::int32_t selected_ = -1;
};

}  // namespace samplescope::ui
