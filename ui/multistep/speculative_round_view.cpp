#include "ui/multistep/speculative_round_view.h"

#include <algorithm>

#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "ui/multistep/uniform_strip.h"

namespace samplescope::ui {

namespace {

constexpr int kColumnWidth = 168;
constexpr int kWordChars = 11;  // a tick label beyond this is elided (the column's tooltip has it all)

QString qs(const std::string& text) { return QString::fromStdString(text); }
QString num(double value) { return QString::number(value, 'f', 3); }
QString quoted(const std::string& text) { return QStringLiteral("\u201c%1\u201d").arg(qs(text).toHtmlEscaped()); }
QString word(const std::string& text) {
    const QString s = qs(text);
    return s.size() <= kWordChars ? s : s.left(kWordChars - 1) + QChar(0x2026);
}
QString swatch(const QColor& colour, const QString& text) {
    return QStringLiteral("<span style='color:%1; font-weight:bold;'>%2</span>").arg(colour.name(), text);
}

}  // namespace

QString acceptRuleText(const SpecPreset& preset, bool accepted) {
    switch (preset.accept) {
        case SpecRule::AcceptVllm:
            return accepted ? QStringLiteral("p/q \u2265 u") : QStringLiteral("p/q < u");
        case SpecRule::AcceptFlashInfer:
            return accepted ? QStringLiteral("u\u00b7q < p") : QStringLiteral("u\u00b7q \u2265 p");
        default:
            return accepted ? QStringLiteral("u < min(1, p/q)") : QStringLiteral("u \u2265 min(1, p/q)");
    }
}

SpecColumn::SpecColumn(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("spec_column"));
    setFrameShape(QFrame::StyledPanel);
    setMinimumWidth(kColumnWidth);
    title_ = new QLabel(this);
    title_->setObjectName(QStringLiteral("spec_column_title"));
    title_->setWordWrap(true);
    numbers_ = new QLabel(this);
    numbers_->setObjectName(QStringLiteral("spec_column_numbers"));
    numbers_->setWordWrap(true);
    plot_ = new QCustomPlot(this);
    plot_->setObjectName(QStringLiteral("spec_column_plot"));
    plot_->setMinimumHeight(110);
    plot_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    QFont tick_font = font();
    tick_font.setPointSizeF(8);
    for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) {
        axis->setTickLabelFont(tick_font);
        axis->setLabelFont(tick_font);
    }
    plot_->xAxis->ticker()->setTickCount(3);
    // Meet the count: a narrow column otherwise gets 0.025 steps whose labels run together.
    plot_->xAxis->ticker()->setTickStepStrategy(QCPAxisTicker::tssMeetTickCount);
    plot_->yAxis->setRangeReversed(true);
    plot_->yAxis->grid()->setVisible(false);
    plot_->yAxis->setTickLength(0, 0);
    plot_->yAxis->setSubTickLength(0, 0);
    plot_->xAxis->setSubTicks(false);
    plot_->axisRect()->setAutoMargins(QCP::msLeft | QCP::msBottom | QCP::msTop);
    plot_->axisRect()->setMargins(QMargins(0, 0, 6, 0));
    strip_ = new UniformStrip(this);
    verdict_ = new QLabel(this);
    verdict_->setObjectName(QStringLiteral("spec_column_verdict"));
    verdict_->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 3, 4, 3);
    layout->setSpacing(1);
    layout->addWidget(title_);
    layout->addWidget(numbers_);
    layout->addWidget(plot_, 1);
    layout->addWidget(strip_);
    layout->addWidget(verdict_);
}

