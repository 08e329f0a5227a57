#include "ui/stages/stage_plot.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <QHash>
#include <QHelpEvent>
#include <QLocale>
#include <QPainter>
#include <QPixmap>
#include <QToolTip>

#include "engine/base/input_error.h"
#include "ui/common/count_text.h"
#include "ui/common/font_scale.h"
#include "ui/common/palette.h"
#include "ui/stages/axis_label.h"
#include "ui/stages/legend_item.h"
#include "ui/stages/scatter_marks.h"
#include "ui/stages/text_cache.h"
#include "ui/stages/text_element.h"

namespace samplescope::ui {

namespace {

// The lines drawn many times a plot (the bars' "q before" outlines, the whole-vocabulary
// curves) are 1 px wide: the raster engine strokes a line up to 1 px with its cosmetic
// stroker and a wider one by building and filling its outline, about fifty times the cost
// (at 1.2 to 1.6 px these lines were a third of redrawing every stage plot).
// "q before": dashes of 2 px, as the 1.2 px dotted outline read, not the grid's 1 px dots.
QPen beforePen() {
    QPen pen(palette::kBlack, 1.0, Qt::CustomDashLine);
    pen.setDashPattern({2.0, 2.0});
    return pen;
}

QString num(double value, int digits = 4) { return QString::number(value, 'g', digits); }

// Labels on the x axis only while they stay readable; beyond that, ranks.
constexpr std::size_t kMaxLabelledBars = 16;

// Large counts in a few characters, for tick labels: 128,156 -> 128.2k.
QString compactCount(std::size_t n) {
    if (n < 10000) return groupedNumber(n);
    if (n < 1000000) return QString::number(static_cast<double>(n) / 1000.0, 'f', 1) + QLatin1Char('k');
    return QString::number(static_cast<double>(n) / 1e6, 'f', 2) + QLatin1Char('M');
}

// The value of the stage's own (first) parameter: top_k, top_p, min_p, typical_p, top_n_sigma.
double ownValue(Stage stage, const SamplingParams& params) {
    const auto& rows = stage_info(stage).params;
    return rows.empty() ? 0.0 : param_value(params, rows.front().param);
}

// The pipeline's report note for `stage` ("skipped: with mirostat ..."), where the view has one.
QString stepNote(const TraceView& view, Stage stage) {
    if (!view.pipeline) return QString();
    const auto& stages = view.pipeline->trace.stages;
    for (std::size_t i = 0; i < stages.size() && i < view.pipeline->reports.size(); ++i) {
        if (stages[i].stage == stage) return QString::fromStdString(view.pipeline->reports[i].note);
    }
    return QString();
}

// The first few (label q) pairs of a distribution by q desc, for a note.
QString topOf(const IdList& ids, const Values& probs, const TokenLabels& labels, std::size_t count) {
    std::vector<std::size_t> order(ids.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&probs](std::size_t a, std::size_t b) { return probs[a] > probs[b]; });
    QStringList parts;
    for (std::size_t i = 0; i < order.size() && i < count; ++i) {
        parts << QStringLiteral("%1 %2").arg(QString::fromStdString(labels.label(ids[order[i]])), num(probs[order[i]], 3));
    }
    if (order.size() > count) parts << QStringLiteral("...");
    return parts.join(QStringLiteral(", "));
}

}  // namespace

// Breaks text into lines of at most `width` characters at spaces.
QString wrapWords(const QString& text, int width) {
    QStringList lines;
    QString line;
    for (const QString& word : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        if (!line.isEmpty() && line.size() + 1 + word.size() > width) {
            lines << line;
            line.clear();
        }
        line += (line.isEmpty() ? QString() : QStringLiteral(" ")) + word;
    }
    if (!line.isEmpty()) lines << line;
    return lines.join(QLatin1Char('\n'));
}

QString inactiveReason(const SampleTrace& trace, Stage stage) {
    const SamplingParams& p = trace.params;
    if (trace.greedy && stage >= Stage::Temperature && stage <= Stage::Softmax) {
        return QStringLiteral("Skipped: greedy (T = 0) takes the argmax.\nNo draw; temperature, truncation and "
                              "softmax do not run.");
    }
    // The words are the stage's own (its descriptor, engine/stages/stage_*.cpp).
    const auto& info = stage_info(stage);
    return info.off_reason ? QString::fromStdString(info.off_reason(p, trace.vocab_size)) : QStringLiteral("Off.");
}

QString plotModeName(PlotMode mode) {
    return mode == PlotMode::Bars ? QStringLiteral("Bars (top N)") : QStringLiteral("Whole vocabulary");
}

namespace {

// A probability axis, linear or log: its ticker, number format and label (the caller sets the range).
void probabilityAxis(QCPAxis* axis, bool log) {
    axis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    axis->setTicker(log ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog) : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    axis->setNumberFormat(log ? QStringLiteral("eb") : QStringLiteral("g"));
    axis->setNumberPrecision(log ? 0 : 3);
    axis->setLabel(log ? QStringLiteral("probability (log)") : QStringLiteral("probability"));
}

// A logit axis: linear, its own label (the caller sets the range).
void logitAxis(QCPAxis* axis) {
    axis->setScaleType(QCPAxis::stLinear);
    axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    axis->setNumberFormat(QStringLiteral("g"));
    axis->setNumberPrecision(4);
    axis->setLabel(QStringLiteral("logit (as given)"));
}

}  // namespace

PlotMode defaultPlotMode(Stage stage, const StagePlotData& data, std::size_t top_n) {
    return data.curve.candidates > 0 && vocabularyByDefault(stage, data.candidates, top_n) ? PlotMode::Vocabulary
                                                                                           : PlotMode::Bars;
}

QString candidateTooltip(Stage stage, const RankedToken& token, std::size_t rank, std::size_t candidates,
                         const QString& label, std::size_t bucket_first, std::size_t bucket_last) {
    const auto& info = stage_info(stage);
    const QString title = QString::fromUtf8(info.title.data(), static_cast<int>(info.title.size()));
    QStringList lines;
    lines << QStringLiteral("<b>%1</b> (id %2)").arg(label.toHtmlEscaped(), groupedNumber(static_cast<std::size_t>(token.id)));
    lines << QStringLiteral("rank %1 of %2 candidates").arg(groupedNumber(rank), groupedNumber(candidates));
    lines << QStringLiteral("logit at this stage: %1").arg(exactNumber(token.logit));
    lines << QStringLiteral("q before: %1").arg(exactNumber(token.prob_before));
    lines << QStringLiteral("q after: %1").arg(token.kept ? exactNumber(token.prob_after) : QStringLiteral("dropped"));
    lines << (token.kept ? QStringLiteral("kept by %1").arg(title) : QStringLiteral("dropped by %1").arg(title));
    if (bucket_last > bucket_first) {
        lines << QStringLiteral("<i>drawn for ranks %1 to %2: the largest q among them</i>")
                     .arg(groupedNumber(bucket_first), groupedNumber(bucket_last));
    }
    return lines.join(QStringLiteral("<br>"));
}

StagePlot::StagePlot(Stage stage, QWidget* parent) : OpaquePlot(parent), stage_(stage) {
    const auto& info = stage_info(stage);
    setObjectName(QStringLiteral("stage_plot_%1").arg(QString::fromUtf8(info.name.data(), static_cast<int>(info.name.size()))));
    setMinimumSize(250, 250);
    setNoAntialiasingOnDrag(true);
    setAntialiasedElements(QCP::aeNone);
    setAntialiasedElement(QCP::aeItems, true);
    setAntialiasedElement(QCP::aePlottables, true);
    for (QCPAxis* axis : axisRect()->axes()) useCachedAxisLabel(axis);  // titles from the cache (axis_label.h)

    QFont title_font = font();
    title_font = scaledFont(title_font, 10);
    title_font.setBold(true);
    QFont subtitle_font = font();
    subtitle_font = scaledFont(subtitle_font, 8.5);
    plotLayout()->insertRow(0);
    plotLayout()->insertRow(1);
    plotLayout()->insertRow(2);
    title_ = new TextElement(this, QString(), title_font);
    summary_ = QString::fromUtf8(info.summary.data(), static_cast<int>(info.summary.size()));
    subtitle_ = new TextElement(this, wrapWords(summary_, 52), subtitle_font);
    subtitle_->setTextColor(QColor(0x44, 0x44, 0x44));
    info_ = new TextElement(this, QString(), subtitle_font);
    info_->setTextColor(palette::kOrange.darker(170));
    plotLayout()->addElement(0, 0, title_);
    plotLayout()->addElement(1, 0, subtitle_);
    plotLayout()->addElement(2, 0, info_);

    // The legend goes under the plot, in one row, so it never hides a bar.
    legend->setVisible(true);
    QFont legend_font = font();
    legend_font = scaledFont(legend_font, 8);
    legend->setFont(legend_font);
    legend->setIconSize(18, 10);
    legend->setBorderPen(Qt::NoPen);
    legend->setRowSpacing(0);
    legend->setColumnSpacing(8);
    axisRect()->insetLayout()->take(legend);
    // A layout column is capped by the largest size of its elements, and a
    // legend's is the width of its items: alone in the plot's column it would
    // shrink the whole plot to that width. Spacers either side keep it centred.
    legend_row_ = new QCPLayoutGrid;
    plotLayout()->addElement(4, 0, legend_row_);
    legend_row_->addElement(0, 0, new QCPLayoutElement(this));
    legend_row_->addElement(0, 1, legend);
    legend_row_->addElement(0, 2, new QCPLayoutElement(this));
    legend_row_->setColumnSpacing(0);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(3);
    for (int row : {0, 1, 2, 4}) plotLayout()->setRowStretchFactor(row, 0.001);
    plotLayout()->setRowSpacing(2);

    QFont tick_font = font();
    tick_font = scaledFont(tick_font, 8);
    for (QCPAxis* axis : {xAxis, yAxis, yAxis2}) {
        axis->setTickLabelFont(tick_font);
        QFont label_font = font();
        label_font = scaledFont(label_font, 8.5);
        axis->setLabelFont(label_font);
    }
    yAxis->setLabel(QStringLiteral("probability"));
    connect(this, &QCustomPlot::beforeReplot, this, &StagePlot::fitToSpace);
    connect(this, &QCustomPlot::afterLayout, this, &StagePlot::placeLabels);
}

