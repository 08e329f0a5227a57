// A QCPTextElement that measures and lays out its text once per text and font.
// QCustomPlot measures a text element (two layouts of the whole text) at every
// replot and at every size query, and shapes it again to draw it; a stage plot
// also sets its notes' text twice a replot (whole, then folded when the plot is
// short) and asks for sizes again to fit them. The measured size and the laid
// out text (QStaticText) are kept in a process-wide cache, so a text seen
// before (a title, a fixed note, the other of the two forms) costs a lookup.
// It draws what QCPTextElement draws with its default flags (centred, the lines
// as given).
#pragma once

#include <memory>

#include <QFont>
#include <QSize>
#include <QStaticText>
#include <QString>

#include <qcustomplot.h>

namespace samplescope::ui {

class TextElement : public QCPTextElement {
public:
    TextElement(QCustomPlot* plot, const QString& text, const QFont& font) : QCPTextElement(plot, text, font) {}

    // As QCPTextElement's (the text's bounding box plus the margins; no upper width).
    QSize minimumOuterSizeHint() const override;
    QSize maximumOuterSizeHint() const override;

    struct LaidOut {
        QSize size;  // QFontMetrics::boundingRect of the text, as QCPTextElement measures it
        QStaticText text;
    };

protected:
    void draw(QCPPainter* painter) override;

private:
    const LaidOut& laidOut(const QFont& font) const;

    mutable std::shared_ptr<const LaidOut> laid_out_;
    mutable QString laid_out_text_;
    mutable QFont laid_out_font_;
};

}  // namespace samplescope::ui