void SpecColumn::drawBars(const std::vector<SpecBar>& bars, std::int32_t marked, bool two, const QColor& single) {
    plot_->clearPlottables();
    plot_->clearItems();
    const auto n = static_cast<int>(bars.size());
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double top = 0.0;
    QVector<double> keys, q, p;
    for (int i = 0; i < n; ++i) {
        const SpecBar& bar = bars[static_cast<std::size_t>(i)];
        ticker->addTick(i, (bar.id == marked ? QStringLiteral("\u25b8 ") : QString()) + word(bar.text));
        keys << i;
        q << bar.q;
        p << bar.p;
        top = std::max({top, bar.q, two ? bar.p : 0.0});
        if (bar.id == marked) {
            auto* band = new QCPItemRect(plot_);
            band->topLeft->setTypeX(QCPItemPosition::ptAxisRectRatio);
            band->bottomRight->setTypeX(QCPItemPosition::ptAxisRectRatio);
            band->topLeft->setCoords(0.0, i - 0.5);
            band->bottomRight->setCoords(1.0, i + 0.5);
            band->setPen(Qt::NoPen);
            band->setBrush(QColor(0xCC, 0x79, 0xA7, 55));
            band->setLayer(QStringLiteral("background"));
        }
    }
    plot_->yAxis->setTicker(ticker);
    plot_->yAxis->setRange(-0.6, std::max(n, 1) - 0.4);
    // One scale for q and p: the larger of the two decides it.
    plot_->xAxis->setRange(0.0, top > 0.0 ? top * 1.08 : 1.0);
    const auto add = [&](const QVector<double>& values, const QColor& colour, const QString& name) {
        auto* bars_plot = new QCPBars(plot_->yAxis, plot_->xAxis);
        bars_plot->setName(name);
        bars_plot->setData(keys, values, true);
        bars_plot->setBrush(colour);
        bars_plot->setPen(QPen(colour.darker(140), 0.8));
        bars_plot->setWidth(two ? 0.38 : 0.7);
        return bars_plot;
    };
    if (two) {
        auto* group = new QCPBarsGroup(plot_);
        group->setSpacing(1);
        add(q, spec_colours::draft(), QStringLiteral("q"))->setBarsGroup(group);
        add(p, spec_colours::target(), QStringLiteral("p"))->setBarsGroup(group);
    } else {
        add(q, single, QStringLiteral("probability"));
    }
    plot_->replot();
}

void SpecColumn::showPosition(const SpecPositionRecord& at, std::size_t i, std::size_t stop, const SpecPreset& preset) {
    position_ = i;
    bars_ = at.bars;
    kind_ = at.tested ? Kind::Tested : Kind::Untested;
    const bool tested = at.tested;
    title_->setText(QStringLiteral("<b>Position %1</b> \u00b7 draft proposed %2").arg(i).arg(quoted(at.text)));
    numbers_->setText(QStringLiteral("%1 = %2 &nbsp;%3 = %4<br>expected acceptance \u03a3 min(p, q) = %5")
                          .arg(swatch(spec_colours::draft(), QStringLiteral("q")), num(at.q),
                               swatch(spec_colours::target(), QStringLiteral("p")), num(at.p), num(at.overlap)));
    drawBars(at.bars, at.token, true, {});
    const QColor pass = spec_colours::accept().lighter(150);
    const QColor fail = spec_colours::reject().lighter(160);
    std::vector<UniformStrip::Stretch> stretches{
        {0.0, at.acceptance, pass, QStringLiteral("accept"), tested && at.accepted},
        {at.acceptance, 1.0 - at.acceptance, fail, QStringLiteral("reject"), tested && !at.accepted}};
    std::vector<UniformStrip::Edge> edges;
    if (at.acceptance > 0.0 && at.acceptance < 1.0) edges.push_back({at.acceptance, QStringLiteral("min(1, p/q) %1").arg(num(at.acceptance))});
    else edges.push_back({at.acceptance, QStringLiteral("min(1, p/q) = %1").arg(at.acceptance == 0.0 ? 0 : 1)});
    QString note;
    if (at.greedy) note = QStringLiteral("greedy: no uniform");
    strip_->setStrip(std::move(stretches), std::move(edges), at.u, note);
    strip_->setDimmed(!tested);
    plot_->setEnabled(tested);
    QString verdict;
    if (!tested) {
        verdict = QStringLiteral("<span style='color:#777777;'>not tested: the chain stopped at position %1</span>").arg(stop);
        if (at.u) verdict += QStringLiteral("<br><span style='color:#777777;'>(%1 draws its uniform anyway)</span>").arg(qs(std::string(preset.name)));
    } else if (at.greedy) {
        verdict = at.accepted ? QStringLiteral("<b style='color:%1;'>\u2713 accepted</b>: it is the target's argmax").arg(spec_colours::accept().darker(120).name())
                              : QStringLiteral("<b style='color:%1;'>\u2717 rejected</b>: not the target's argmax").arg(spec_colours::reject().name());
    } else {
        verdict = at.accepted
                      ? QStringLiteral("<b style='color:%1;'>\u2713 accepted</b>: %2").arg(spec_colours::accept().darker(120).name(), acceptRuleText(preset, true))
                      : QStringLiteral("<b style='color:%1;'>\u2717 rejected</b>: %2").arg(spec_colours::reject().name(), acceptRuleText(preset, false));
    }
    verdict_->setText(verdict);
    setStyleSheet(tested ? QString() : QStringLiteral("QLabel { color: #777777; }"));
    QString tip = QStringLiteral("Position %1: the draft proposed %2 (id %3) from q")
                      .arg(i).arg(quoted(at.text)).arg(at.token);
    if (at.draft_u) tip += QStringLiteral(" with u = %1").arg(QString::number(*at.draft_u, 'g', 17));
    tip += QStringLiteral(".<br>q(x) = %1, p(x) = %2, min(1, p/q) = %3; the draft kept %4 ids, the target %5.<br>")
               .arg(QString::number(at.q, 'g', 17), QString::number(at.p, 'g', 17), QString::number(at.acceptance, 'g', 17))
               .arg(at.q_kept)
               .arg(at.p_kept);
    for (const auto& bar : at.bars) {
        tip += QStringLiteral("<br>%1: q %2, p %3").arg(qs(bar.text).toHtmlEscaped(), num(bar.q), num(bar.p));
    }
    setToolTip(tip);
}