QString StagePlot::stageTitle() const {
    const auto& info = stage_info(stage_);
    // The contract's stages are numbered in its order (the main view's grid);
    // llama.cpp's extra stages, shown in pipelines only, carry no number.
    int position = 1;
    for (const auto& other : kStages) {
        if (other.stage == stage_) break;
        position += other.contract ? 1 : 0;
    }
    const QString title = QString::fromUtf8(info.title.data(), static_cast<int>(info.title.size()));
    return info.contract ? QString::number(position) + QStringLiteral(". ") + title : title;
}

QCPBars* StagePlot::addBars(const QString& name, const QString& legend_text, const QBrush& brush, const QPen& pen) {
    auto* bars = new QCPBars(xAxis, yAxis);
    bars->setObjectName(name);
    bars->setName(legend_text);
    bars->setBrush(brush);
    bars->setPen(pen);
    bars->setWidth(0.78);
    return bars;
}

QCPBars* StagePlot::bars(const QString& name) {
    for (int i = 0; i < plottableCount(); ++i) {
        if (auto* b = qobject_cast<QCPBars*>(plottable(i)); b && b->objectName() == name) return b;
    }
    return nullptr;
}

QCPGraph* StagePlot::graphNamed(const QString& name) {
    for (int i = 0; i < graphCount(); ++i) {
        if (graph(i)->objectName() == name) return graph(i);
    }
    return nullptr;
}

QCPAbstractItem* StagePlot::item(const QString& name) {
    for (int i = 0; i < itemCount(); ++i) {
        if (QCustomPlot::item(i)->objectName() == name) return QCustomPlot::item(i);
    }
    return nullptr;
}

QString StagePlot::titleText() const { return title_->text(); }
QString StagePlot::noteText() const { return notes_; }

void StagePlot::addNote(const QString& text) {
    // Wrapped to the plot's width at each layout (fitToSpace).
    notes_ = notes_.isEmpty() ? text : notes_ + QLatin1Char('\n') + text;
    info_->setText(notes_);
    notes_collapsed_ = false;
}

