#include "ui/stages/item_text.h"

#include <cmath>
#include <memory>
#include <unordered_map>

#include <QFontMetrics>
#include <QStaticText>

#include "ui/common/font_scale.h"
#include "ui/stages/text_element.h"

namespace samplescope::ui {

namespace {

struct LaidOut {
    QRect box;         // QFontMetrics::boundingRect(0, 0, 0, 0, Qt::TextDontClip | alignment, text), as QCPItemText measures
    QSizeF size;       // the same by QFontMetricsF
    QStaticText text;  // its lines aligned in the box's width as drawText aligns them
};

// Keyed by the font's key, the alignment and the text; the GUI thread is the
// only reader. Past a bound (labels made from data are many) it starts again.
const LaidOut& layOut(const QFont& font, Qt::Alignment alignment, const QString& text) {
    // Never destroyed: no laid-out text (and its font) is torn down after the application object.
    static auto& cache = *new std::unordered_map<QString, std::unique_ptr<const LaidOut>>;
    constexpr std::size_t kMaxTexts = 1024;
    const QString key = fontKey(font) + QLatin1Char('\x1f') + QString::number(alignment.toInt()) + QLatin1Char('\x1f') + text;
    if (const auto found = cache.find(key); found != cache.end()) return *found->second;
    if (cache.size() >= kMaxTexts) cache.clear();
    auto made = std::make_unique<LaidOut>();
    const int flags = Qt::TextDontClip | static_cast<int>(alignment.toInt());
    made->box = QFontMetrics(font).boundingRect(0, 0, 0, 0, flags, text);
    made->size = QFontMetricsF(font).boundingRect(QRectF(0, 0, 10000, 10000), Qt::AlignLeft | Qt::AlignTop, text).size();
    made->text = preparedText(text, font, made->box.width(), alignment);
    return *cache.emplace(key, std::move(made)).first->second;
}

}  // namespace

QSizeF ItemText::textSize() const { return layOut(mFont, mTextAlignment, mText).size; }

void ItemText::draw(QCPPainter* painter) {
    // Lines centred or set right in the box land a fraction of a pixel apart from drawText's; those are drawn
    // by QCPItemText itself (no stage label is: they are left-aligned).
    if ((mTextAlignment & Qt::AlignHorizontal_Mask) != Qt::AlignLeft) {
        QCPItemText::draw(painter);
        return;
    }
    const QFont font = mainFont();
    const LaidOut& laid = layOut(font, mTextAlignment, mText);
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