void SpecColumn::showFinal(const SpecFinalRecord& final, const SpecPreset& preset) {
    kind_ = Kind::Final;
    position_ = final.position;
    bars_ = final.bars;
    const QColor colour = final.bonus ? spec_colours::target() : spec_colours::residual();
    if (final.bonus) {
        title_->setText(QStringLiteral("<b>Bonus token</b> \u00b7 all accepted: drawn from p at position %1").arg(final.position));
        numbers_->setText(QStringLiteral("%1 of position %2, %3 ids kept").arg(swatch(colour, QStringLiteral("p"))).arg(final.position).arg(final.kept));
    } else {
        title_->setText(QStringLiteral("<b>Residual</b> at position %1 \u00b7 redrawn after the rejection").arg(final.position));
        numbers_->setText(QStringLiteral("%1, %2 ids").arg(swatch(colour, QStringLiteral("normalize(max(0, p \u2212 q))"))).arg(final.kept));
    }
    drawBars(final.bars, final.token, false, colour);
    std::vector<UniformStrip::Stretch> stretches;
    int shade = 0;
    for (const auto& segment : final.segments) {
        QColor c = colour.lighter(shade++ % 2 == 0 ? 130 : 165);
        if (segment.id == final.token) c = colour;
        stretches.push_back({segment.start, segment.width, c, word(segment.text), segment.id == final.token});
    }
    strip_->setStrip(std::move(stretches), {}, final.u, final.u ? QString() : QStringLiteral("greedy: its argmax"));
    strip_->setDimmed(false);
    plot_->setEnabled(true);
    QString verdict = QStringLiteral("<b>\u2192 %1</b>").arg(quoted(final.text));
    if (final.u) verdict += QStringLiteral(": the ids in ascending order, u falls in its stretch");
    if (final.empty_residual) verdict += QStringLiteral("<br>max(0, p \u2212 q) was empty: %1's own rule chose").arg(qs(std::string(preset.name)));
    if (final.fell_back) verdict += QStringLiteral("<br>(rounding: the draw's fallback)");
    verdict_->setText(verdict);
    setStyleSheet(QString());
    QString tip = final.bonus ? QStringLiteral("All proposed tokens were accepted: one more token comes from the target's p at position %1.").arg(final.position)
                              : QStringLiteral("Position %1 was rejected: its token comes from max(0, p \u2212 q), normalised, the mass p has where "
                                               "the draft under-proposed, so that the emitted token follows p exactly.").arg(final.position);
    tip += QStringLiteral("<br>Drawn: %1 (id %2)").arg(quoted(final.text)).arg(final.token);
    if (final.u) tip += QStringLiteral(" with u = %1").arg(QString::number(*final.u, 'g', 17));
    for (const auto& bar : final.bars) tip += QStringLiteral("<br>%1: %2").arg(qs(bar.text).toHtmlEscaped(), num(bar.q));
    setToolTip(tip);
}

SpeculativeRoundView::SpeculativeRoundView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("spec_round_view"));
    row_ = new QHBoxLayout(this);
    row_->setContentsMargins(0, 0, 0, 0);
    row_->setSpacing(4);
}

void SpeculativeRoundView::showRound(const SpecRoundRecord* round, const SpecPreset& preset) {
    for (auto* column : columns_) {
        row_->removeWidget(column);
        column->deleteLater();
    }
    columns_.clear();
    if (!round) return;
    const std::size_t k = round->positions.size();
    const std::size_t stop = round->final.bonus ? k : round->final.position;
    const auto add = [&] {
        auto* column = new SpecColumn(this);
        row_->addWidget(column, 1);
        columns_.push_back(column);
        return column;
    };
    for (std::size_t i = 0; i < k && i <= stop; ++i) add()->showPosition(round->positions[i], i, stop, preset);
    add()->showFinal(round->final, preset);
    for (std::size_t i = stop + 1; i < k; ++i) add()->showPosition(round->positions[i], i, stop, preset);
}

}  // namespace samplescope::ui
