#include "ui/stages/item_text.h"

#include <cmath>
#include <memory>

#include <QFontMetrics>
#include <QStaticText>

#include "ui/stages/text_cache.h"

namespace samplescope::ui {

namespace {

struct LaidOut {
    QRect box;         // QFontMetrics::boundingRect(0, 0, 0, 0, Qt::TextDontClip | alignment, text), as QCPItemText measures
    QSizeF size;       // the same by QFontMetricsF
    QStaticText text;  // its lines aligned in the box's width as drawText aligns them
};

// Keyed by the alignment and the text too.
std::shared_ptr<const LaidOut> layOut(const QFont& font, Qt::Alignment alignment, const QString& text) {
    return cachedText<LaidOut>(font, QString::number(alignment.toInt()) + QLatin1Char('\x1f') + text, 1024, [&] {
        LaidOut made;
        const int flags = Qt::TextDontClip | static_cast<int>(alignment.toInt());
        made.box = QFontMetrics(font).boundingRect(0, 0, 0, 0, flags, text);
        made.size = QFontMetricsF(font).boundingRect(QRectF(0, 0, 10000, 10000), Qt::AlignLeft | Qt::AlignTop, text).size();
        made.text = preparedText(text, font, made.box.width(), alignment);
        return made;
    });
}

}  // namespace

QSizeF ItemText::textSize() const { return layOut(mFont, mTextAlignment, mText)->size; }

void ItemText::draw(QCPPainter* painter) {
    // Lines centred or set right in the box land a fraction of a pixel apart from drawText's; those are drawn
    // by QCPItemText itself (no stage label is: they are left-aligned).
    if ((mTextAlignment & Qt::AlignHorizontal_Mask) != Qt::AlignLeft) {
        QCPItemText::draw(painter);
        return;
    }
    const QFont font = mainFont();
    const auto laid_out = layOut(font, mTextAlignment, mText);
    const LaidOut& laid = *laid_out;
    // The box around the text (its padding added) placed at the position by the position alignment, in
    // coordinates turned with the item; the text inside it after the padding.
    const QPointF at = position->pixelPosition();
    QTransform turned = painter->transform();
    turned.translate(at.x(), at.y());
    if (!qFuzzyIsNull(mRotation)) turned.rotate(mRotation);
    QRect text_rect = laid.box;
    QRect box = text_rect.adjusted(-mPadding.left(), -mPadding.top(), mPadding.right(), mPadding.bottom());
    const QPoint corner = getTextDrawPoint(QPointF(0.0, 0.0), box, mPositionAlignment).toPoint();
    box.moveTopLeft(corner);
    text_rect.moveTopLeft(corner + QPoint(mPadding.left(), mPadding.top()));
    const int pen_room = static_cast<int>(std::ceil(mainPen().widthF()));
    const QRect reach = box.adjusted(-pen_room, -pen_room, pen_room, pen_room);
    if (!turned.mapRect(reach).intersects(painter->transform().mapRect(clipRect()))) return;
    painter->setTransform(turned);
    const bool brush = mainBrush().style() != Qt::NoBrush && mainBrush().color().alpha() != 0;
    const bool pen = mainPen().style() != Qt::NoPen && mainPen().color().alpha() != 0;
    if (brush || pen) {
        painter->setPen(mainPen());
        painter->setBrush(mainBrush());
        painter->drawRect(box);
    }
    painter->setBrush(Qt::NoBrush);
    painter->setPen(QPen(mainColor()));
    painter->setFont(font);
    painter->drawStaticText(text_rect.topLeft(), laid.text);
}

}  // namespace samplescope::ui
