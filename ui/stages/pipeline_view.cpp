#include "ui/stages/pipeline_view.h"

#include <algorithm>
#include <cmath>

#include <QResizeEvent>
#include <QScrollBar>

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QScrollArea>
#include <QVBoxLayout>

#include "ui/common/font_scale.h"

namespace samplescope::ui {

namespace {

// Right-click on any plot offers its export (and, on a stage plot, its two views).
void addExportMenu(PipelineView* view, QCustomPlot* plot) {
    plot->setContextMenuPolicy(Qt::CustomContextMenu);
    QObject::connect(plot, &QWidget::customContextMenuRequested, view, [view, plot](const QPoint& at) {
        QMenu menu;
        if (auto* stage_plot = qobject_cast<StagePlot*>(plot)) {
            for (const PlotMode mode : {PlotMode::Bars, PlotMode::Vocabulary}) {
                QAction* action = menu.addAction(plotModeName(mode), stage_plot, [stage_plot, mode] { stage_plot->setModeOverride(mode); });
                action->setCheckable(true);
                action->setChecked(stage_plot->mode() == mode);
            }
            menu.addSeparator();
        }
        menu.addAction(QStringLiteral("Export this plot (PNG or PDF)..."), view,
                       [view, plot] { emit view->exportPlotRequested(plot); });
        menu.exec(plot->mapToGlobal(at));
    });
}

}  // namespace

PipelineView::PipelineView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("pipeline_view"));
    top_n_ = new QSpinBox(this);
    top_n_->setObjectName(QStringLiteral("top_n"));
    top_n_->setRange(2, 2000);
    top_n_->setValue(30);
    top_n_->setToolTip(QStringLiteral("Bars per plot: the first N tokens by rank; the rest are summed into one bar"));
    log_scale_ = new QCheckBox(QStringLiteral("Log scale"), this);
    log_scale_->setObjectName(QStringLiteral("log_scale"));
    log_scale_->setToolTip(QStringLiteral("Probability axis on a log scale, to see the tail"));
    view_mode_ = new QComboBox(this);
    view_mode_->setObjectName(QStringLiteral("plot_view"));
    view_mode_->addItem(QStringLiteral("Per stage"));
    view_mode_->addItem(plotModeName(PlotMode::Bars));
    view_mode_->addItem(plotModeName(PlotMode::Vocabulary));
    view_mode_->setToolTip(QStringLiteral("Per stage: the whole vocabulary where a stage cuts a broad row (raw logits, top-k, "
                                          "top-p, min-p with more candidates than N), bars elsewhere. Right-click a plot "
                                          "to switch it alone."));
    hide_off_ = new QCheckBox(QStringLiteral("Hide off stages"), this);
    hide_off_->setObjectName(QStringLiteral("hide_off_stages"));
    hide_off_->setChecked(true);
    hide_off_->setToolTip(QStringLiteral("A stage that did nothing (its parameter at its off value, or skipped after "
                                         "greedy) gets no cell, so the stages at work, the final distribution and "
                                         "the draw fit one screen. Untick to see each one and why it is off."));
    off_note_ = new QLabel(this);
    off_note_->setObjectName(QStringLiteral("off_stages"));
    off_note_->setStyleSheet(QStringLiteral("color: #555555;"));
    off_note_->setTextFormat(Qt::PlainText);
    // Elided rather than widening the row: the full list and each reason are in its tooltip.
    off_note_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    off_note_->setMinimumWidth(60);
    auto* hint = new QLabel(QStringLiteral("<span style='text-decoration: underline dotted'>How to read</span>"), this);
    hint->setObjectName(QStringLiteral("plots_hint"));
    hint->setStyleSheet(QStringLiteral("color: #555555;"));
    hint->setToolTip(QStringLiteral("Blue: kept, q after the stage; grey, hatched: dropped, q before it; vermillion: "
                                    "the chosen token. Shaded: the kept ranks. Hover for a token's numbers, click to "
                                    "select it, right-click a plot to switch its view or export it. Help > Glossary "
                                    "says what each term means."));
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(QStringLiteral("Show top N:"), this));
    controls->addWidget(top_n_);
    controls->addWidget(log_scale_);
    controls->addWidget(new QLabel(QStringLiteral("View:"), this));
    controls->addWidget(view_mode_);
    controls->addWidget(hide_off_);
    controls->addWidget(off_note_, 1);
    controls->addWidget(hint);

    auto* grid_host = new QWidget(this);
    grid_ = new QGridLayout(grid_host);
    grid_->setSpacing(6);
    grid_->setContentsMargins(0, 0, 0, 0);
    for (const auto& info : kStages) {
        if (info.stage == Stage::Draw || !info.contract) continue;
        auto* plot = new StagePlot(info.stage, grid_host);
        plots_.push_back(plot);
        connect(plot, &StagePlot::modeOverrideChanged, this, &PipelineView::plotModesChanged);
        connect(plot, &StagePlot::tokenClicked, this, &PipelineView::tokenClicked);
        addExportMenu(this, plot);
    }
    draw_ = new DrawPlot(grid_host);
    connect(draw_, &DrawPlot::tokenClicked, this, &PipelineView::tokenClicked);
    addExportMenu(this, draw_);
    placePlots(kMaxColumns);

    auto* scroll = new QScrollArea(this);
    scroll_ = scroll;
    scroll->setWidget(grid_host);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    layout->addWidget(scroll, 1);

    connect(top_n_, qOverload<int>(&QSpinBox::valueChanged), this, &PipelineView::topNChanged);
    connect(log_scale_, &QCheckBox::toggled, this, &PipelineView::logScaleChanged);
    connect(hide_off_, &QCheckBox::toggled, this, [this] {
        placePlots(columns_, true);
        showOffNote();
    });
    connect(view_mode_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int index) {
        const std::optional<PlotMode> mode =
            index == 1 ? std::optional<PlotMode>(PlotMode::Bars)
                       : (index == 2 ? std::optional<PlotMode>(PlotMode::Vocabulary) : std::nullopt);
        for (auto* plot : plots_) plot->setModeOverride(mode);
    });
}