void StagePlot::drawInactive(const TraceView& view) {
    for (QCPAxis* axis : {xAxis, yAxis, yAxis2}) axis->setVisible(false);
    auto* text = new ItemText(this);
    text->setObjectName(QStringLiteral("inactive"));
    text->position->setType(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(0.5, 0.5);
    text->setPositionAlignment(Qt::AlignCenter);
    text->setTextAlignment(Qt::AlignCenter);
    QFont big = font();
    big = scaledFont(big, 9);
    text->setFont(big);
    text->setColor(QColor(0x55, 0x55, 0x55));
    QStringList lines;
    QString reason = inactiveReason(*view.trace, stage_);
    if (const QString note = stepNote(view, stage_); !note.isEmpty()) reason += QStringLiteral("\nThis run: ") + note + QLatin1Char('.');
    for (const QString& line : reason.split(QLatin1Char('\n'))) lines << wrapWords(line, 34);
    text->setText(lines.join(QLatin1Char('\n')));
    text->setClipToAxisRect(false);
    legend_wanted_ = false;
    legend->setVisible(false);
    axisRect()->setBackground(QBrush(QColor(0xF4, 0xF4, 0xF4)));
}

void StagePlot::setModeOverride(std::optional<PlotMode> mode) {
    if (override_ == mode) return;
    override_ = mode;
    redraw();
    emit modeOverrideChanged();
}

void StagePlot::redraw() {
    drawn_.reset();
    showView(view_, selected_, log_scale_);
}

void StagePlot::showView(const std::shared_ptr<const TraceView>& view_ptr, std::int32_t selected_id, bool log_scale) {
    view_ = view_ptr;
    selected_ = selected_id;
    log_scale_ = log_scale;
    if (view_ptr) {
        const SampleTrace& trace = *view_ptr->trace;
        const StageTrace& stage = trace.stage(stage_);
        Drawn next{ShownData{view_ptr, &view_ptr->plot(stage_)}, trace.token, selected_id, log_scale, view_ptr->labels.get(),
                   stage.active ? QString() : inactiveReason(trace, stage_), {}};
        next.mode = override_.value_or(defaultPlotMode(stage_, *next.data, view_ptr->top_n));
        if (next.data->curve.candidates == 0) next.mode = PlotMode::Bars;  // no curve was made
        for (const auto& value : {stage.kth_logit, stage.crossing_mass, stage.prob_floor, stage.max_prob}) {
            next.thresholds.push_back(value.value_or(-1.0));
        }
        next.thresholds.push_back(stage.crossing_rank ? static_cast<double>(*stage.crossing_rank) : -1.0);
        const PlotMark mark = stage_info(stage_).mark;
        // The threshold kinds whose marks print the stage's own parameter.
        if (stage.active && (mark == PlotMark::KthLogit || mark == PlotMark::CumulativeMass || mark == PlotMark::ProbFloor)) {
            next.thresholds.push_back(ownValue(stage_, trace.params));
        }
        if (stage.active && mark == PlotMark::CumulativeMass && stage.walk_mass) {
            next.thresholds.insert(next.thresholds.end(), stage.walk_mass->begin(),
                                   stage.walk_mass->begin() + static_cast<std::ptrdiff_t>(std::min(stage.walk_mass->size(), next.data->top.size())));
        }
        // The extra stages' numbers, and the pipeline's (mu after, XTC's branches): a new run redraws.
        for (const auto& value : {stage.temperature_used, stage.entropy, stage.xtc_coin, stage.mirostat_mu,
                                  stage.mirostat_k}) {
            next.thresholds.push_back(value.value_or(-1.0));
        }
        if (stage.dry_penalties) next.thresholds.insert(next.thresholds.end(), stage.dry_penalties->begin(), stage.dry_penalties->end());
        next.pipeline = view_ptr->pipeline.get();
        if (drawn_ && *drawn_ == next) {
            drawn_->data = std::move(next.data);  // equal: read from the newest view, and hold no older one
            return;
        }
        drawn_ = std::move(next);
    } else {
        drawn_.reset();
    }
    clearPlottables();
    clearItems();
    placed_.clear();
    markers_.clear();
    marker_on_y2_.clear();
    label_ticker_.clear();
    rank_ticker_.clear();
    labelled_bars_ = 0;
    notes_.clear();
    notes_collapsed_ = false;
    info_->setText(QString());
    legend_wanted_ = true;
    legend->setVisible(true);
    ids_by_key_.clear();
    axisRect()->setBackground(Qt::NoBrush);
    xAxis->setScaleType(QCPAxis::stLinear);
    const auto& info = stage_info(stage_);
    const QString title = stageTitle();
    if (!view_ptr) {
        title_->setText(title);
        tip_.clear();
        replot(QCustomPlot::rpQueuedRefresh);
        return;
    }
    const TraceView& view = *view_ptr;
    const SampleTrace& trace = *view.trace;
    const StagePlotData& stage_data = view.plot(stage_);
    const StageTrace& now = trace.stage(stage_);

    tip_ = formulaTip(trace.params);
    setToolTip(tip_);
    if (!stage_data.active) {
        // Greedy skips the later stages whatever their parameters (whose badges may say "on"): "skipped", not "off".
        const bool skipped = trace.greedy && stage_ >= Stage::Temperature && stage_ <= Stage::Softmax;
        title_->setText(title + (skipped ? QStringLiteral(": skipped (after greedy)") : QStringLiteral(": off")));
        mode_ = PlotMode::Bars;
        drawInactive(view);
        replot(QCustomPlot::rpQueuedRefresh);
        return;
    }
    for (QCPAxis* axis : {xAxis, yAxis}) axis->setVisible(true);
    yAxis2->setVisible(false);
    QString suffix;
    if (info.mark == PlotMark::DynamicTemperature && now.temperature_used) suffix = QStringLiteral(" (dynamic)");
    if (info.mark == PlotMark::XtcRemoved && now.xtc_fired) {
        suffix = *now.xtc_fired ? QStringLiteral(": coin fired") : QStringLiteral(": coin did not fire");
    }
    if (info.mark == PlotMark::MirostatMu) suffix = QStringLiteral(" v%1").arg(trace.params.mirostat);
    title_->setText(title + suffix);
    addNote(QStringLiteral("kept %1 of %2").arg(groupedNumber(now.kept_count()), groupedNumber(stage_data.candidates)));

    mode_ = drawn_ ? drawn_->mode : PlotMode::Bars;
    if (mode_ == PlotMode::Vocabulary) {
        drawVocabulary(view, stage_data, selected_id, log_scale);
        replot(QCustomPlot::rpQueuedRefresh);
        return;
    }

    // Bars by role; each QCPBars has one look, so a role is one series.
    // XTC's and mirostat's thresholds are on the q they received: those q are drawn too.
    const bool changes_logits =
        info.changes_logits || info.mark == PlotMark::XtcRemoved || info.mark == PlotMark::MirostatMu;
    QVector<double> kept_keys, kept_values, dropped_keys, dropped_values, before_keys, before_values;
    QVector<double> chosen_keys, chosen_values;
    double top_value = 0.0;
    double min_positive = 1.0;
    const auto note_value = [&](double v) {
        top_value = std::max(top_value, v);
        if (v > 0.0) min_positive = std::min(min_positive, v);
    };
    // The raw logits are drawn as logits: their softmax is temperature 1's q, not what this stage holds.
    const bool logits_axis = stage_ == Stage::Widen;
    double low_logit = std::numeric_limits<double>::infinity();
    double high_logit = -low_logit;
    std::size_t unplotted = 0;  // -inf logits: no bar
    const auto shown = [&](const RankedToken& token) {
        return logits_axis ? token.logit : (token.kept ? token.prob_after : token.prob_before);
    };
    ids_by_key_.push_back(-1);
    for (std::size_t i = 0; i < stage_data.top.size(); ++i) {
        const RankedToken& token = stage_data.top[i];
        const double key = static_cast<double>(i + 1);
        ids_by_key_.push_back(token.id);
        const double value = shown(token);
        if (logits_axis) {
            if (!std::isfinite(value)) {
                ++unplotted;
                continue;
            }
            low_logit = std::min(low_logit, value);
            high_logit = std::max(high_logit, value);
        } else {
            note_value(value);
        }
        if (!token.kept) {
            dropped_keys << key;
            dropped_values << value;
        } else if (token.id == trace.token) {
            chosen_keys << key;
            chosen_values << value;
        } else {
            kept_keys << key;
            kept_values << value;
        }
        if (changes_logits && token.kept && token.prob_before != token.prob_after) {
            before_keys << key;
            before_values << token.prob_before;
            note_value(token.prob_before);
        }
    }
    addBars(QStringLiteral("kept"), QStringLiteral("kept"),
             palette::keptBrush(), palette::keptPen())
        ->setData(kept_keys, kept_values, true);
    if (!chosen_keys.isEmpty()) {
        addBars(QStringLiteral("chosen"), QStringLiteral("chosen"), palette::chosenBrush(), palette::chosenPen())
            ->setData(chosen_keys, chosen_values, true);
    }
    if (!dropped_keys.isEmpty()) {
        addBars(QStringLiteral("dropped"), QStringLiteral("dropped"), palette::droppedBrush(),
                 palette::droppedPen())
            ->setData(dropped_keys, dropped_values, true);
    }
    if (!before_keys.isEmpty()) {
        addBars(QStringLiteral("before"), QStringLiteral("q before"), Qt::NoBrush,
                 beforePen())
            ->setData(before_keys, before_values, true);
    }

    // Everything beyond the top N, never cut silently: one bar per kind.
    const double n = static_cast<double>(stage_data.top.size());
    // The summed bars stand apart from the ranked ones, so they never read as rank n + 1.
    double next_key = n + 1.5;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    // The summed bars do not set the probability axis: a rest of 0.35 would flatten every ranked bar. One taller
    // than the axis is cut at its top and says its mass.
    std::vector<std::pair<QCPBars*, double>> rests;
    if (logits_axis) {
        // Logits do not add up: the ids beyond the top N are counted, not drawn.
        if (stage_data.rest_kept_count + stage_data.rest_dropped_count > 0) {
            addNote(QStringLiteral("%1 more ids rank below these (not drawn: logits do not add up)")
                        .arg(groupedNumber(stage_data.rest_kept_count + stage_data.rest_dropped_count)));
        }
        if (unplotted > 0) addNote(QStringLiteral("%1 of these at -inf (no bar)").arg(groupedNumber(unplotted)));
    } else if (stage_data.rest_kept_count > 0) {
        auto* bar = addBars(QStringLiteral("rest_kept"), QStringLiteral("rest, kept"), palette::restBrush(), palette::restPen());
        bar->setData({next_key}, {stage_data.rest_kept_mass}, true);
        rests.emplace_back(bar, stage_data.rest_kept_mass);
        ticker->addTick(next_key, QStringLiteral("+%1").arg(compactCount(stage_data.rest_kept_count)));
        next_key += 1.5;
    }
    if (!logits_axis && stage_data.rest_dropped_count > 0) {
        auto* bar = addBars(QStringLiteral("rest_dropped"), QStringLiteral("rest, dropped"),
                            QBrush(palette::kGrey, Qt::Dense5Pattern), palette::droppedPen());
        bar->setData({next_key}, {stage_data.rest_dropped_mass}, true);
        rests.emplace_back(bar, stage_data.rest_dropped_mass);
        ticker->addTick(next_key, QStringLiteral("\n+%1").arg(compactCount(stage_data.rest_dropped_count)));
        next_key += 1.5;
    }
    for (int i = 0; i < plottableCount(); ++i) {
        if (auto* b = qobject_cast<QCPBars*>(plottable(i)); b && b->data()->isEmpty()) b->removeFromLegend();
    }
    if (!logits_axis && (stage_data.rest_kept_count > 0 || stage_data.rest_dropped_count > 0)) {
        QStringList rest;
        if (stage_data.rest_kept_count > 0) {
            rest << QStringLiteral("%1 kept (q %2)").arg(groupedNumber(stage_data.rest_kept_count), num(stage_data.rest_kept_mass, 3));
        }
        if (stage_data.rest_dropped_count > 0) rest << QStringLiteral("%1 dropped").arg(groupedNumber(stage_data.rest_dropped_count));
        addNote(QStringLiteral("summed beyond the top %1: %2").arg(stage_data.top.size()).arg(rest.join(QStringLiteral(", "))));
    }

    // x axis: token labels while they fit (fitToSpace checks the room at each layout), else ranks.
    QSharedPointer<QCPAxisTickerText> ranks(new QCPAxisTickerText);
    ranks->setTicks(ticker->ticks());  // the summed bars
    {
        const std::size_t step = stage_data.top.size() <= 60 ? 10 : (stage_data.top.size() <= 200 ? 25 : 100);
        ranks->addTick(1, QStringLiteral("1"));
        for (std::size_t r = step; r + step / 3 <= stage_data.top.size(); r += step) {
            ranks->addTick(static_cast<double>(r), QString::number(r));
        }
    }
    rank_ticker_ = ranks;
    if (stage_data.top.size() <= kMaxLabelledBars) {
        for (std::size_t i = 0; i < stage_data.top.size(); ++i) {
            ticker->addTick(static_cast<double>(i + 1), QString::fromStdString(view.labels->label(stage_data.top[i].id)));
        }
        labelled_bars_ = stage_data.top.size();
        label_ticker_ = ticker;
    } else {
        label_ticker_ = ranks;
    }
    xAxis->setTicker(label_ticker_);
    xAxis->setTickLabelRotation(0);
    xAxis->setLabel(labelled_bars_ > 0 ? QStringLiteral("tokens in rank order (logit desc, id asc)")
                                       : QStringLiteral("rank (logit desc, id asc)"));
    // Room left of the first bar, so a rank-1 bar never touches the y axis.
    xAxis->setRange(0.3, next_key - 0.9);

    if (top_value == 0.0) {
        for (const auto& [bar, mass] : rests) note_value(mass);  // nothing ranked on show: the rest is the plot
    }
    if (logits_axis) {
        // Logits have no zero of their own: the bars rise from the axis floor, just under the lowest on show.
        logitAxis(yAxis);
        if (!(low_logit <= high_logit)) low_logit = high_logit = 0.0;
        // The floor well under the lowest bar, so the lowest logit on show still has a bar to see.
        const double pad = std::max((high_logit - low_logit) * 0.15, 0.5);
        yAxis->setRange(low_logit - pad, high_logit + pad * 1.6);
        for (int i = 0; i < plottableCount(); ++i) {
            if (auto* b = qobject_cast<QCPBars*>(plottable(i))) b->setBaseValue(low_logit - pad);
        }
    } else if (log_scale) {
        probabilityAxis(yAxis, true);
        yAxis->setRange(std::max(min_positive * 0.4, 1e-300), std::max(top_value, min_positive) * 3.0);
    } else {
        probabilityAxis(yAxis, false);
        yAxis->setRange(0.0, std::max(top_value, 1e-12) * 1.22);
    }
    for (const auto& [bar, mass] : rests) {
        if (mass <= yAxis->range().upper) continue;
        const double key = bar->data()->constBegin()->key;
        bar->setData({key}, {yAxis->range().upper}, true);
        auto* text = placedText(bar->objectName() + QStringLiteral("_mass"),
                                QStringLiteral("%1 \u2191").arg(num(mass, 3)), yAxis,
                                QPointF(key, yAxis->range().upper),
                                {Qt::AlignRight | Qt::AlignTop, Qt::AlignLeft | Qt::AlignTop, Qt::AlignHCenter | Qt::AlignTop}, false);
        text->setColor(palette::kBlack);
    }

    // The chosen token and the selected one get a text cue as well as a colour,
    // placed at each layout where it fits (above its bar, else beside it).
    const std::vector<Qt::Alignment> around_top{
        Qt::AlignHCenter | Qt::AlignBottom, Qt::AlignLeft | Qt::AlignBottom, Qt::AlignRight | Qt::AlignBottom,
        Qt::AlignLeft | Qt::AlignTop,       Qt::AlignRight | Qt::AlignTop,   Qt::AlignLeft | Qt::AlignVCenter};
    for (std::size_t i = 0; i < stage_data.top.size(); ++i) {
        const RankedToken& token = stage_data.top[i];
        const double height = shown(token);
        if (!std::isfinite(height)) continue;
        const bool chosen = token.id == trace.token && token.kept;
        if (token.id == selected_id) {
            auto* outline = addBars(QStringLiteral("selected"), QStringLiteral("selected"), Qt::NoBrush, palette::selectedPen());
            outline->setData({static_cast<double>(i + 1)}, {height}, true);
            outline->setWidth(0.95);
            if (logits_axis) outline->setBaseValue(yAxis->range().lower);
            if (!chosen) {
                auto* text = placedText(QStringLiteral("selected_label"), QStringLiteral("selected"), yAxis,
                                        QPointF(static_cast<double>(i + 1), height), around_top, false);
                text->setColor(palette::kReddishPurple.darker(140));
            }
        }
        if (chosen) {
            // Its value beside the word: the one number a reader looks for.
            const QString value = logits_axis ? QStringLiteral("logit %1").arg(num(height, 4)) : QStringLiteral("q %1").arg(num(height, 3));
            placedText(QStringLiteral("chosen_label"),
                       (token.id == selected_id ? QStringLiteral("chosen, selected: ") : QStringLiteral("chosen: ")) + value,
                       yAxis, QPointF(static_cast<double>(i + 1), height), around_top, false);
        }
    }
    if (selected_id >= 0 && std::none_of(stage_data.top.begin(), stage_data.top.end(),
                                         [selected_id](const RankedToken& t) { return t.id == selected_id; })) {
        const QString label = QString::fromStdString(view.labels->label(selected_id));
        // Ranked here, for this trace: a rank computed for an earlier trace would not apply.
        const std::size_t rank = static_cast<std::size_t>(selected_id) < trace.vocab_size
                                     ? rankOf(*trace.stage(inputStage(trace, stage_)).kept, *now.logits, selected_id)
                                     : 0;
        if (rank > 0) {
            addNote(QStringLiteral("selected %1: rank %2 of %3 (in the summed bar)")
                         .arg(label, groupedNumber(rank), groupedNumber(stage_data.candidates)));
        } else {
            addNote(QStringLiteral("selected %1 is not a candidate here (dropped earlier)").arg(label));
        }
    }

    drawThreshold(view, stage_data);
    replot(QCustomPlot::rpQueuedRefresh);
}

QCPItemStraightLine* StagePlot::thresholdLine(double y, QCPAxis* value_axis, const QString& text) {
    QFont label_font = font();
    label_font = scaledFont(label_font, 8);
    auto* line = new QCPItemStraightLine(this);
    line->setObjectName(QStringLiteral("threshold"));
    line->setPen(palette::thresholdPen());
    line->point1->setAxes(xAxis, value_axis);
    line->point2->setAxes(xAxis, value_axis);
    // Keys 1 and 2: valid on a linear and a log rank axis alike.
    line->point1->setCoords(1.0, y);
    line->point2->setCoords(2.0, y);
    // Its label at either end of the line, above or below, clear of the bars and markers.
    auto* label = placedText(QStringLiteral("threshold_label"), text, value_axis, QPointF(1.0, y),
                             {Qt::AlignRight | Qt::AlignBottom, Qt::AlignLeft | Qt::AlignBottom, Qt::AlignRight | Qt::AlignTop,
                              Qt::AlignLeft | Qt::AlignTop, Qt::AlignHCenter | Qt::AlignBottom, Qt::AlignHCenter | Qt::AlignTop},
                             true);
    placed_.back().anchor_x_ratio = true;
    label->setFont(label_font);
    label->setColor(palette::kOrange.darker(160));
    return line;
}

void StagePlot::drawThreshold(const TraceView& view, const StagePlotData& stage_data) {
    const StageTrace& now = view.trace->stage(stage_);
    const double shown = static_cast<double>(stage_data.top.size());
    const auto horizontal_line = [this](double y, QCPAxis* value_axis, const QString& text) {
        return thresholdLine(y, value_axis, text);
    };

    // The ranked logits as diamonds on the right-hand logit axis, its range
    // covering them and [low, high] (the stage's threshold and its reference).
    const auto logit_diamonds = [&](double low, double high) {
        yAxis2->setVisible(true);
        yAxis2->setLabel(QStringLiteral("logit (diamonds)"));
        yAxis2->setScaleType(QCPAxis::stLinear);
        QVector<double> keys, logits;
        for (std::size_t i = 0; i < stage_data.top.size(); ++i) {
            keys << static_cast<double>(i + 1);
            logits << stage_data.top[i].logit;
            low = std::min(low, stage_data.top[i].logit);
            high = std::max(high, stage_data.top[i].logit);
        }
        const double pad = std::max((high - low) * 0.1, 0.5);
        yAxis2->setRange(low - pad, high + pad * 2.0);
        auto* dots = addGraph(xAxis, yAxis2);
        dots->setObjectName(QStringLiteral("logits"));
        dots->setName(QStringLiteral("logit"));
        dots->setLineStyle(QCPGraph::lsNone);
        dots->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, palette::kBlack, palette::kBlack, 5));
        dots->setData(keys, logits, true);
    };

    const PlotMark mark = stage_info(stage_).mark;
    const double own = ownValue(stage_, view.trace->params);
    if (mark == PlotMark::KthLogit && now.kth_logit) {
        const auto k = static_cast<std::int64_t>(own);
        logit_diamonds(*now.kth_logit, *now.kth_logit);
        horizontal_line(*now.kth_logit, yAxis2, QStringLiteral("k-th logit %1").arg(num(*now.kth_logit, 5)));
        addNote(QStringLiteral("k = %1: k-th logit = %2").arg(k).arg(num(*now.kth_logit, 8)));
        if (static_cast<double>(k) < shown) {
            auto* cut = new QCPItemStraightLine(this);
            cut->setObjectName(QStringLiteral("cut"));
            cut->setPen(QPen(palette::kOrange.darker(115), 1.5, Qt::DotLine));
            cut->point1->setCoords(static_cast<double>(k) + 0.5, 0.0);
            cut->point2->setCoords(static_cast<double>(k) + 0.5, 1.0);
        } else {
            addNote(QStringLiteral("the cut after rank %1 is beyond the %2 shown").arg(k).arg(stage_data.top.size()));
        }
    } else if (mark == PlotMark::CumulativeMass && now.crossing_rank) {
        const double p = own;
        yAxis2->setVisible(true);
        yAxis2->setScaleType(QCPAxis::stLinear);
        yAxis2->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        yAxis2->setLabel(QStringLiteral("cumulative q (ranked)"));
        yAxis2->setRange(0.0, 1.08);
        QVector<double> keys, mass;
        const std::size_t points = std::min(now.walk_mass->size(), stage_data.top.size());
        for (std::size_t i = 0; i < points; ++i) {
            keys << static_cast<double>(i + 1);
            mass << (*now.walk_mass)[i];
        }
        auto* curve = addGraph(xAxis, yAxis2);
        curve->setObjectName(QStringLiteral("cumulative"));
        curve->setName(QStringLiteral("cumulative q"));
        curve->setPen(palette::cumulativePen());
        curve->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, palette::kBluishGreen, Qt::white, 5));
        curve->setData(keys, mass, true);
        horizontal_line(p, yAxis2, QStringLiteral("p = %1").arg(num(p, 6)));
        const std::size_t rank = *now.crossing_rank;
        const QString label = QString::fromStdString(view.labels->label(*now.crossing_id));
        if (rank <= stage_data.top.size()) {
            auto* crossing = addGraph(xAxis, yAxis2);
            crossing->setObjectName(QStringLiteral("crossing"));
            crossing->setName(QStringLiteral("crossing token"));
            crossing->setLineStyle(QCPGraph::lsNone);
            crossing->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssStar, QPen(palette::kBlack, 2), Qt::NoBrush, 13));
            crossing->setData({static_cast<double>(rank)}, {*now.crossing_mass}, true);
            markers_.emplace_back(static_cast<double>(rank), *now.crossing_mass);
            marker_on_y2_.push_back(true);
        }
        addNote(QStringLiteral("crosses p at rank %1: %2, cumulative %3 >= %4")
                     .arg(groupedNumber(rank), label, num(*now.crossing_mass, 6), num(p, 6)) +
                 (rank > stage_data.top.size() ? QStringLiteral(" (beyond the %1 shown)").arg(stage_data.top.size()) : QString()));
    } else if (mark == PlotMark::ProbFloor && now.prob_floor) {
        const auto& key = stage_info(stage_).params.front().key;
        horizontal_line(*now.prob_floor, yAxis, QStringLiteral("floor %1").arg(num(*now.prob_floor, 4)));
        addNote(QStringLiteral("floor = %1 x max q = %2 x %3 = %4")
                     .arg(QString::fromUtf8(key.data(), static_cast<qsizetype>(key.size())), num(own, 6),
                          num(*now.max_prob, 6), num(*now.prob_floor, 6)));
        if (*now.prob_floor > yAxis->range().upper) yAxis->setRangeUpper(*now.prob_floor * 1.2);
    } else if (mark == PlotMark::TypicalEntropy && now.entropy && now.crossing_rank) {
        // The most typical q is exp(-H) (score 0); ids are kept by nearness to it in log q.
        const double typical = std::exp(-*now.entropy);
        horizontal_line(typical, yAxis, QStringLiteral("exp(-H) %1").arg(num(typical, 4)));
        addNote(QStringLiteral("H = %1 nats; kept the %2 ids nearest exp(-H), mass %3 > p = %4")
                    .arg(num(*now.entropy, 6), groupedNumber(*now.crossing_rank), num(*now.crossing_mass, 6),
                         num(own, 6)));
        if (typical > yAxis->range().upper) yAxis->setRangeUpper(typical * 1.2);
    } else if (mark == PlotMark::LogitFloor && now.logit_floor) {
        // The floor is a logit: drawn on the logit axis, with the ranked logits as diamonds.
        logit_diamonds(*now.logit_floor, *now.max_logit);
        horizontal_line(*now.logit_floor, yAxis2, QStringLiteral("max - n sigma %1").arg(num(*now.logit_floor, 5)));
        addNote(QStringLiteral("floor = %1 - %2 x %3 = %4 (mean %5)")
                    .arg(num(*now.max_logit, 6), num(own, 6), num(*now.logit_sigma, 6),
                         num(*now.logit_floor, 6), num(*now.logit_mean, 6)));
    } else if (mark == PlotMark::DryPenalties) {
        drawDry(view, stage_data);
    } else if (mark == PlotMark::XtcRemoved) {
        drawXtc(view, stage_data);
    } else if (mark == PlotMark::MirostatMu) {
        drawMirostat(view, stage_data);
    } else if (mark == PlotMark::DynamicTemperature && now.temperature_used) {
        drawDynamicTemperature(view, stage_data);
    } else if (mark == PlotMark::LogitBiasList && now.active) {
        // No threshold: the bars before and after show each biased logit's effect.
        addNote(QStringLiteral("l + bias for %1 (-inf bans)")
                    .arg(QString::fromStdString(format_logit_bias(view.trace->params.logit_bias))));
    }
}

