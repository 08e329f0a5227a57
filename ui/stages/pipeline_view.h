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

private:
    static constexpr int kMaxColumns = 4;
    void placePlots(int columns);

    QGridLayout* grid_ = nullptr;
    QScrollArea* scroll_ = nullptr;
    int columns_ = 0;
    std::vector<StagePlot*> plots_;
    DrawPlot* draw_;
    QSpinBox* top_n_;
    QCheckBox* log_scale_;
    QComboBox* view_mode_;
};

}  // namespace samplescope::ui
