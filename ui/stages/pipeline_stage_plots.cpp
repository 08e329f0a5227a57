#include "ui/stages/pipeline_stage_plots.h"

#include <algorithm>

#include <QHBoxLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QScrollBar>
#include <QTimer>

#include "ui/common/trace_view.h"
#include "ui/stages/stage_plot.h"

namespace samplescope::ui {

namespace {

constexpr int kPlotWidth = 340;
constexpr int kOffPlotWidth = 300;
constexpr int kTopN = 10;
constexpr int kMinHeight = 400;

}  // namespace

PipelineStagePlots::PipelineStagePlots(QWidget* parent) : QScrollArea(parent) {
    setObjectName(QStringLiteral("pipeline_stage_plots"));
    // Tall enough for a stage plot's title, notes, axes and legend; the view around it scrolls.
    setMinimumHeight(kMinHeight + 24);
    setWidgetResizable(false);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    content_ = new QWidget;
    row_ = new QHBoxLayout(content_);
    row_->setContentsMargins(2, 2, 2, 2);
    row_->setSpacing(6);
    message_ = new QLabel(content_);
    message_->setWordWrap(true);
    row_->addWidget(message_);
    setWidget(content_);
}

void PipelineStagePlots::setTrace(std::shared_ptr<const PipelineTrace> trace, std::shared_ptr<const TokenLabels> labels,
                                  const QString& message) {
    trace_ = std::move(trace);
    labels_ = labels ? std::move(labels) : std::make_shared<const TokenLabels>();
    built_ = false;
    for (auto* plot : plots_) {
        // Hidden at once: deletion waits for the event loop, which a screenshot may not reach.
        plot->hide();
        plot->deleteLater();
    }
    plots_.clear();
    message_->setText(trace_ ? QString() : message);
    message_->setVisible(!trace_);
    if (isVisible()) build();
    fitHeights();
}

StagePlot* PipelineStagePlots::plot(Stage stage) const {
    for (auto* plot : plots_) {
        if (plot->stage() == stage) return plot;
    }
    return nullptr;
}

void PipelineStagePlots::build() {
    if (built_ || !trace_) return;
    built_ = true;
    auto view = std::make_shared<TraceView>();
    view->trace = std::make_shared<const SampleTrace>(trace_->trace);
    view->pipeline = trace_;
    view->labels = labels_;
    view->top_n = kTopN;
    RankOrders orders;
    for (const auto& stage : trace_->trace.stages) {
        if (stage.stage != Stage::Draw) {
            view->stages.push_back(makeStagePlotData(trace_->trace, stage.stage, view->top_n, -1, &orders));
        }
    }
    for (const auto& stage : trace_->trace.stages) {
        if (stage.stage == Stage::Widen || stage.stage == Stage::Draw) continue;
        auto* plot = new StagePlot(stage.stage, content_);
        // A stage that is off holds only its reason in words: it needs less room.
        plot->setFixedWidth(stage.active ? kPlotWidth : kOffPlotWidth);
        plot->showView(view, -1, false);
        row_->addWidget(plot);
        plots_.append(plot);
    }
    fitHeights();
    // Once laid out (the plots' positions are known).
    QTimer::singleShot(0, this, &PipelineStagePlots::scrollToSampler);
}

// The plots fill the height on show (a horizontal scroll bar takes its share) and never shrink below legible.
void PipelineStagePlots::fitHeights() {
    const int height = std::max(kMinHeight, viewport()->height());
    for (auto* plot : plots_) plot->setFixedHeight(height - 4);
    // The row's width from the plots themselves: the layout's own hint lags behind a rebuild.
    const QMargins margins = row_->contentsMargins();
    const auto count = static_cast<int>(plots_.size());
    int width = margins.left() + margins.right() + std::max(0, count - 1) * row_->spacing();
    for (const auto* plot : plots_) width += plot->width();
    content_->resize(std::max(plots_.isEmpty() ? 0 : width, viewport()->width()), height);
}

void PipelineStagePlots::showEvent(QShowEvent* event) {
    QScrollArea::showEvent(event);
    build();
    // Inside a view that scrolls (Compare pipelines on a small window), brought into sight once laid out.
    QTimer::singleShot(0, this, [this] {
        for (QWidget* up = parentWidget(); up; up = up->parentWidget()) {
            if (auto* area = qobject_cast<QScrollArea*>(up)) {
                area->ensureWidgetVisible(this, 0, 0);
                break;
            }
        }
    });
}

// The first of llama.cpp's own stages that is on (what this view is for; dynamic temperature counts) comes into sight.
void PipelineStagePlots::scrollToSampler() {
    if (!trace_) return;
    for (auto* plot : plots_) {
        const StageTrace& stage = trace_->trace.stage(plot->stage());
        const bool extra = !stage_info(plot->stage()).contract || stage.temperature_used.has_value();
        if (stage.active && extra) {
            horizontalScrollBar()->setValue(std::max(0, plot->x() - 8));
            return;
        }
    }
    horizontalScrollBar()->setValue(0);
}

void PipelineStagePlots::resizeEvent(QResizeEvent* event) {
    QScrollArea::resizeEvent(event);
    fitHeights();
}

}  // namespace samplescope::ui