QString StagePlot::formulaTip(const SamplingParams& p) const {
    const auto& info = stage_info(stage_);
    QString tip = QStringLiteral("<b>%1</b><br>%2")
                      .arg(QString::fromUtf8(info.title.data(), static_cast<int>(info.title.size())),
                           QString::fromUtf8(info.summary.data(), static_cast<int>(info.summary.size())).toHtmlEscaped());
    // The formula with these values is the stage's own (its descriptor).
    const QString formula = info.formula ? QString::fromStdString(info.formula(p)) : QString();
    if (!formula.isEmpty()) tip += QStringLiteral("<br>") + formula.toHtmlEscaped();
    return tip;
}

void StagePlot::drawDry(const TraceView& view, const StagePlotData& stage_data) {
    const StageTrace& now = view.trace->stage(stage_);
    const SamplingParams& p = view.trace->params;
    const std::size_t penalised = now.dry_ids ? now.dry_ids->size() : 0;
    if (penalised == 0 || !now.dry_lengths || !now.dry_penalties) {
        addNote(QStringLiteral("no repeat of length >= %1 in the window: nothing penalised").arg(p.dry_allowed_length));
        return;
    }
    // Each penalised id's penalty as a marker on the right-hand axis, its length over its bar.
    QVector<double> keys, penalties;
    double top_penalty = 0.0;
    QFont small = font();
    small = scaledFont(small, 7.5);
    std::size_t beyond = 0;
    QStringList listed;
    for (std::size_t j = 0; j < penalised; ++j) {
        const std::int32_t id = (*now.dry_ids)[j];
        const std::int64_t length = (*now.dry_lengths)[j];
        const double penalty = (*now.dry_penalties)[j];
        top_penalty = std::max(top_penalty, penalty);
        if (listed.size() < 4) {
            listed << QStringLiteral("%1 L=%2 -%3").arg(QString::fromStdString(view.labels->label(id))).arg(length).arg(num(penalty, 4));
        }
        const auto at = std::find_if(stage_data.top.begin(), stage_data.top.end(),
                                     [id](const RankedToken& t) { return t.id == id; });
        if (at == stage_data.top.end()) {
            ++beyond;
            continue;
        }
        const double key = static_cast<double>(at - stage_data.top.begin() + 1);
        keys << key;
        penalties << penalty;
        // The length rides on its penalty's marker (right-hand axis).
        auto* text = new ItemText(this);
        text->setObjectName(QStringLiteral("dry_length"));
        text->position->setAxes(xAxis, yAxis2);
        text->position->setCoords(key, penalty);
        text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        text->setPadding(QMargins(0, 0, 0, 5));
        text->setBrush(QBrush(QColor(255, 255, 255, 210)));
        text->setText(QStringLiteral("L=%1").arg(length));
        text->setFont(small);
        text->setColor(palette::kBlack);
    }
    yAxis2->setVisible(true);
    yAxis2->setScaleType(QCPAxis::stLinear);
    yAxis2->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    yAxis2->setLabel(QStringLiteral("DRY penalty (logit, triangles)"));
    yAxis2->setRange(0.0, std::max(top_penalty, 1e-9) * 1.6);
    auto* marks = addGraph(xAxis, yAxis2);
    marks->setObjectName(QStringLiteral("dry_penalty"));
    marks->setName(QStringLiteral("penalty"));
    marks->setLineStyle(QCPGraph::lsImpulse);
    marks->setPen(QPen(palette::kBlack, 1.0, Qt::DashLine));
    marks->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangleInverted, palette::kBlack, palette::kBlack, 7));
    marks->setData(keys, penalties, true);
    addNote(QStringLiteral("penalty = %1 x %2^(L - %3); %4 id%5 penalised: %6")
                .arg(exactNumber(p.dry_multiplier), exactNumber(p.dry_base))
                .arg(p.dry_allowed_length)
                .arg(penalised)
                .arg(penalised == 1 ? QString() : QStringLiteral("s"))
                .arg(listed.join(QStringLiteral(", ")) + (penalised > 4 ? QStringLiteral(", ...") : QString())));
    if (beyond > 0) addNote(QStringLiteral("%1 of them beyond the %2 shown").arg(beyond).arg(stage_data.top.size()));
    if (now.dry_repeat_limit && !p.dry_sequence_breakers.empty()) {
        addNote(QStringLiteral("repeats start after the latest sequence breaker: L <= %1").arg(*now.dry_repeat_limit));
    }
}

