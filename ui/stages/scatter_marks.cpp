#include "ui/stages/scatter_marks.h"

#include <QHash>
#include <QPainter>
#include <QPixmap>

namespace samplescope::ui {

QCPScatterStyle discScatter(const QColor& color) {
    // Never destroyed, so no pixmap outlives the application object.
    static auto* known = new QHash<QRgb, QPixmap>;
    auto it = known->find(color.rgba());
    if (it == known->end()) {
        QPixmap disc(5, 5);  // odd, so the disc's centre is a pixel's centre where QCustomPlot places it
        disc.fill(Qt::transparent);
        QPainter painter(&disc);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setPen(Qt::NoPen);
        painter.setBrush(color);
        painter.drawEllipse(QPointF(2.5, 2.5), 1.75, 1.75);
        painter.end();
        it = known->insert(color.rgba(), disc);
    }
    return QCPScatterStyle(*it);
}

QCPScatterStyle ringScatter(const QColor& pen, const QColor& fill, int diameter) {
    static auto* known = new QHash<QString, QPixmap>;
    const QString key = QStringLiteral("%1 %2 %3").arg(pen.rgba()).arg(fill.rgba()).arg(diameter);
    auto it = known->find(key);
    if (it == known->end()) {
        const int side = diameter + 2 + (diameter % 2 == 0 ? 1 : 0);  // odd, room for the pen
        QPixmap ring(side, side);
        ring.fill(Qt::transparent);
        QPainter painter(&ring);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setPen(QPen(pen, 1.0));
        painter.setBrush(fill);
        painter.drawEllipse(QPointF(side / 2.0, side / 2.0), diameter / 2.0, diameter / 2.0);
        painter.end();
        it = known->insert(key, ring);
    }
    return QCPScatterStyle(*it);
}

}  // namespace samplescope::ui
