#include "ui/multistep/uniform_strip.h"

#include <algorithm>

#include <QPainter>
#include <QPainterPath>

#include "ui/common/palette.h"

namespace samplescope::ui {

namespace {

constexpr int kSide = 6;  // room at each end for a label centred on 0 or 1

QString number(double value) { return QString::number(value, 'f', 3); }

}  // namespace

UniformStrip::UniformStrip(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("uniform_strip"));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void UniformStrip::setStrip(std::vector<Stretch> stretches, std::vector<Edge> edges, std::optional<double> u,
                            const QString& note) {
    stretches_ = std::move(stretches);
    edges_ = std::move(edges);
    u_ = u;
    note_ = note;
    setToolTip(u ? QStringLiteral("u = %1").arg(QString::number(*u, 'g', 17)) : note);
    update();
}

void UniformStrip::setDimmed(bool dimmed) {
    dimmed_ = dimmed;
    update();
}

QSize UniformStrip::sizeHint() const { return {180, 3 * fontMetrics().height() + 8}; }
QSize UniformStrip::minimumSizeHint() const { return {100, sizeHint().height()}; }

QRectF UniformStrip::barRect() const {
    const int line = fontMetrics().height();
    return QRectF(kSide + 0.5, line + 2.5, std::max(10, width() - 2 * kSide - 1), line);
}

double UniformStrip::xOf(double at) const {
    const QRectF bar = barRect();
    return bar.left() + std::clamp(at, 0.0, 1.0) * bar.width();
}

void UniformStrip::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing, true);
    if (dimmed_) painter.setOpacity(0.45);
    const QRectF bar = barRect();
    const QFontMetrics metrics = fontMetrics();
    painter.setPen(Qt::NoPen);
    painter.setBrush(QColor(0xEE, 0xEE, 0xEE));
    painter.drawRect(bar);
    for (const auto& stretch : stretches_) {
        const QRectF box(xOf(stretch.start), bar.top(), xOf(stretch.start + stretch.width) - xOf(stretch.start), bar.height());
        painter.setPen(QPen(Qt::white, 0.5));
        painter.setBrush(stretch.colour);
        painter.drawRect(box);
        if (!stretch.label.isEmpty() && metrics.horizontalAdvance(stretch.label) + 4 <= box.width()) {
            painter.setPen(stretch.colour.lightness() < 128 ? Qt::white : Qt::black);
            painter.drawText(box, Qt::AlignCenter, stretch.label);
        }
    }
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(QColor(0x77, 0x77, 0x77), 1.0));
    painter.drawRect(bar);
    for (const auto& stretch : stretches_) {
        if (!stretch.chosen) continue;
        painter.setPen(palette::chosenPen());
        painter.drawRect(QRectF(xOf(stretch.start), bar.top(), std::max(2.0, xOf(stretch.start + stretch.width) - xOf(stretch.start)),
                                bar.height()));
    }
    // Labels below: 0 and 1, then each edge, skipped where it would overwrite one already written.
    painter.setPen(QColor(0x33, 0x33, 0x33));
    std::vector<QRectF> written;
    const auto below = [&](double at, const QString& text, bool always) {
        const double w = metrics.horizontalAdvance(text) + 2;
        double left = std::clamp(xOf(at) - w / 2, 0.0, std::max(0.0, width() - w));
        const QRectF box(left, bar.bottom() + 1, w, metrics.height());
        for (const auto& other : written) {
            if (!always && other.intersects(box)) return;
        }
        written.push_back(box);
        painter.drawText(box, Qt::AlignCenter, text);
    };
    for (const auto& edge : edges_) below(edge.at, edge.label, true);
    below(0.0, QStringLiteral("0"), false);
    below(1.0, QStringLiteral("1"), false);
    // u above the strip, its line through it.
    if (u_) {
        const double x = xOf(*u_);
        painter.setPen(QPen(palette::kBlack, 2.0));
        painter.drawLine(QPointF(x, bar.top() - 3), QPointF(x, bar.bottom() + 3));
        QPainterPath arrow;
        arrow.moveTo(x - 4, bar.top() - 7);
        arrow.lineTo(x + 4, bar.top() - 7);
        arrow.lineTo(x, bar.top() - 2);
        arrow.closeSubpath();
        painter.fillPath(arrow, palette::kBlack);
        const QString text = QStringLiteral("u = %1").arg(number(*u_));
        const double w = metrics.horizontalAdvance(text) + 2;
        const double left = x + 6 + w <= width() ? x + 6 : std::max(0.0, x - 6 - w);
        painter.drawText(QRectF(left, 0, w, metrics.height()), Qt::AlignLeft | Qt::AlignVCenter, text);
    } else if (!note_.isEmpty()) {
        painter.setPen(QColor(0x55, 0x55, 0x55));
        painter.drawText(QRectF(0, 0, width(), metrics.height()), Qt::AlignLeft | Qt::AlignVCenter,
                         metrics.elidedText(note_, Qt::ElideRight, width()));
    }
}

}  // namespace samplescope::ui