void StagePlot::drawXtc(const TraceView& view, const StagePlotData& stage_data) {
    const StageTrace& now = view.trace->stage(stage_);
    const SamplingParams& p = view.trace->params;
    thresholdLine(p.xtc_threshold, yAxis, QStringLiteral("threshold t = %1 (on q before)").arg(num(p.xtc_threshold, 4)));
    if (p.xtc_threshold > yAxis->range().upper) yAxis->setRangeUpper(p.xtc_threshold * 1.2);
    const std::size_t removed = now.xtc_removed ? now.xtc_removed->size() : 0;
    QVector<double> keys, heights;
    for (std::size_t i = 0; i < stage_data.top.size(); ++i) {
        const RankedToken& token = stage_data.top[i];
        if (now.xtc_removed && std::binary_search(now.xtc_removed->begin(), now.xtc_removed->end(), token.id)) {
            keys << static_cast<double>(i + 1);
            heights << token.prob_before;
        }
    }
    if (!keys.isEmpty()) {
        auto* marks = addGraph(xAxis, yAxis);
        marks->setObjectName(QStringLiteral("xtc_removed"));
        marks->setName(QStringLiteral("removed when it fires"));
        marks->setLineStyle(QCPGraph::lsNone);
        marks->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(palette::kBlack, 2.0), Qt::NoBrush, 10));
        marks->setData(keys, heights, true);
    }
    if (now.xtc_coin && now.xtc_fired) {
        addNote(QStringLiteral("coin u = %1 %2 p = %3: %4")
                    .arg(num(*now.xtc_coin, 4), *now.xtc_fired ? QStringLiteral("<") : QStringLiteral(">="),
                         num(p.xtc_probability, 4),
                         *now.xtc_fired ? QStringLiteral("fired, %1 removed").arg(removed)
                                        : QStringLiteral("did not fire, nothing removed")));
    }
    if (removed == 0) {
        addNote(QStringLiteral("fewer than two ids reach q >= t: the coin cannot change anything"));
    } else if (!*now.xtc_fired) {
        addNote(QStringLiteral("had it fired (u < p): %1 marked x removed").arg(removed));
    }
    if (view.pipeline && view.pipeline->xtc) {
        const XtcMixture& m = *view.pipeline->xtc;
        addNote(QStringLiteral("final q without the cut: %1").arg(topOf(m.kept_without, m.probs_without, *view.labels, 3)));
        addNote(QStringLiteral("with the cut: %1").arg(topOf(m.kept_with, m.probs_with, *view.labels, 3)));
        addNote(QStringLiteral("exact: (1 - %1) q_without + %1 q_with").arg(num(m.probability, 4)));
    }
}

void StagePlot::drawMirostat(const TraceView& view, const StagePlotData& stage_data) {
    const StageTrace& now = view.trace->stage(stage_);
    const SamplingParams& p = view.trace->params;
    if (!now.mirostat_mu) return;
    const double mu = *now.mirostat_mu;
    if (p.mirostat == 2) {
        const double floor = std::exp2(-mu);
        thresholdLine(floor, yAxis, QStringLiteral("q = 2^-mu = %1").arg(num(floor, 4)));
        if (floor > yAxis->range().upper) yAxis->setRangeUpper(floor * 1.2);
        if (yAxis->scaleType() == QCPAxis::stLogarithmic && floor < yAxis->range().lower) yAxis->setRangeLower(floor * 0.5);
        addNote(QStringLiteral("mu = %1 bits: keep -log2 q <= mu, q >= 2^-mu = %2").arg(num(mu, 6), num(floor, 4)));
    } else {
        // llama.cpp keeps the top max(1, int(k)).
        const double k = now.mirostat_k.value_or(0.0);
        const double kept = std::max(1.0, std::floor(k));
        if (kept + 0.5 < static_cast<double>(stage_data.top.size())) {
            auto* cut = new QCPItemStraightLine(this);
            cut->setObjectName(QStringLiteral("cut"));
            cut->setPen(QPen(palette::kOrange.darker(115), 1.5, Qt::DotLine));
            cut->point1->setCoords(kept + 0.5, 0.0);
            cut->point2->setCoords(kept + 0.5, 1.0);
        } else {
            addNote(QStringLiteral("the cut after rank %1 is beyond the %2 shown").arg(kept).arg(stage_data.top.size()));
        }
        addNote(QStringLiteral("mu = %1 bits, s_hat = %2: k = %3, keeps the top max(1, floor k) = %4")
                    .arg(num(mu, 6), num(now.mirostat_s_hat.value_or(0.0), 5), num(k, 5))
                    .arg(kept));
    }
    if (view.pipeline && view.pipeline->mirostat) {
        const MirostatStep& m = *view.pipeline->mirostat;
        addNote(QStringLiteral("drawn: surprise %1 bits; mu after = %2 - %3 x (%1 - %4) = %5")
                    .arg(num(m.surprise, 4), num(m.mu_before, 5), num(p.mirostat_eta, 3), num(p.mirostat_tau, 4),
                         num(m.mu_after, 5)));
    }
}

void StagePlot::drawDynamicTemperature(const TraceView& view, const StagePlotData& stage_data) {
    const StageTrace& now = view.trace->stage(stage_);
    const SamplingParams& p = view.trace->params;
    const double lo = std::max(0.0, p.temperature - p.dynatemp_range);
    const double hi = p.temperature + p.dynatemp_range;
    const double h = now.entropy.value_or(0.0);
    const double log_n = now.max_entropy.value_or(0.0);
    addNote(QStringLiteral("H = %1 of log n = %2 nats (n = %3): H / log n = %4")
                .arg(num(h, 4), num(log_n, 4), groupedNumber(stage_data.candidates),
                     num(log_n > 0.0 ? h / log_n : 0.0, 4)));
    addNote(QStringLiteral("T' = %1 + (%2 - %1) x %3^%4 = %5, in [max(0, T - range), T + range] = [%1, %2]")
                .arg(num(lo, 4), num(hi, 4), num(log_n > 0.0 ? h / log_n : 0.0, 4), num(p.dynatemp_exponent, 3),
                     num(*now.temperature_used, 5)));
}

