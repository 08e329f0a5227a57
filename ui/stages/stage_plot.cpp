#include "ui/stages/stage_plot.h"

#include <algorithm>
#include <cmath>

#include <QLocale>

#include "engine/base/input_error.h"
#include "ui/common/palette.h"

namespace samplescope::ui {

namespace {

QString countText(std::size_t n) { return QLocale(QLocale::English).toString(static_cast<qulonglong>(n)); }
QString num(double value, int digits = 4) { return QString::number(value, 'g', digits); }
QString exact(double value) { return QString::fromStdString(format_number(value)); }

// Labels on the x axis only while they stay readable; beyond that, ranks.
constexpr std::size_t kMaxLabelledBars = 16;

// Large counts in a few characters, for tick labels: 128,156 -> 128.2k.
QString compactCount(std::size_t n) {
    if (n < 10000) return countText(n);
    if (n < 1000000) return QString::number(static_cast<double>(n) / 1000.0, 'f', 1) + QLatin1Char('k');
    return QString::number(static_cast<double>(n) / 1e6, 'f', 2) + QLatin1Char('M');
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
    switch (stage) {
        case Stage::RepetitionPenalty:
            return QStringLiteral("Off: repetition_penalty = %1 (off at 1).\nThe distribution passes through unchanged.")
                .arg(exact(p.repetition_penalty));
        case Stage::PresenceFrequency:
            return QStringLiteral("Off: presence_penalty = %1, frequency_penalty = %2 (off at 0).\n"
                                  "The distribution passes through unchanged.")
                .arg(exact(p.presence_penalty), exact(p.frequency_penalty));
        case Stage::Greedy:
            return QStringLiteral("Off: temperature = %1 > 0, so a token is drawn.\nGreedy (argmax, no draw) only at T = 0.")
                .arg(exact(p.temperature));
        case Stage::Temperature:
            return QStringLiteral("Off: temperature = 1 (off at 1).\nThe distribution passes through unchanged.");
        case Stage::TopK:
            return QStringLiteral("Off: top_k = %1 (off at 0 or k >= V = %2).\nEvery candidate passes.")
                .arg(p.top_k)
                .arg(countText(trace.vocab_size));
        case Stage::TopP:
            return QStringLiteral("Off: top_p = %1 (off at >= 1).\nEvery candidate passes.").arg(exact(p.top_p));
        case Stage::MinP:
            return QStringLiteral("Off: min_p = %1 (off at 0).\nEvery candidate passes.").arg(exact(p.min_p));
        case Stage::TopNSigma:
            return QStringLiteral("Off: top_n_sigma = %1 (off at <= 0).\nEvery candidate passes.").arg(exact(p.top_n_sigma));
        case Stage::TypicalP:
            return QStringLiteral("Off: typical_p = %1 (off at 1).\nEvery candidate passes.").arg(exact(p.typical_p));
        case Stage::LogitBias:
            return QStringLiteral("Off: no logit bias given.\nThe distribution passes through unchanged.");
        case Stage::Dry:
            return QStringLiteral("Off: dry_multiplier = %1, dry_penalty_last_n = %2 (off at multiplier 0 or last "
                                  "N 0).\nThe distribution passes through unchanged.")
                .arg(exact(p.dry_multiplier))
                .arg(p.dry_penalty_last_n);
        case Stage::Xtc:
            return QStringLiteral("Off: xtc_probability = %1, xtc_threshold = %2 (off at p = 0 or threshold > "
                                  "0.5).\nNo coin is tossed; every candidate passes.")
                .arg(exact(p.xtc_probability), exact(p.xtc_threshold));
        case Stage::Mirostat:
            return QStringLiteral("Off: mirostat = %1 (off at 0; 1 or 2 picks the version).\nEvery candidate passes.")
                .arg(p.mirostat);
        default: return QStringLiteral("Off.");
    }
}

StagePlot::StagePlot(Stage stage, QWidget* parent) : QCustomPlot(parent), stage_(stage) {
    const auto& info = stage_info(stage);
    setObjectName(QStringLiteral("stage_plot_%1").arg(QString::fromUtf8(info.name.data(), static_cast<int>(info.name.size()))));
    setMinimumSize(250, 250);
    setNoAntialiasingOnDrag(true);
    setAntialiasedElements(QCP::aeNone);
    setAntialiasedElement(QCP::aeItems, true);
    setAntialiasedElement(QCP::aePlottables, true);

    QFont title_font = font();
    title_font.setPointSizeF(10);
    title_font.setBold(true);
    QFont subtitle_font = font();
    subtitle_font.setPointSizeF(8.5);
    plotLayout()->insertRow(0);
    plotLayout()->insertRow(1);
    plotLayout()->insertRow(2);
    title_ = new QCPTextElement(this, QString(), title_font);
    subtitle_ = new QCPTextElement(this, wrapWords(QString::fromUtf8(info.summary.data(), static_cast<int>(info.summary.size())), 52),
                                   subtitle_font);
    subtitle_->setTextColor(QColor(0x44, 0x44, 0x44));
    info_ = new QCPTextElement(this, QString(), subtitle_font);
    info_->setTextColor(palette::kOrange.darker(170));
    plotLayout()->addElement(0, 0, title_);
    plotLayout()->addElement(1, 0, subtitle_);
    plotLayout()->addElement(2, 0, info_);

    // The legend goes under the plot, in one row, so it never hides a bar.
    legend->setVisible(true);
    QFont legend_font = font();
    legend_font.setPointSizeF(8);
    legend->setFont(legend_font);
    legend->setIconSize(18, 10);
    legend->setBorderPen(Qt::NoPen);
    legend->setRowSpacing(0);
    legend->setColumnSpacing(8);
    axisRect()->insetLayout()->take(legend);
    // A layout column is capped by the largest size of its elements, and a
    // legend's is the width of its items: alone in the plot's column it would
    // shrink the whole plot to that width. Spacers either side keep it centred.
    auto* legend_row = new QCPLayoutGrid;
    plotLayout()->addElement(4, 0, legend_row);
    legend_row->addElement(0, 0, new QCPLayoutElement(this));
    legend_row->addElement(0, 1, legend);
    legend_row->addElement(0, 2, new QCPLayoutElement(this));
    legend_row->setColumnSpacing(0);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(3);
    for (int row : {0, 1, 2, 4}) plotLayout()->setRowStretchFactor(row, 0.001);
    plotLayout()->setRowSpacing(2);

    QFont tick_font = font();
    tick_font.setPointSizeF(8);
    for (QCPAxis* axis : {xAxis, yAxis, yAxis2}) {
        axis->setTickLabelFont(tick_font);
        QFont label_font = font();
        label_font.setPointSizeF(8.5);
        axis->setLabelFont(label_font);
    }
    yAxis->setLabel(QStringLiteral("probability"));
    connect(this, &QCustomPlot::plottableClick, this, &StagePlot::onPlottableClick);
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
QString StagePlot::noteText() const { return info_->text(); }

void StagePlot::addNote(const QString& text) {
    const QString wrapped = wrapWords(text, 46);
    info_->setText(info_->text().isEmpty() ? wrapped : info_->text() + QLatin1Char('\n') + wrapped);
}

void StagePlot::drawInactive(const TraceView& view) {
    for (QCPAxis* axis : {xAxis, yAxis, yAxis2}) axis->setVisible(false);
    auto* text = new QCPItemText(this);
    text->setObjectName(QStringLiteral("inactive"));
    text->position->setType(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(0.5, 0.5);
    text->setPositionAlignment(Qt::AlignCenter);
    text->setTextAlignment(Qt::AlignCenter);
    QFont big = font();
    big.setPointSizeF(9);
    text->setFont(big);
    text->setColor(QColor(0x55, 0x55, 0x55));
    QStringList lines;
    QString reason = inactiveReason(*view.trace, stage_);
    if (const QString note = stepNote(view, stage_); !note.isEmpty()) reason += QStringLiteral("\nThis run: ") + note + QLatin1Char('.');
    for (const QString& line : reason.split(QLatin1Char('\n'))) lines << wrapWords(line, 34);
    text->setText(lines.join(QLatin1Char('\n')));
    text->setClipToAxisRect(false);
    legend->setVisible(false);
    axisRect()->setBackground(QBrush(QColor(0xF4, 0xF4, 0xF4)));
}

void StagePlot::showView(const std::shared_ptr<const TraceView>& view_ptr, std::int32_t selected_id, bool log_scale) {
    if (view_ptr) {
        const SampleTrace& trace = *view_ptr->trace;
        const StageTrace& stage = trace.stage(stage_);
        Drawn next{view_ptr->plot(stage_), trace.token, selected_id, log_scale, view_ptr->labels.get(),
                   stage.active ? QString() : inactiveReason(trace, stage_), {}};
        for (const auto& value : {stage.kth_logit, stage.crossing_mass, stage.prob_floor, stage.max_prob}) {
            next.thresholds.push_back(value.value_or(-1.0));
        }
        next.thresholds.push_back(stage.crossing_rank ? static_cast<double>(*stage.crossing_rank) : -1.0);
        if (stage.active && stage_ == Stage::TopP) {
            next.thresholds.push_back(trace.params.top_p);
            next.thresholds.insert(next.thresholds.end(), stage.walk_mass->begin(),
                                   stage.walk_mass->begin() + static_cast<std::ptrdiff_t>(std::min(stage.walk_mass->size(), next.data.top.size())));
        }
        if (stage.active && stage_ == Stage::TopK) next.thresholds.push_back(static_cast<double>(trace.params.top_k));
        if (stage.active && stage_ == Stage::MinP) next.thresholds.push_back(trace.params.min_p);
        // The extra stages' numbers, and the pipeline's (mu after, XTC's branches): a new run redraws.
        for (const auto& value : {stage.temperature_used, stage.entropy, stage.xtc_coin, stage.mirostat_mu,
                                  stage.mirostat_k}) {
            next.thresholds.push_back(value.value_or(-1.0));
        }
        if (stage.dry_penalties) next.thresholds.insert(next.thresholds.end(), stage.dry_penalties->begin(), stage.dry_penalties->end());
        next.pipeline = view_ptr->pipeline.get();
        if (drawn_ && *drawn_ == next) return;
        drawn_ = std::move(next);
    } else {
        drawn_.reset();
    }
    clearPlottables();
    clearItems();
    info_->setText(QString());
    legend->setVisible(true);
    ids_by_key_.clear();
    axisRect()->setBackground(Qt::NoBrush);
    const auto& info = stage_info(stage_);
    // The contract's stages are numbered in its order (the main view's grid);
    // llama.cpp's extra stages, shown in pipelines only, carry no number.
    int position = 1;
    for (const auto& other : kStages) {
        if (other.stage == stage_) break;
        position += other.contract ? 1 : 0;
    }
    const QString number = info.contract ? QString::number(position) + QStringLiteral(". ") : QString();
    const QString title = QString::fromUtf8(info.title.data(), static_cast<int>(info.title.size()));
    if (!view_ptr) {
        title_->setText(number + title);
        replot();
        return;
    }
    const TraceView& view = *view_ptr;
    const SampleTrace& trace = *view.trace;
    const StagePlotData& stage_data = view.plot(stage_);
    const StageTrace& now = trace.stage(stage_);

    if (!stage_data.active) {
        title_->setText(number + title + QStringLiteral(": off"));
        setToolTip(formulaTip(trace.params));
        drawInactive(view);
        replot();
        return;
    }
    for (QCPAxis* axis : {xAxis, yAxis}) axis->setVisible(true);
    yAxis2->setVisible(false);
    QString suffix;
    if (stage_ == Stage::Temperature && now.temperature_used) suffix = QStringLiteral(" (dynamic)");
    if (stage_ == Stage::Xtc && now.xtc_fired) {
        suffix = *now.xtc_fired ? QStringLiteral(": coin fired") : QStringLiteral(": coin did not fire");
    }
    if (stage_ == Stage::Mirostat) suffix = QStringLiteral(" v%1").arg(trace.params.mirostat);
    title_->setText(number + title + suffix);
    setToolTip(formulaTip(trace.params));
    addNote(QStringLiteral("kept %1 of %2").arg(countText(now.kept_count()), countText(stage_data.candidates)));

    // Bars by role; each QCPBars has one look, so a role is one series.
    // XTC's and mirostat's thresholds are on the q they received: those q are drawn too.
    const bool changes_logits = stage_ == Stage::LogitBias || stage_ == Stage::RepetitionPenalty ||
                                stage_ == Stage::PresenceFrequency || stage_ == Stage::Dry ||
                                stage_ == Stage::Temperature || stage_ == Stage::Xtc || stage_ == Stage::Mirostat;
    QVector<double> kept_keys, kept_values, dropped_keys, dropped_values, before_keys, before_values;
    QVector<double> chosen_keys, chosen_values;
    double top_value = 0.0;
    double min_positive = 1.0;
    const auto note_value = [&](double v) {
        top_value = std::max(top_value, v);
        if (v > 0.0) min_positive = std::min(min_positive, v);
    };
    ids_by_key_.push_back(-1);
    for (std::size_t i = 0; i < stage_data.top.size(); ++i) {
        const RankedToken& token = stage_data.top[i];
        const double key = static_cast<double>(i + 1);
        ids_by_key_.push_back(token.id);
        if (!token.kept) {
            dropped_keys << key;
            dropped_values << token.prob_before;
            note_value(token.prob_before);
        } else if (token.id == trace.token) {
            chosen_keys << key;
            chosen_values << token.prob_after;
            note_value(token.prob_after);
        } else {
            kept_keys << key;
            kept_values << token.prob_after;
            note_value(token.prob_after);
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
                 QPen(palette::kBlack, 1.2, Qt::DotLine))
            ->setData(before_keys, before_values, true);
    }

    // Everything beyond the top N, never cut silently: one bar per kind.
    const double n = static_cast<double>(stage_data.top.size());
    // The summed bars stand apart from the ranked ones, so they never read as rank n + 1.
    double next_key = n + 1.5;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    if (stage_data.rest_kept_count > 0) {
        addBars(QStringLiteral("rest_kept"), QStringLiteral("rest, kept"),
                 palette::restBrush(), palette::restPen())
            ->setData({next_key}, {stage_data.rest_kept_mass}, true);
        note_value(stage_data.rest_kept_mass);
        ticker->addTick(next_key, QStringLiteral("+%1").arg(compactCount(stage_data.rest_kept_count)));
        next_key += 1.5;
    }
    if (stage_data.rest_dropped_count > 0) {
        addBars(QStringLiteral("rest_dropped"),
                 QStringLiteral("rest, dropped"),
                 QBrush(palette::kGrey, Qt::Dense5Pattern), palette::droppedPen())
            ->setData({next_key}, {stage_data.rest_dropped_mass}, true);
        note_value(stage_data.rest_dropped_mass);
        ticker->addTick(next_key, QStringLiteral("\n+%1").arg(compactCount(stage_data.rest_dropped_count)));
        next_key += 1.5;
    }
    for (int i = 0; i < plottableCount(); ++i) {
        if (auto* b = qobject_cast<QCPBars*>(plottable(i)); b && b->data()->isEmpty()) b->removeFromLegend();
    }
    if (stage_data.rest_kept_count > 0 || stage_data.rest_dropped_count > 0) {
        QStringList rest;
        if (stage_data.rest_kept_count > 0) {
            rest << QStringLiteral("%1 kept (q %2)").arg(countText(stage_data.rest_kept_count), num(stage_data.rest_kept_mass, 3));
        }
        if (stage_data.rest_dropped_count > 0) rest << QStringLiteral("%1 dropped").arg(countText(stage_data.rest_dropped_count));
        addNote(QStringLiteral("summed beyond the top %1: %2").arg(stage_data.top.size()).arg(rest.join(QStringLiteral(", "))));
    }

    // x axis: token labels while they fit, else ranks.
    if (stage_data.top.size() <= kMaxLabelledBars) {
        for (std::size_t i = 0; i < stage_data.top.size(); ++i) {
            ticker->addTick(static_cast<double>(i + 1), QString::fromStdString(view.labels->label(stage_data.top[i].id)));
        }
        xAxis->setTickLabelRotation(stage_data.top.size() > 8 ? -45 : 0);
    } else {
        const std::size_t step = stage_data.top.size() <= 60 ? 10 : (stage_data.top.size() <= 200 ? 25 : 100);
        ticker->addTick(1, QStringLiteral("1"));
        for (std::size_t r = step; r + step / 3 <= stage_data.top.size(); r += step) {
            ticker->addTick(static_cast<double>(r), QString::number(r));
        }
        xAxis->setTickLabelRotation(0);
    }
    xAxis->setTicker(ticker);
    xAxis->setLabel(stage_data.top.size() <= kMaxLabelledBars ? QStringLiteral("tokens in rank order (logit desc, id asc)")
                                                        : QStringLiteral("rank (logit desc, id asc)"));
    xAxis->setRange(0.4, next_key - 0.9);

    if (log_scale) {
        yAxis->setScaleType(QCPAxis::stLogarithmic);
        yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
        yAxis->setNumberFormat(QStringLiteral("eb"));
        yAxis->setNumberPrecision(0);
        yAxis->setRange(std::max(min_positive * 0.4, 1e-300), std::max(top_value, min_positive) * 3.0);
        yAxis->setLabel(QStringLiteral("probability (log)"));
    } else {
        yAxis->setScaleType(QCPAxis::stLinear);
        yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        yAxis->setNumberFormat(QStringLiteral("g"));
        yAxis->setNumberPrecision(3);
        yAxis->setRange(0.0, std::max(top_value, 1e-12) * 1.22);
        yAxis->setLabel(QStringLiteral("probability"));
    }

    // The chosen token and the selected one get a text cue as well as a colour.
    QFont small = font();
    small.setPointSizeF(7.5);
    for (std::size_t i = 0; i < stage_data.top.size(); ++i) {
        const RankedToken& token = stage_data.top[i];
        const double height = token.kept ? token.prob_after : token.prob_before;
        if (token.id == selected_id) {
            auto* outline = addBars(QStringLiteral("selected"), QStringLiteral("selected"), Qt::NoBrush, palette::selectedPen());
            outline->setData({static_cast<double>(i + 1)}, {height}, true);
            outline->setWidth(0.95);
            auto* text = new QCPItemText(this);
            text->setObjectName(QStringLiteral("selected_label"));
            text->position->setCoords(static_cast<double>(i + 1), height);
            text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
            text->setText(QStringLiteral("selected"));
            text->setColor(palette::kReddishPurple.darker(140));
            text->setFont(small);
        }
        if (token.id == trace.token && token.kept) {
            auto* text = new QCPItemText(this);
            text->setObjectName(QStringLiteral("chosen_label"));
            text->position->setCoords(static_cast<double>(i + 1), height);
            text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
            text->setText(token.id == selected_id ? QStringLiteral("chosen, selected\n") : QStringLiteral("chosen"));
            text->setFont(small);
        }
    }
    if (selected_id >= 0 && std::none_of(stage_data.top.begin(), stage_data.top.end(),
                                         [selected_id](const RankedToken& t) { return t.id == selected_id; })) {
        const QString label = QString::fromStdString(view.labels->label(selected_id));
        if (stage_data.selected_rank > 0) {
            addNote(QStringLiteral("selected %1: rank %2 of %3 (in the summed bar)")
                         .arg(label, countText(stage_data.selected_rank), countText(stage_data.candidates)));
        } else {
            addNote(QStringLiteral("selected %1 is not a candidate here (dropped earlier)").arg(label));
        }
    }

    drawThreshold(view, stage_data);
    replot();
}

QCPItemStraightLine* StagePlot::thresholdLine(double y, QCPAxis* value_axis, const QString& text) {
    QFont label_font = font();
    label_font.setPointSizeF(8);
    auto* line = new QCPItemStraightLine(this);
    line->setObjectName(QStringLiteral("threshold"));
    line->setPen(palette::thresholdPen());
    line->point1->setAxes(xAxis, value_axis);
    line->point2->setAxes(xAxis, value_axis);
    line->point1->setCoords(0.0, y);
    line->point2->setCoords(1.0, y);
    auto* label = new QCPItemText(this);
    label->setObjectName(QStringLiteral("threshold_label"));
    label->position->setAxes(xAxis, value_axis);
    label->position->setType(QCPItemPosition::ptPlotCoords);
    label->position->setCoords(xAxis->range().upper - 0.1, y);
    label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    label->setText(text);
    label->setFont(label_font);
    label->setColor(palette::kOrange.darker(160));
    label->setBrush(QBrush(QColor(255, 255, 255, 200)));
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

    if (stage_ == Stage::TopK && now.kth_logit) {
        const std::int64_t k = view.trace->params.top_k;
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
    } else if (stage_ == Stage::TopP && now.crossing_rank) {
        const double p = view.trace->params.top_p;
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
        }
        addNote(QStringLiteral("crosses p at rank %1: %2, cumulative %3 >= %4")
                     .arg(countText(rank), label, num(*now.crossing_mass, 6), num(p, 6)) +
                 (rank > stage_data.top.size() ? QStringLiteral(" (beyond the %1 shown)").arg(stage_data.top.size()) : QString()));
    } else if (stage_ == Stage::MinP && now.prob_floor) {
        horizontal_line(*now.prob_floor, yAxis, QStringLiteral("floor %1").arg(num(*now.prob_floor, 4)));
        addNote(QStringLiteral("floor = min_p x max q = %1 x %2 = %3")
                     .arg(num(view.trace->params.min_p, 6), num(*now.max_prob, 6), num(*now.prob_floor, 6)));
        if (*now.prob_floor > yAxis->range().upper) yAxis->setRangeUpper(*now.prob_floor * 1.2);
    } else if (stage_ == Stage::TypicalP && now.entropy && now.crossing_rank) {
        // The most typical q is exp(-H) (score 0); ids are kept by nearness to it in log q.
        const double typical = std::exp(-*now.entropy);
        horizontal_line(typical, yAxis, QStringLiteral("exp(-H) %1").arg(num(typical, 4)));
        addNote(QStringLiteral("H = %1 nats; kept the %2 ids nearest exp(-H), mass %3 > p = %4")
                    .arg(num(*now.entropy, 6), countText(*now.crossing_rank), num(*now.crossing_mass, 6),
                         num(view.trace->params.typical_p, 6)));
        if (typical > yAxis->range().upper) yAxis->setRangeUpper(typical * 1.2);
    } else if (stage_ == Stage::TopNSigma && now.logit_floor) {
        // The floor is a logit: drawn on the logit axis, with the ranked logits as diamonds.
        logit_diamonds(*now.logit_floor, *now.max_logit);
        horizontal_line(*now.logit_floor, yAxis2, QStringLiteral("max - n sigma %1").arg(num(*now.logit_floor, 5)));
        addNote(QStringLiteral("floor = %1 - %2 x %3 = %4 (mean %5)")
                    .arg(num(*now.max_logit, 6), num(view.trace->params.top_n_sigma, 6), num(*now.logit_sigma, 6),
                         num(*now.logit_floor, 6), num(*now.logit_mean, 6)));
    } else if (stage_ == Stage::Dry) {
        drawDry(view, stage_data);
    } else if (stage_ == Stage::Xtc) {
        drawXtc(view, stage_data);
    } else if (stage_ == Stage::Mirostat) {
        drawMirostat(view, stage_data);
    } else if (stage_ == Stage::Temperature && now.temperature_used) {
        drawDynamicTemperature(view, stage_data);
    } else if (stage_ == Stage::LogitBias && now.active) {
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
    QString formula;
    switch (stage_) {
        case Stage::Dry:
            formula = QStringLiteral("penalty(id) = multiplier x base^(L - allowed) = %1 x %2^(L - %3), L the longest "
                                     "repeat of the history's suffix that id would extend (L >= %3), cut at the latest "
                                     "sequence breaker; last N = %4 (-1 the whole history).")
                          .arg(exact(p.dry_multiplier), exact(p.dry_base))
                          .arg(p.dry_allowed_length)
                          .arg(p.dry_penalty_last_n);
            break;
        case Stage::Xtc:
            formula = QStringLiteral("A coin u in [0, 1) (its own stream); u < p = %1: of the ids with q >= t = %2 "
                                     "(two or more), all but the least likely are removed, keeping at least min_keep "
                                     "= %3. The exact final distribution is (1 - p) q_without + p q_with.")
                          .arg(exact(p.xtc_probability), exact(p.xtc_threshold))
                          .arg(p.min_keep);
            break;
        case Stage::Mirostat:
            formula = QStringLiteral("v2: keep the ranked ids with surprise -log2 q <= mu, i.e. q >= 2^-mu. v1: s_hat "
                                     "from the top 100 ranks (Zipf), k = ((s_hat - 1) 2^mu / (1 - V^(1 - s_hat)))^(1 / "
                                     "s_hat). After the draw mu -= eta (surprise - tau), tau = %1, eta = %2; mu "
                                     "starts at 2 tau.")
                          .arg(exact(p.mirostat_tau), exact(p.mirostat_eta));
            break;
        case Stage::Temperature:
            formula = p.dynatemp_range > 0.0
                          ? QStringLiteral("Dynamic: T' = lo + (hi - lo) x (H / log n)^e, lo = max(0, T - range), hi = "
                                           "T + range; T = %1, range = %2, e = %3; H the entropy of q over the n "
                                           "candidates (nats). Each logit is then divided by T'.")
                                .arg(exact(p.temperature), exact(p.dynatemp_range), exact(p.dynatemp_exponent))
                          : QStringLiteral("l / T, T = %1.").arg(exact(p.temperature));
            break;
        default: break;
    }
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
    small.setPointSizeF(7.5);
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
        auto* text = new QCPItemText(this);
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
                .arg(exact(p.dry_multiplier), exact(p.dry_base))
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
                .arg(num(h, 4), num(log_n, 4), countText(stage_data.candidates),
                     num(log_n > 0.0 ? h / log_n : 0.0, 4)));
    addNote(QStringLiteral("T' = %1 + (%2 - %1) x %3^%4 = %5, in [max(0, T - range), T + range] = [%1, %2]")
                .arg(num(lo, 4), num(hi, 4), num(log_n > 0.0 ? h / log_n : 0.0, 4), num(p.dynatemp_exponent, 3),
                     num(*now.temperature_used, 5)));
}

void StagePlot::onPlottableClick(QCPAbstractPlottable* plottable, int index, QMouseEvent*) {
    auto* bars = qobject_cast<QCPBars*>(plottable);
    if (!bars || index < 0 || index >= bars->data()->size()) return;
    const auto key = static_cast<std::size_t>(std::lround((bars->data()->begin() + index)->key));
    if (key < ids_by_key_.size() && ids_by_key_[key] >= 0) emit tokenClicked(ids_by_key_[key]);
}

}  // namespace samplescope::ui
