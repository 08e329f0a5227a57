// A QCPTextElement that measures its text once per text and font. QCustomPlot
// measures a text element (two layouts of the whole text) at every replot and
// at every size query, and a stage plot asks for sizes again to fit its notes:
// at a key press that shaping was about a tenth of redrawing a plot.
#pragma once

#include <QFont>
#include <QFontMetrics>
#include <QSize>
#include <QString>

#include <qcustomplot.h>

namespace samplescope::ui {

class TextElement : public QCPTextElement {
public:
    TextElement(QCustomPlot* plot, const QString& text, const QFont& font) : QCPTextElement(plot, text, font) {}

    // As QCPTextElement's (the text's bounding box plus the margins; no upper width).
    QSize minimumOuterSizeHint() const override {
        QSize size = textSize();
        size.rwidth() += mMargins.left() + mMargins.right();
        size.rheight() += mMargins.top() + mMargins.bottom();
        return size;
    }
    QSize maximumOuterSizeHint() const override {
        QSize size = textSize();
        size.setWidth(QWIDGETSIZE_MAX);
        size.rheight() += mMargins.top() + mMargins.bottom();
        return size;
    }

private:
    QSize textSize() const {
        if (!measured_ || measured_text_ != mText || measured_font_ != mFont) {
            measured_size_ = QFontMetrics(mFont).boundingRect(0, 0, 0, 0, Qt::TextDontClip, mText).size();
            measured_text_ = mText;
            measured_font_ = mFont;
            measured_ = true;
        }
        return measured_size_;
    }

    mutable bool measured_ = false;
    mutable QString measured_text_;
    mutable QFont measured_font_;
    mutable QSize measured_size_;
};

}  // namespace samplescope::ui