void StagePlot::drawVocabulary(const TraceView& view, const StagePlotData& stage_data, std::int32_t selected_id,
                               bool log_scale) {
    const SampleTrace& trace = *view.trace;
    const StageTrace& now = trace.stage(stage_);
    const VocabCurve& curve = stage_data.curve;
    const double candidates = static_cast<double>(std::max<std::size_t>(curve.candidates, 1));

    // The kept ranks, shaded first (under the curves).
    if (curve.kept_first > 0) {
        auto* band = new QCPItemRect(this);
        band->setObjectName(QStringLiteral("kept_region"));
        band->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
        band->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
        band->topLeft->setCoords(static_cast<double>(curve.kept_first) - 0.5, 0.0);
        band->bottomRight->setCoords(static_cast<double>(curve.kept_last) + 0.5, 1.0);
        band->setPen(Qt::NoPen);
        band->setBrush(QColor(0x00, 0x72, 0xB2, 28));
    }
    // The raw logits as logits (their softmax is temperature 1's q, the next plots' business).
    const bool logits_axis = stage_ == Stage::Widen;
    const auto value_of = [logits_axis](const CurvePoint& point) { return logits_axis ? point.token.logit : point.shownProb(); };
    QVector<double> kept_ranks, kept_q, dropped_ranks, dropped_q;
    double top_value = 0.0;
    double low_logit = std::numeric_limits<double>::infinity();
    double high_logit = -low_logit;
    for (const auto& point : curve.points) {
        const double q = value_of(point);
        if (!std::isfinite(q)) continue;  // a -inf logit has no place on the axis
        top_value = std::max(top_value, q);
        low_logit = std::min(low_logit, q);
        high_logit = std::max(high_logit, q);
        (point.token.kept ? kept_ranks : dropped_ranks) << static_cast<double>(point.rank);
        (point.token.kept ? kept_q : dropped_q) << q;
    }
    const auto series = [&](const QString& name, const QString& legend_text, const QVector<double>& ranks,
                            const QVector<double>& q, const QPen& pen, const QBrush& brush) {
        auto* graph = addGraph(xAxis, yAxis);
        graph->setObjectName(name);
        graph->setName(legend_text);
        graph->setPen(pen);
        graph->setBrush(brush);
        graph->setLineStyle(QCPGraph::lsLine);
        if (ranks.size() <= 400) graph->setScatterStyle(discScatter(pen.color()));
        graph->setData(ranks, q, true);
        return graph;
    };
    if (!kept_ranks.isEmpty()) {
        series(QStringLiteral("vocab_kept"), logits_axis ? QStringLiteral("logit") : QStringLiteral("kept: q after"), kept_ranks,
               kept_q, QPen(palette::kBlue, 1.0), logits_axis ? QBrush(Qt::NoBrush) : QBrush(QColor(0x00, 0x72, 0xB2, 70)));
    }
    if (!dropped_ranks.isEmpty()) {
        series(QStringLiteral("vocab_dropped"), logits_axis ? QStringLiteral("dropped: logit") : QStringLiteral("dropped: q before"),
               dropped_ranks, dropped_q, QPen(palette::kGrey.darker(130), 1.0, Qt::DashLine),
               logits_axis ? QBrush(Qt::NoBrush) : palette::droppedBrush());
    }

    // The chosen and selected tokens: markers with words.
    const std::vector<Qt::Alignment> beside{Qt::AlignLeft | Qt::AlignBottom, Qt::AlignRight | Qt::AlignBottom,
                                            Qt::AlignLeft | Qt::AlignTop, Qt::AlignRight | Qt::AlignTop,
                                            Qt::AlignHCenter | Qt::AlignBottom, Qt::AlignHCenter | Qt::AlignTop};
    if (curve.chosen && curve.chosen->token.kept && std::isfinite(value_of(*curve.chosen))) {
        const CurvePoint& chosen = *curve.chosen;
        const double chosen_value = value_of(chosen);
        auto* mark = addGraph(xAxis, yAxis);
        mark->setObjectName(QStringLiteral("vocab_chosen"));
        mark->setName(QStringLiteral("chosen"));
        mark->setLineStyle(QCPGraph::lsNone);
        mark->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, palette::chosenPen(), palette::chosenBrush(), 10));
        mark->setData({static_cast<double>(chosen.rank)}, {chosen_value}, true);
        markers_.emplace_back(static_cast<double>(chosen.rank), chosen_value);
        marker_on_y2_.push_back(false);
        const QString value = logits_axis ? QStringLiteral("logit %1").arg(num(chosen_value, 4)) : QStringLiteral("q %1").arg(num(chosen_value, 3));
        placedText(QStringLiteral("chosen_label"),
                   (chosen.token.id == selected_id ? QStringLiteral("chosen, selected: ") : QStringLiteral("chosen: ")) + value,
                   yAxis, QPointF(static_cast<double>(chosen.rank), chosen_value), beside, false);
    }
    if (selected_id >= 0 && static_cast<std::size_t>(selected_id) < trace.vocab_size) {
        const StageTrace& before = trace.stage(inputStage(trace, stage_));
        const std::size_t rank = rankOf(*before.kept, *now.logits, selected_id);
        const QString label = QString::fromStdString(view.labels->label(selected_id));
        const bool plotted = !logits_axis || std::isfinite((*now.logits)[static_cast<std::size_t>(selected_id)]);
        if (rank == 0) {
            addNote(QStringLiteral("selected %1 is not a candidate here (dropped earlier)").arg(label));
        } else if (!plotted) {
            addNote(QStringLiteral("selected %1: rank %2, logit -inf (no point)").arg(label, groupedNumber(rank)));
        } else {
            RankedToken token;
            token.id = selected_id;
            token.kept = now.keeps(selected_id);
            const double q = logits_axis ? (*now.logits)[static_cast<std::size_t>(selected_id)]
                                         : (token.kept ? now.prob_of(selected_id) : before.prob_of(selected_id));
            auto* ring = addGraph(xAxis, yAxis);
            ring->setObjectName(QStringLiteral("vocab_selected"));
            ring->setName(QStringLiteral("selected"));
            ring->setLineStyle(QCPGraph::lsNone);
            ring->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, palette::selectedPen(), Qt::NoBrush, 15));
            ring->setData({static_cast<double>(rank)}, {q}, true);
            top_value = std::max(top_value, q);
            low_logit = std::min(low_logit, q);
            markers_.emplace_back(static_cast<double>(rank), q);
            marker_on_y2_.push_back(false);
            if (!(curve.chosen && curve.chosen->token.id == selected_id)) {
                auto* text = placedText(QStringLiteral("selected_label"), QStringLiteral("selected"), yAxis,
                                        QPointF(static_cast<double>(rank), q), beside, false);
                text->setColor(palette::kReddishPurple.darker(140));
            }
            addNote(QStringLiteral("selected %1: rank %2 of %3, %4").arg(label, groupedNumber(rank), groupedNumber(curve.candidates),
                                                                        token.kept ? QStringLiteral("kept") : QStringLiteral("dropped")));
        }
    }

    // The cut: where the kept ranks end, with what made it.
    const SamplingParams& p = trace.params;
    if (curve.kept_last > 0 && curve.kept_last < curve.candidates) {
        const double at = static_cast<double>(curve.kept_last) + 0.5;
        auto* cut = new QCPItemStraightLine(this);
        cut->setObjectName(QStringLiteral("cut"));
        cut->setPen(palette::thresholdPen());
        cut->point1->setCoords(at, 0.0);
        cut->point2->setCoords(at, 1.0);
        QString why;
        const PlotMark mark = stage_info(stage_).mark;
        if (mark == PlotMark::KthLogit) {
            why = QStringLiteral("k = %1").arg(groupedNumber(static_cast<std::size_t>(std::max(ownValue(stage_, p), 0.0))));
        }
        if (mark == PlotMark::CumulativeMass && now.crossing_rank) {
            why = QStringLiteral("crossing rank %1\ncumulative %2 >= p %3")
                      .arg(groupedNumber(*now.crossing_rank), num(now.crossing_mass.value_or(0.0), 4), num(ownValue(stage_, p), 4));
        }
        if (mark == PlotMark::ProbFloor && now.prob_floor) why = QStringLiteral("q >= floor");
        const QString text = (why.isEmpty() ? QString() : why + QLatin1Char('\n')) +
                             (curve.kept_prefix ? QStringLiteral("ranks 1-%1 kept").arg(groupedNumber(curve.kept_last))
                                                : QStringLiteral("%1 kept\nup to rank %2").arg(groupedNumber(curve.kept), groupedNumber(curve.kept_last)));
        placedText(QStringLiteral("cut_label"), text, yAxis, QPointF(at, 0.0),
                   {Qt::AlignLeft | Qt::AlignTop, Qt::AlignRight | Qt::AlignTop, Qt::AlignLeft | Qt::AlignVCenter,
                    Qt::AlignRight | Qt::AlignVCenter, Qt::AlignLeft | Qt::AlignBottom, Qt::AlignRight | Qt::AlignBottom},
                   false);
        placed_.back().anchor_y_ratio = true;
        placed_.back().text->setColor(palette::kOrange.darker(170));
    }
    // Thresholds that are probabilities: a line across.
    std::optional<std::pair<double, QString>> floor;
    const PlotMark mark = stage_info(stage_).mark;
    if (mark == PlotMark::ProbFloor && now.prob_floor) floor = {*now.prob_floor, QStringLiteral("floor %1").arg(num(*now.prob_floor, 4))};
    if (mark == PlotMark::XtcRemoved) floor = {p.xtc_threshold, QStringLiteral("XTC threshold %1 (on q before)").arg(num(p.xtc_threshold, 4))};
    if (mark == PlotMark::MirostatMu && p.mirostat == 2 && now.mirostat_mu) {
        floor = {std::exp2(-*now.mirostat_mu), QStringLiteral("q = 2^-mu = %1").arg(num(std::exp2(-*now.mirostat_mu), 4))};
    }
    if (mark == PlotMark::TypicalEntropy && now.entropy) floor = {std::exp(-*now.entropy), QStringLiteral("exp(-H) %1").arg(num(std::exp(-*now.entropy), 4))};
    if (floor) top_value = std::max(top_value, floor->first);

    // Axes: rank on a log axis with decade ticks; q linear or log.
    QSharedPointer<QCPAxisTickerText> ticks(new QCPAxisTickerText);
    const char* names[] = {"1", "10", "100", "1k", "10k", "100k", "1M", "10M", "100M", "1G"};
    double decade = 1.0;
    for (const char* name : names) {
        if (decade > candidates * 1.3) break;
        ticks->addTick(decade, QString::fromLatin1(name));
        decade *= 10.0;
    }
    xAxis->setScaleType(QCPAxis::stLogarithmic);
    xAxis->setTicker(ticks);
    xAxis->setTickLabelRotation(0);
    xAxis->setRange(0.7, std::max(candidates * 1.4, 2.0));
    xAxis->setLabel(QStringLiteral("rank of %1 (log)").arg(groupedNumber(curve.candidates)));
    if (logits_axis) {
        logitAxis(yAxis);
        if (!(low_logit <= high_logit)) low_logit = high_logit = 0.0;
        const double pad = std::max((high_logit - low_logit) * 0.06, 0.25);
        yAxis->setRange(low_logit - pad, std::max(top_value, high_logit) + pad * 2.5);
    } else if (log_scale) {
        probabilityAxis(yAxis, true);
        double low = curve.min_prob > 0.0 ? curve.min_prob : top_value;
        if (floor && floor->first > 0.0) low = std::min(low, floor->first);
        yAxis->setRange(std::max(low * 0.4, 1e-300), std::max(top_value, 1e-300) * 3.0);
    } else {
        probabilityAxis(yAxis, false);
        // A little room under 0, so a marker on the tail is seen whole.
        yAxis->setRange(-std::max(top_value, 1e-12) * 0.05, std::max(top_value, 1e-12) * 1.22);
    }
    if (floor) thresholdLine(floor->first, yAxis, floor->second);
    if (curve.candidates > VocabCurve::kExactRanks) {
        addNote(QStringLiteral("past rank %1 each point is the %2 of its log-spaced bucket")
                    .arg(VocabCurve::kExactRanks)
                    .arg(logits_axis ? QStringLiteral("highest logit") : QStringLiteral("largest q")));
    }
}

