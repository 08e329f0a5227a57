#include "ui/stages/draw_plot.h"

#include <algorithm>
#include <cmath>

#include <QFontMetrics>

#include "engine/base/input_error.h"
#include "ui/common/count_text.h"
#include "ui/common/font_scale.h"
#include "ui/common/palette.h"
#include "ui/stages/axis_label.h"
#include "ui/stages/item_text.h"
#include "ui/stages/scatter_marks.h"
#include "ui/stages/text_element.h"

namespace samplescope::ui {

namespace {

constexpr std::size_t kMaxLabelledPoints = 24;

}  // namespace

DrawPlot::DrawPlot(QWidget* parent) : OpaquePlot(parent) {
    setObjectName(QStringLiteral("draw_plot"));
    setMinimumSize(250, 250);
    for (QCPAxis* axis : axisRect()->axes()) useCachedAxisLabel(axis);  // titles from the cache (axis_label.h)
    QFont title_font = font();
    title_font = scaledFont(title_font, 10.5);
    title_font.setBold(true);
    QFont caption_font = font();
    caption_font = scaledFont(caption_font, 9);
    plotLayout()->insertRow(0);
    plotLayout()->insertRow(1);
    title_ = new TextElement(this, QStringLiteral("10. Draw"), title_font);
    caption_ = new TextElement(this, QString(), caption_font);
    plotLayout()->addElement(0, 0, title_);
    plotLayout()->addElement(1, 0, caption_);
    QFont tick_font = font();
    tick_font = scaledFont(tick_font, 8);
    QFont label_font = font();
    label_font = scaledFont(label_font, 8.5);
    for (QCPAxis* axis : {xAxis, yAxis}) {
        axis->setTickLabelFont(tick_font);
        axis->setLabelFont(label_font);
    }
    yAxis->setLabel(QStringLiteral("cumulative q"));
    yAxis->setRange(0.0, 1.05);
    legend->setVisible(false);
    connect(this, &QCustomPlot::plottableClick, this, [this](QCPAbstractPlottable* plottable, int index, QMouseEvent*) {
        if (!view_ || plottable->objectName() != QStringLiteral("cumulative")) return;
        const auto& kept = view_->trace->final_kept();
        if (index >= 0 && static_cast<std::size_t>(index) < kept.size()) emit tokenClicked(kept[static_cast<std::size_t>(index)]);
    });
}

QCPGraph* DrawPlot::graphNamed(const QString& name) {
    for (int i = 0; i < graphCount(); ++i) {
        if (graph(i)->objectName() == name) return graph(i);
    }
    return nullptr;
}

QCPAbstractItem* DrawPlot::item(const QString& name) {
    for (int i = 0; i < itemCount(); ++i) {
        if (QCustomPlot::item(i)->objectName() == name) return QCustomPlot::item(i);
    }
    return nullptr;
}

void DrawPlot::showView(const std::shared_ptr<const TraceView>& view_ptr, std::int32_t selected_id) {
    clearGraphs();
    clearItems();
    view_ = view_ptr;
    if (!view_ptr) {
        replot(QCustomPlot::rpQueuedRefresh);
        return;
    }
    const SampleTrace& trace = *view_ptr->trace;
    const TokenLabels& labels = *view_ptr->labels;
    const auto& kept = trace.final_kept();
    const auto& cumulative = trace.cumulative;
    const QString token_label = QString::fromStdString(labels.label(trace.token));
    const QString shortLabel = QFontMetrics(font()).elidedText(token_label, Qt::ElideMiddle, 140);

    // Position i + 1 on the x axis is the i-th kept id in ascending id order.
    const std::size_t n = kept.size();
    QVector<double> keys(static_cast<int>(n)), values(static_cast<int>(n));
    std::size_t chosen_index = 0;
    for (std::size_t i = 0; i < n; ++i) {
        keys[static_cast<int>(i)] = static_cast<double>(i + 1);
        values[static_cast<int>(i)] = cumulative[i];
        if (kept[i] == trace.token) chosen_index = i;
    }
    const double low = chosen_index == 0 ? 0.0 : cumulative[chosen_index - 1];
    const double high = cumulative[chosen_index];

    // The walk's steps: the interval [c(i-1), c(i)) belongs to the i-th kept id.
    auto* steps = addGraph();
    steps->setObjectName(QStringLiteral("cumulative"));
    steps->setPen(palette::cumulativePen());
    steps->setLineStyle(n > 2000 ? QCPGraph::lsLine : QCPGraph::lsStepCenter);
    if (n <= 2000) steps->setScatterStyle(ringScatter(palette::kBluishGreen, Qt::white, 5));
    steps->setData(keys, values, true);

    // The chosen interval: a band across the plot and the token's own step.
    auto* band = new QCPItemRect(this);
    band->setObjectName(QStringLiteral("chosen_interval"));
    band->topLeft->setType(QCPItemPosition::ptPlotCoords);
    band->topLeft->setCoords(0.0, high);
    band->bottomRight->setCoords(static_cast<double>(n) + 1.0, low);
    band->setBrush(QBrush(palette::chosenBand()));
    band->setPen(Qt::NoPen);
    auto* cell = new QCPItemRect(this);
    cell->setObjectName(QStringLiteral("chosen_cell"));
    cell->topLeft->setCoords(static_cast<double>(chosen_index) + 0.55, high);
    cell->bottomRight->setCoords(static_cast<double>(chosen_index) + 1.45, low);
    cell->setBrush(palette::chosenBrush());
    cell->setPen(palette::chosenPen());

    QFont small = font();
    small = scaledFont(small, 8);
    if (trace.u) {
        auto* u_line = new QCPItemStraightLine(this);
        u_line->setObjectName(QStringLiteral("u"));
        u_line->setPen(palette::uPen());
        u_line->point1->setCoords(0.0, *trace.u);
        u_line->point2->setCoords(1.0, *trace.u);
        auto* u_label = new ItemText(this);
        u_label->setObjectName(QStringLiteral("u_label"));
        u_label->position->setCoords(0.6, *trace.u);
        u_label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        u_label->setTextAlignment(Qt::AlignLeft);  // one line: drawn from the cache (ItemText)
        u_label->setText(QStringLiteral("u = %1").arg(QString::number(*trace.u, 'g', 6)));
        u_label->setFont(small);
        u_label->setBrush(QBrush(QColor(255, 255, 255, 200)));
        // Short lines: the cell is a third of a laptop's screen wide. The exact numbers are in the tooltip.
        title_->setText(QStringLiteral("10. Draw: u = %1 \u2192 %2").arg(QString::number(*trace.u, 'g', 5), shortLabel));
        caption_->setText(QStringLiteral("u in [%1, %2): id %3\ninverse CDF over %4 kept ids, by id%5")
                              .arg(QString::number(low, 'g', 5), QString::number(high, 'g', 5), groupedNumber(trace.token),
                                   groupedNumber(n), trace.fell_back ? QStringLiteral("\nu passed the last sum: fell back") : QString()));
        setToolTip(QStringLiteral("u = %1 falls in [%2, %3) of the cumulative q over the %4 final kept ids in ascending id "
                                  "order: token %5 (id %6), logprob %7 (after penalties, before T).%8")
                       .arg(exactNumber(*trace.u), exactNumber(low), exactNumber(high), groupedNumber(n), token_label.toHtmlEscaped(),
                            groupedNumber(trace.token), exactNumber(trace.logprob),
                            trace.fell_back ? QStringLiteral(" u was not below the last sum: the draw fell back to the "
                                                             "largest kept id with q > 0.")
                                            : QString()));
    } else {
        title_->setText(QStringLiteral("10. Draw: none (greedy) \u2192 %1").arg(shortLabel));
        caption_->setText(QStringLiteral("Greedy (T = 0): the argmax, id %1.\nNo draw was taken; draws stay %2.")
                              .arg(groupedNumber(trace.token))
                              .arg(trace.draws_consumed));
        setToolTip(QStringLiteral("Greedy (T = 0): the argmax %1 (id %2), logprob %3. No draw was taken; draws consumed "
                                  "stays %4.")
                       .arg(token_label.toHtmlEscaped(), groupedNumber(trace.token), exactNumber(trace.logprob))
                       .arg(trace.draws_consumed));
    }

    if (selected_id >= 0) {
        const auto it = std::lower_bound(kept.begin(), kept.end(), selected_id);
        if (it != kept.end() && *it == selected_id) {
            const auto index = static_cast<std::size_t>(it - kept.begin());
            auto* mark = new QCPItemRect(this);
            mark->setObjectName(QStringLiteral("selected"));
            mark->topLeft->setCoords(static_cast<double>(index) + 0.5, cumulative[index]);
            mark->bottomRight->setCoords(static_cast<double>(index) + 1.5, index == 0 ? 0.0 : cumulative[index - 1]);
            mark->setPen(palette::selectedPen());
            mark->setBrush(Qt::NoBrush);
        }
    }

    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    if (n <= kMaxLabelledPoints) {
        for (std::size_t i = 0; i < n; ++i) {
            ticker->addTick(static_cast<double>(i + 1),
                            QStringLiteral("%1\nid %2").arg(QString::fromStdString(labels.label(kept[i])), groupedNumber(kept[i])));
        }
        xAxis->setLabel(QStringLiteral("final kept ids, ascending"));
    } else {
        // Four ids: "128,255" five times side by side overflows a cell a third of a laptop's screen wide.
        const std::size_t step = std::max<std::size_t>(1, (n + 3) / 4);
        for (std::size_t i = 0; i < n; i += step) ticker->addTick(static_cast<double>(i + 1), groupedNumber(kept[i]));
        xAxis->setLabel(QStringLiteral("final kept ids, ascending (ticks show ids)"));
    }
    xAxis->setTicker(ticker);
    xAxis->setRange(0.4, static_cast<double>(n) + 0.6);
    yAxis->setRange(0.0, 1.05);
    replot(QCustomPlot::rpQueuedRefresh);
}

}  // namespace samplescope::ui
