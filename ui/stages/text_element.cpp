#include "ui/stages/text_element.h"

#include <QFontMetrics>

#include "ui/stages/text_cache.h"

namespace samplescope::ui {

namespace {

std::shared_ptr<const TextElement::LaidOut> layOut(const QFont& font, const QString& text) {
    return cachedText<TextElement::LaidOut>(font, text, 1024, [&] {
        TextElement::LaidOut made;
        made.size = QFontMetrics(font).boundingRect(0, 0, 0, 0, Qt::TextDontClip, text).size();
        // Each line centred in the width of the widest, as drawText's Qt::AlignHCenter centres it in its
        // rectangle (the block is centred in the element's rectangle when drawn, so a width a fraction wider
        // than the widest line moves no line).
        made.text = preparedText(text, font, made.size.width(), Qt::AlignHCenter);
        return made;
    });
}

}  // namespace

const TextElement::LaidOut& TextElement::laidOut(const QFont& font) const {
    if (!laid_out_ || laid_out_text_ != mText || laid_out_font_ != font) {
        laid_out_ = layOut(font, mText);
        laid_out_text_ = mText;
        laid_out_font_ = font;
    }
    return *laid_out_;
}

QSize TextElement::minimumOuterSizeHint() const {
    QSize size = laidOut(mFont).size;
    size.rwidth() += mMargins.left() + mMargins.right();
    size.rheight() += mMargins.top() + mMargins.bottom();
    return size;
}

QSize TextElement::maximumOuterSizeHint() const {
    QSize size = laidOut(mFont).size;
    size.setWidth(QWIDGETSIZE_MAX);
    size.rheight() += mMargins.top() + mMargins.bottom();
    return size;
}

void TextElement::draw(QCPPainter* painter) {
    if (mText.isEmpty()) return;
    const QFont font = mainFont();
    const LaidOut& laid = laidOut(font);
    painter->setFont(font);
    painter->setPen(QPen(mainTextColor()));
    // Centred in the element's rectangle, as QCPTextElement's drawText with Qt::AlignCenter places it.
    const QSizeF size = laid.text.size();
    const QPointF top_left(mRect.x() + (mRect.width() - size.width()) / 2.0, mRect.y() + (mRect.height() - size.height()) / 2.0);
    painter->drawStaticText(top_left, laid.text);
    mTextBoundingRect = QRectF(top_left, size).toRect();
}

}  // namespace samplescope::ui