ItemText* StagePlot::placedText(const QString& name, const QString& text_value, QCPAxis* value_axis, QPointF anchor,
                                   std::vector<Qt::Alignment> choices, bool avoid_bars) {
    auto* text = new ItemText(this);
    text->setObjectName(name);
    QFont small = font();
    small = scaledFont(small, 7.5);
    text->setFont(small);
    text->setText(text_value);
    text->setPadding(QMargins(2, 1, 2, 1));
    text->setBrush(QBrush(QColor(255, 255, 255, 215)));
    text->setTextAlignment(Qt::AlignLeft);
    text->setClipToAxisRect(false);  // placed inside the data area at each layout
    text->setLayer(QStringLiteral("axes"));  // above the lines and curves it labels
    text->position->setAxes(xAxis, value_axis);
    text->position->setCoords(anchor);
    Placed placed;
    placed.text = text;
    placed.value_axis = value_axis;
    placed.anchor = anchor;
    placed.choices = std::move(choices);
    placed.avoid_bars = avoid_bars;
    placed_.push_back(placed);
    return text;
}

std::vector<QRectF> StagePlot::obstacleRects() const {
    std::vector<QRectF> rects;
    for (std::size_t i = 0; i < markers_.size(); ++i) {
        QCPAxis* axis = marker_on_y2_[i] ? yAxis2 : yAxis;
        const QPointF at(xAxis->coordToPixel(markers_[i].x()), axis->coordToPixel(markers_[i].y()));
        rects.emplace_back(at.x() - 8.0, at.y() - 8.0, 16.0, 16.0);
    }
    return rects;
}

namespace {

// One paragraph broken at spaces into lines no wider than `width` pixels,
// measuring each line as it grows (exact, quadratic in the words of a line).
QStringList wrapExactly(const QString& paragraph, const QFontMetrics& metrics, int width) {
    QStringList out;
    QString line;
    for (const QString& word : paragraph.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QString longer = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
        if (!line.isEmpty() && metrics.horizontalAdvance(longer) > width) {
            out << line;
            line = word;
        } else {
            line = longer;
        }
    }
    out << line;
    return out;
}

// A text's advance and its middle-elided form, measured once per font (each measurement shapes
// the text again; a replot asks for the same few every time).
int advanceOf(const QString& text, const QFont& font) {
    return *cachedText<int>(font, text, 256, [&] { return QFontMetrics(font).horizontalAdvance(text); });
}

QString elidedMiddle(const QString& text, const QFont& font, int width) {
    return *cachedText<QString>(font, QString::number(width) + QLatin1Char('\x1f') + text, 256,
                                [&] { return QFontMetrics(font).elidedText(text, Qt::ElideMiddle, width); });
}

// Each line of `text` broken at spaces into lines no wider than `width` pixels.
// Each word is measured once and a line's width taken as the sum; a paragraph
// whose lines then measure wider (kerning across a space) is wrapped exactly.
// The last results are kept: the plots wrap the same texts at every trace.
QString wrapToWidth(const QString& text, const QFont& font, int width) {
    static QHash<QString, QString> known;  // GUI thread only
    const QString key = QString::number(width) + QLatin1Char('|') + fontKey(font) + QLatin1Char('|') + text;
    if (const auto it = known.constFind(key); it != known.constEnd()) return *it;
    const QFontMetrics metrics(font);
    QStringList out;
    const int space = metrics.horizontalAdvance(QLatin1Char(' '));
    for (const QString& paragraph : text.split(QLatin1Char('\n'))) {
        QStringList lines;
        QString line;
        int line_width = 0;
        for (const QString& word : paragraph.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            const int word_width = metrics.horizontalAdvance(word);
            if (!line.isEmpty() && line_width + space + word_width > width) {
                lines << line;
                line = word;
                line_width = word_width;
            } else {
                line_width += (line.isEmpty() ? 0 : space) + word_width;
                line = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
            }
        }
        lines << line;
        const bool fits = std::all_of(lines.begin(), lines.end(), [&](const QString& l) {
            return !l.contains(QLatin1Char(' ')) || metrics.horizontalAdvance(l) <= width;
        });
        out << (fits ? lines : wrapExactly(paragraph, metrics, width));
    }
    if (known.size() >= 256) known.clear();
    return *known.insert(key, out.join(QLatin1Char('\n')));
}

// The rect of a text of `size` at `anchor` with `align`; a ratio anchor puts it at the data area's edge.
QRectF rectAt(Qt::Alignment align, QPointF anchor, QSizeF size, const QRectF& area, bool x_ratio, bool y_ratio) {
    constexpr double gap = 3.0;
    double x = anchor.x() - size.width() / 2.0;
    if (x_ratio) {
        if (align & Qt::AlignLeft) x = area.left() + gap;
        else if (align & Qt::AlignRight) x = area.right() - gap - size.width();
        else x = area.center().x() - size.width() / 2.0;
    } else if (align & Qt::AlignLeft) {
        x = anchor.x() + gap;
    } else if (align & Qt::AlignRight) {
        x = anchor.x() - gap - size.width();
    }
    double y = anchor.y() - size.height() / 2.0;
    if (y_ratio) {
        if (align & Qt::AlignTop) y = area.top() + gap;
        else if (align & Qt::AlignBottom) y = area.bottom() - gap - size.height();
    } else if (align & Qt::AlignTop) {
        y = anchor.y() + gap;
    } else if (align & Qt::AlignBottom) {
        y = anchor.y() - gap - size.height();
    }
    return QRectF(QPointF(x, y), size);
}

double overlap(const QRectF& a, const QRectF& b) {
    const QRectF both = a.intersected(b);
    return both.isEmpty() ? 0.0 : both.width() * both.height();
}

}  // namespace

void StagePlot::placeLabels() {
    if (placed_.empty()) return;
    const QRectF area = QRectF(axisRect()->rect()).adjusted(1.0, 1.0, -1.0, -1.0);
    std::vector<QRectF> taken = obstacleRects();
    std::vector<QRectF> bar_rects;
    for (int i = 0; i < plottableCount(); ++i) {
        auto* b = qobject_cast<QCPBars*>(plottable(i));
        if (!b) continue;
        const double base = b->valueAxis()->scaleType() == QCPAxis::stLogarithmic ? b->valueAxis()->range().lower : b->baseValue();
        for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it) {
            const double left = b->keyAxis()->coordToPixel(it->key - b->width() / 2.0);
            const double right = b->keyAxis()->coordToPixel(it->key + b->width() / 2.0);
            const double top = b->valueAxis()->coordToPixel(std::max(it->value, base));
            const double bottom = b->valueAxis()->coordToPixel(base);
            bar_rects.push_back(QRectF(QPointF(left, top), QPointF(right, bottom)).normalized());
        }
    }
    for (auto& placed : placed_) {
        const QPointF anchor(placed.anchor_x_ratio ? area.left() + placed.anchor.x() * area.width()
                                                   : xAxis->coordToPixel(placed.anchor.x()),
                             placed.anchor_y_ratio ? area.top() + placed.anchor.y() * area.height()
                                                   : placed.value_axis->coordToPixel(placed.anchor.y()));
        const QMargins pad = placed.text->padding();
        const QSizeF text_size = placed.text->textSize();
        const QSizeF size(std::ceil(text_size.width()) + pad.left() + pad.right() + 1.0,
                          std::ceil(text_size.height()) + pad.top() + pad.bottom() + 1.0);
        QRectF best;
        double best_cost = -1.0;
        for (const auto align : placed.choices) {
            const QRectF rect = rectAt(align, anchor, size, area, placed.anchor_x_ratio, placed.anchor_y_ratio);
            const QRectF inside = rect.intersected(area);
            double cost = (rect.width() * rect.height() - (inside.isEmpty() ? 0.0 : inside.width() * inside.height())) * 100.0;
            for (const auto& other : taken) cost += overlap(rect, other) * 10.0;
            if (placed.avoid_bars) {
                for (const auto& bar : bar_rects) cost += overlap(rect, bar);
            }
            if (best_cost < 0.0 || cost < best_cost) {
                best = rect;
                best_cost = cost;
            }
            if (cost == 0.0) break;
        }
        // Whatever was best, it stays inside the data area.
        best.moveLeft(std::clamp(best.left(), area.left(), std::max(area.left(), area.right() - best.width())));
        best.moveTop(std::clamp(best.top(), area.top(), std::max(area.top(), area.bottom() - best.height())));
        placed.text->position->setType(QCPItemPosition::ptAbsolute);
        placed.text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        placed.text->position->setCoords(best.topLeft());
        taken.push_back(best);
    }
}

