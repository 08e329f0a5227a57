#include "ui/stages/text_element.h"

#include <unordered_map>

#include <QFontMetrics>
#include <QTextOption>

#include "ui/common/font_scale.h"

namespace samplescope::ui {

namespace {

// Keyed by the font's key and the text; the GUI thread is the only reader. Past
// a bound (texts made from data are many over a session) it starts again.
std::shared_ptr<const TextElement::LaidOut> layOut(const QFont& font, const QString& text) {
    // Never destroyed: no laid-out text (and its font) is torn down after the application object.
    static auto& cache = *new std::unordered_map<QString, std::shared_ptr<const TextElement::LaidOut>>;
    constexpr std::size_t kMaxTexts = 1024;
    const QString key = fontKey(font) + QLatin1Char('\x1f') + text;
    if (const auto found = cache.find(key); found != cache.end()) return found->second;
    if (cache.size() >= kMaxTexts) cache.clear();
    auto made = std::make_shared<TextElement::LaidOut>();
    made->size = QFontMetrics(font).boundingRect(0, 0, 0, 0, Qt::TextDontClip, text).size();
    // Each line centred in the width of the widest, as drawText's Qt::AlignHCenter centres it in its
    // rectangle (the block is centred in the element's rectangle when drawn, so a width a fraction wider
    // than the widest line moves no line).
    made->text = preparedText(text, font, made->size.width(), Qt::AlignHCenter);
    cache.emplace(key, made);
    return made;
}

}  // namespace

QStaticText preparedText(const QString& text, const QFont& font, std::optional<int> width, Qt::Alignment alignment) {
    // QStaticText breaks lines at U+2028 only; drawText breaks at '\n' too.
    QString lines = text;
    lines.replace(QLatin1Char('\n'), QChar::LineSeparator);
    QStaticText made(lines);
    made.setTextFormat(Qt::PlainText);
    made.setPerformanceHint(QStaticText::AggressiveCaching);
    if (width) {
        made.setTextWidth(*width);
        QTextOption option = made.textOption();
        option.setAlignment(alignment & Qt::AlignHorizontal_Mask);
        made.setTextOption(option);
    }
    made.prepare(QTransform(), font);
    return made;
}

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
