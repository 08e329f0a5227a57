#include "ui/multistep/acceptance_plot.h"

#include <algorithm>

#include "ui/common/palette.h"

namespace samplescope::ui {

AcceptancePlot::AcceptancePlot(QWidget* parent) : QCustomPlot(parent) {
    setObjectName(QStringLiteral("acceptance_plot"));
    QFont small = font();
    small.setPointSizeF(8);
    for (QCPAxis* axis : {xAxis, yAxis}) {
        axis->setTickLabelFont(small);
        axis->setLabelFont(small);
    }
    xAxis->setLabel(QStringLiteral("round"));
    yAxis->setLabel(QStringLiteral("rate"));
    yAxis->setRange(0.0, 1.05);
    QSharedPointer<QCPAxisTickerFixed> rounds(new QCPAxisTickerFixed);
    rounds->setTickStep(1.0);
    rounds->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    xAxis->setTicker(rounds);
    upper_ = addGraph();
    lower_ = addGraph();
    const QColor band(0xE6, 0x9F, 0x00, 45);
    for (QCPGraph* graph : {upper_, lower_}) {
        graph->setPen(Qt::NoPen);
        graph->removeFromLegend();
    }
    upper_->setBrush(band);
    upper_->setChannelFillGraph(lower_);
    upper_->setName(QStringLiteral("expected \u00b1 1.96 SE"));
    upper_->addToLegend();
    expected_ = addGraph();
    expected_->setName(QStringLiteral("expected"));
    expected_->setPen(QPen(palette::kOrange.darker(115), 2.0, Qt::DashLine));
    measured_ = addGraph();
    measured_->setName(QStringLiteral("measured"));
    measured_->setPen(QPen(palette::kBlue, 2.0));
    measured_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, palette::kBlue, Qt::white, 5));
    shown_ = new QCPItemStraightLine(this);
    shown_->setPen(QPen(palette::kReddishPurple, 1.5));
    shown_->setVisible(false);
    legend->setVisible(true);
    legend->setFont(small);
    legend->setRowSpacing(-2);
    // The legend in a row of its own above the axes: inside them it hid the curves of a plot this small.
    legend->setBrush(Qt::NoBrush);
    legend->setBorderPen(Qt::NoPen);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, legend);
    plotLayout()->setRowStretchFactor(0, 0.001);
    legend->setMargins(QMargins(2, 0, 2, 0));
    setMinimumSize(220, 120);
}

void AcceptancePlot::showRounds(const std::vector<SpecRoundRecord>& rounds, int shown) {
    QVector<double> x, rate, expected, upper, lower;
    for (const auto& round : rounds) {
        const SpeculativeStats& stats = round.stats;
        x << static_cast<double>(round.index + 1);
        rate << stats.rate();
        expected << stats.expected_rate();
        upper << std::min(1.0, stats.expected_rate() + 1.96 * stats.standard_error());
        lower << std::max(0.0, stats.expected_rate() - 1.96 * stats.standard_error());
    }
    measured_->setData(x, rate, true);
    expected_->setData(x, expected, true);
    upper_->setData(x, upper, true);
    lower_->setData(x, lower, true);
    xAxis->setRange(0.5, std::max<double>(static_cast<double>(rounds.size()), 1.0) + 0.5);
    const bool marked = shown >= 0 && static_cast<std::size_t>(shown) < rounds.size();
    shown_->setVisible(marked);
    if (marked) {
        const double at = static_cast<double>(rounds[static_cast<std::size_t>(shown)].index + 1);
        shown_->point1->setCoords(at, 0.0);
        shown_->point2->setCoords(at, 1.0);
    }
    replot();
}

}  // namespace samplescope::ui