bool PipelineView::hidden(const StagePlot* plot) const {
    return hide_off_->isChecked() && view_ && !view_->plot(plot->stage()).active;
}

void PipelineView::placePlots(int columns, bool force) {
    std::vector<const StagePlot*> shown;
    for (const auto* plot : plots_) {
        if (!hidden(plot)) shown.push_back(plot);
    }
    if (columns == columns_ && shown == laid_out_ && !force) return;
    columns_ = columns;
    laid_out_ = shown;
    for (auto* plot : plots_) grid_->removeWidget(plot);
    grid_->removeWidget(draw_);
    int cell = 0;
    for (auto* plot : plots_) {
        if (hidden(plot)) {
            plot->hide();
            continue;
        }
        // A plot that was hidden draws the trace on show now (hidden ones are not drawn).
        if (plot->isHidden() && view_) plot->showView(view_, selected_, logScale());
        plot->show();
        grid_->addWidget(plot, cell / columns, cell % columns);
        ++cell;
    }
    // The draw closes the last row (or takes a row of its own when the plots fill it).
    const int last_row_used = cell % columns;
    grid_->addWidget(draw_, cell / columns, last_row_used, 1, columns - last_row_used);
    for (int c = 0; c < kMaxColumns; ++c) grid_->setColumnStretch(c, c < columns ? 1 : 0);
    fitHeights();
}

// Rows that fit the view at kCompactHeight share its height; more rows keep kPlotHeight and scroll.
void PipelineView::fitHeights() {
    if (!scroll_) return;  // during construction
    const int cells = static_cast<int>(laid_out_.size()) + 1;
    const int rows = (cells + std::max(1, columns_) - 1) / std::max(1, columns_);
    const int spacing = grid_->spacing();
    const int room = scroll_->viewport()->height();
    // Both heights grow with the font scale: a plot's text needs them.
    const int compact = static_cast<int>(std::lround(kCompactHeight * fontScale()));
    const int full = static_cast<int>(std::lround(kPlotHeight * fontScale()));
    const int height = rows * compact + (rows - 1) * spacing <= room ? compact : full;
    for (auto* plot : allPlots()) plot->setMinimumHeight(height);
}

void PipelineView::showOffNote() {
    QStringList names;
    QStringList reasons;
    if (view_) {
        for (const auto* plot : plots_) {
            if (view_->plot(plot->stage()).active) continue;
            const QString title = plot->stageTitle();
            names << title;
            reasons << QStringLiteral("%1: %2").arg(title, inactiveReason(*view_->trace, plot->stage()).replace(QLatin1Char('\n'), QLatin1Char(' ')));
        }
    }
    const bool hiding = hide_off_->isChecked();
    off_note_->setText(names.isEmpty() ? QString()
                                       : (hiding ? QStringLiteral("Hidden, off: ") : QStringLiteral("Off: ")) +
                                             names.join(QStringLiteral(", ")));
    off_note_->setToolTip(reasons.join(QLatin1Char('\n')));
}

void PipelineView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) fitHeights();
}

void PipelineView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    // As many columns of plots at their minimum width as the view holds (a laptop's 1280 px window: three),
    // so no plot is cut at the right edge.
    const int spacing = grid_->spacing();
    const QMargins margins = layout()->contentsMargins();
    const int room = width() - margins.left() - margins.right() - scroll_->verticalScrollBar()->sizeHint().width();
    const int columns = std::clamp((room + spacing) / (draw_->minimumWidth() + spacing), 1, kMaxColumns);
    if (columns != columns_) {
        placePlots(columns);
    } else {
        fitHeights();
    }
}

std::vector<std::optional<PlotMode>> PipelineView::plotModes() const {
    std::vector<std::optional<PlotMode>> modes(kStageCount);
    for (const auto* plot : plots_) modes[static_cast<std::size_t>(plot->stage())] = plot->modeOverride();
    return modes;
}

void PipelineView::showView(const std::shared_ptr<const TraceView>& view, std::int32_t selected_id) {
    view_ = view;
    selected_ = selected_id;
    placePlots(columns_);
    // A hidden plot is not drawn: it draws the newest trace when it is shown again.
    for (auto* plot : plots_) {
        if (!hidden(plot)) plot->showView(view, selected_id, logScale());
    }
    draw_->showView(view, selected_id);
    showOffNote();
}

StagePlot* PipelineView::plot(Stage stage) const {
    for (auto* plot : plots_) {
        if (plot->stage() == stage) return plot;
    }
    return nullptr;
}

std::vector<QCustomPlot*> PipelineView::shownPlots() const {
    std::vector<QCustomPlot*> plots;
    for (auto* plot : plots_) {
        if (!hidden(plot)) plots.push_back(plot);
    }
    plots.push_back(draw_);
    return plots;
}

std::vector<QCustomPlot*> PipelineView::allPlots() const {
    std::vector<QCustomPlot*> plots(plots_.begin(), plots_.end());
    plots.push_back(draw_);
    return plots;
}

}  // namespace samplescope::ui