void StagePlot::placeLegend(bool shown) {
    legend->setVisible(shown);
    const bool placed = legend->layout() == legend_row_;
    if (shown && !placed) {
        legend_row_->addElement(0, 1, legend);
    } else if (!shown && placed) {
        legend_row_->take(legend);
    }
}

void StagePlot::fitToSpace() {
    const QRect area = viewport();
    useCachedLegendItems(legend);
    placeLegend(legend_wanted_);
    // The legend in as many columns as fit the width, so no entry is cut.
    if (legend->visible() && legend->itemCount() > 0) {
        int widest = 0;
        int items = 0;
        for (int i = 0; i < legend->itemCount(); ++i) {
            if (QCPAbstractLegendItem* item = legend->item(i)) {  // a grid cell may be empty
                widest = std::max(widest, item->minimumOuterSizeHint().width());
                ++items;
            }
        }
        const int spacing = legend->columnSpacing();
        const int available = area.width() - legend->margins().left() - legend->margins().right() - 6;
        const int columns = std::clamp((available + spacing) / std::max(1, widest + spacing), 1, std::max(1, items));
        if (legend->wrap() != columns) {
            legend->setWrap(columns);
            legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
        }
    }
    // Token labels on the x axis only where they have room, upright or slanted; else ranks.
    const QFontMetrics tick_metrics(xAxis->tickLabelFont());
    int axis_extra = tick_metrics.height() * 2 + 22;  // tick labels, axis label, paddings
    if (mode_ == PlotMode::Bars && label_ticker_ && rank_ticker_ && xAxis->visible()) {
        const double width = area.width() - 70.0 - (yAxis2->visible() ? 60.0 : 10.0);
        const double per_bar = width / std::max(1.0, xAxis->range().size());
        int widest = 0;
        if (labelled_bars_ > 0) {
            for (const auto& label : static_cast<QCPAxisTickerText*>(label_ticker_.data())->ticks()) {
                widest = std::max(widest, advanceOf(label, xAxis->tickLabelFont()));
            }
        }
        const bool upright = labelled_bars_ > 0 && per_bar >= widest + 6;
        const bool slanted = labelled_bars_ > 0 && !upright && per_bar >= tick_metrics.height() + 2;
        xAxis->setTicker(upright || slanted ? label_ticker_ : rank_ticker_);
        xAxis->setTickLabelRotation(slanted ? -45 : 0);
        xAxis->setLabel(upright || slanted ? QStringLiteral("tokens in rank order (logit desc, id asc)")
                                           : QStringLiteral("rank (logit desc, id asc)"));
        if (slanted) axis_extra += static_cast<int>(widest * 0.71);
    }
    // An axis label wider than the plot gives way to its short form.
    if (xAxis->visible()) {
        QString label = xAxis->label();
        if (label.startsWith(QStringLiteral("tokens in rank order")) || label.startsWith(QStringLiteral("rank (logit")) ||
            label == QStringLiteral("tokens by rank") || label == QStringLiteral("rank")) {
            const bool tokens = label.startsWith(QStringLiteral("tokens"));
            const QString full = tokens ? QStringLiteral("tokens in rank order (logit desc, id asc)") : QStringLiteral("rank (logit desc, id asc)");
            label = advanceOf(full, xAxis->labelFont()) <= area.width() - 90 ? full
                                                                               : (tokens ? QStringLiteral("tokens by rank") : QStringLiteral("rank"));
            xAxis->setLabel(label);
        }
    }
    // A minimum data height: where the notes would squeeze it, they fold into one line and the tooltip.
    const auto height_of = [](QCPLayoutElement* element) { return element->minimumOuterSizeHint().height(); };
    const int text_width = std::max(80, area.width() - 12);
    subtitle_->setText(wrapToWidth(summary_, subtitle_->font(), text_width));
    const QString notes = wrapToWidth(notes_, info_->font(), text_width);
    info_->setText(notes);
    notes_collapsed_ = false;
    int fixed = height_of(title_) + height_of(subtitle_) + (legend->visible() ? legend->minimumOuterSizeHint().height() + 6 : 0) +
                axis_extra + 16;
    const int notes_height = notes_.isEmpty() ? 0 : height_of(info_);
    if (area.height() - fixed - notes_height < kMinDataHeight && notes.contains(QLatin1Char('\n'))) {
        const QString first = notes_.section(QLatin1Char('\n'), 0, 0);
        info_->setText(elidedMiddle(first + QStringLiteral(" (more: hover)"), info_->font(), text_width));
        notes_collapsed_ = true;
    }
    // Still short (a laptop's rows of plots): the stage's summary gives way too; the tooltip holds it.
    const int shown_notes = notes_.isEmpty() ? 0 : height_of(info_);
    summary_hidden_ = area.height() - fixed - shown_notes < kMinDataHeight;
    if (summary_hidden_) {
        fixed -= height_of(subtitle_);
        subtitle_->setText(QString());
        fixed += height_of(subtitle_);
    }
    // Shorter still (every stage on at 1280 x 720): the legend gives way, its entries go to the tooltip.
    QString legend_tip;
    if (legend->visible() && area.height() - fixed - shown_notes < kMinDataHeight) {
        fixed -= legend->minimumOuterSizeHint().height() + 6;
        placeLegend(false);
        QStringList names;
        for (int i = 0; i < legend->itemCount(); ++i) {
            if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i))) names << item->plottable()->name();
        }
        legend_tip = QStringLiteral("<br><br>Marks: ") + names.join(QStringLiteral(" · ")).toHtmlEscaped();
    }
    setToolTip((notes_collapsed_ ? tip_ + QStringLiteral("<br><br>") + notes_.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"))
                                 : tip_) +
               legend_tip);
    // Ticks spaced for the height the data area gets.
    const int data_height = std::max(40, area.height() - fixed - (notes_collapsed_ ? height_of(info_) : notes_height));
    const int ticks = std::clamp(data_height / 45, 2, 6);
    for (QCPAxis* axis : {yAxis, yAxis2}) {
        if (axis->ticker()) axis->ticker()->setTickCount(ticks);
    }
}

std::optional<StagePlot::Hit> StagePlot::hitAt(const QPointF& pixel) const {
    if (!view_ || !drawn_ || !drawn_->data->active || !axisRect()->rect().contains(pixel.toPoint())) return std::nullopt;
    const StagePlotData& shown = *drawn_->data;
    if (mode_ == PlotMode::Bars) {
        const double key = xAxis->pixelToCoord(pixel.x());
        const auto index = static_cast<long>(std::lround(key));
        if (index < 1 || static_cast<std::size_t>(index) > shown.top.size() || std::fabs(key - static_cast<double>(index)) > 0.48) {
            return std::nullopt;
        }
        const auto rank = static_cast<std::size_t>(index);
        return Hit{shown.top[rank - 1], rank, 0, 0};
    }
    // The whole vocabulary: the nearest point within a few pixels.
    std::optional<Hit> best;
    double best_distance = 10.0 * 10.0;
    const bool log_y = yAxis->scaleType() == QCPAxis::stLogarithmic;
    const bool logits_axis = stage_ == Stage::Widen;
    const auto consider = [&](const CurvePoint& point) {
        const double q = logits_axis ? point.token.logit : point.shownProb();
        if ((log_y && !(q > 0.0)) || !std::isfinite(q)) return;
        const double dx = xAxis->coordToPixel(static_cast<double>(point.rank)) - pixel.x();
        const double dy = yAxis->coordToPixel(q) - pixel.y();
        const double distance = dx * dx + dy * dy;
        if (distance <= best_distance) {
            best_distance = distance;
            best = Hit{point.token, point.rank, point.bucket_first, point.bucket_last};
        }
    };
    for (const auto& point : shown.curve.points) consider(point);
    if (shown.curve.chosen) consider(*shown.curve.chosen);
    return best;
}

QString StagePlot::tooltipAt(const QPointF& pixel) const {
    const auto hit = hitAt(pixel);
    if (!hit) return QString();
    return candidateTooltip(stage_, hit->token, hit->rank, drawn_->data->candidates,
                            QString::fromStdString(view_->labels->label(hit->token.id)), hit->bucket_first,
                            hit->bucket_last);
}

std::int32_t StagePlot::idAt(const QPointF& pixel) const {
    const auto hit = hitAt(pixel);
    return hit ? hit->token.id : -1;
}

bool StagePlot::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = tooltipAt(help->pos());
        if (!text.isEmpty()) {
            QToolTip::showText(help->globalPos(), text, this);
            return true;
        }
    }
    return QCustomPlot::event(event);
}

void StagePlot::mousePressEvent(QMouseEvent* event) {
    QCustomPlot::mousePressEvent(event);
    if (event->button() != Qt::LeftButton) return;
    if (const std::int32_t id = idAt(event->position()); id >= 0) emit tokenClicked(id);
}

}  // namespace samplescope::ui
