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

}  // namespace samplescope::ui
