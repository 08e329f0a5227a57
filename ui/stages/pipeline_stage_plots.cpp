#include "ui/stages/pipeline_stage_plots.h"

#include <algorithm>

#include <QHBoxLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QScrollBar>
#include <QTimer>
#include <QVBoxLayout>

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
    auto* column = new QVBoxLayout(content_);
    column->setContentsMargins(2, 2, 2, 2);
    column->setSpacing(2);
    // The stages that did nothing, named in one line instead of a plot each (unless asked for).
    off_note_ = new QLabel(content_);
    off_note_->setObjectName(QStringLiteral("off_stages"));
    off_note_->setStyleSheet(QStringLiteral("color: #555555;"));
    off_note_->setWordWrap(true);  // a long list wraps under the plots' width rather than running off it
    off_note_->setVisible(false);
    column->addWidget(off_note_);
    row_ = new QHBoxLayout;
    row_->setContentsMargins(0, 0, 0, 0);
    row_->setSpacing(6);
    column->addLayout(row_, 1);
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
    off_note_->setVisible(false);
    message_->setText(trace_ ? QString() : message);
    message_->setVisible(!trace_);
    if (isVisible()) build();
    fitHeights();
}

void PipelineStagePlots::setHideOff(bool hide) {
    if (hide == hide_off_) return;
    hide_off_ = hide;
    setTrace(trace_, labels_);
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
    QStringList off;
    QStringList reasons;
    for (const auto& stage : trace_->trace.stages) {
        if (stage.stage == Stage::Widen || stage.stage == Stage::Draw) continue;
        if (hide_off_ && !stage.active) {
            const QString title = QString::fromUtf8(stage_info(stage.stage).title.data(),
                                                    static_cast<qsizetype>(stage_info(stage.stage).title.size()));
            off << title;
            reasons << title + QStringLiteral(": ") + inactiveReason(view->trace ? *view->trace : trace_->trace, stage.stage).replace(QLatin1Char('\n'), QLatin1Char(' '));
            continue;
        }
        auto* plot = new StagePlot(stage.stage, content_);
        // A stage that is off holds only its reason in words: it needs less room.
        plot->setFixedWidth(stage.active ? kPlotWidth : kOffPlotWidth);
        plot->showView(view, -1, false);
        row_->addWidget(plot);
        plots_.append(plot);
    }
    off_note_->setText(off.isEmpty() ? QString() : QStringLiteral("Hidden, off: ") + off.join(QStringLiteral(", ")));
    off_note_->setToolTip(reasons.join(QLatin1Char('\n')));
    off_note_->setVisible(!off.isEmpty());
    fitHeights();
    // Once laid out (the plots' positions are known).
    QTimer::singleShot(0, this, &PipelineStagePlots::scrollToSampler);
}

// The plots fill the height on show (a horizontal scroll bar takes its share) and never shrink below legible.
void PipelineStagePlots::fitHeights() {
    const int height = std::max(kMinHeight, viewport()->height());
    const int note = off_note_->isHidden() ? 0 : off_note_->sizeHint().height() + 2;
    for (auto* plot : plots_) plot->setFixedHeight(height - 4 - note);
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
