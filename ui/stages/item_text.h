// A QCPItemText that measures and lays out its text once per text, font and
// alignment. QCustomPlot shapes an item's text twice at every replot (to
// measure its box, then to draw it), and a stage plot's labels (the chosen
// token's q, a threshold, a cut) are drawn at every key press: shaping was a
// tenth of a plot's redraw. The measured box and the laid-out text
// (QStaticText) are kept in a process-wide cache, as TextElement's are. It
// draws what QCPItemText draws (its box, padding, position alignment and
// rotation) for left-aligned text; other text QCPItemText draws itself.
#pragma once

#include <QRect>
#include <QSizeF>

#include <qcustomplot.h>

namespace samplescope::ui {

class ItemText : public QCPItemText {
public:
    explicit ItemText(QCustomPlot* plot) : QCPItemText(plot) {}

    // The text's box as QFontMetricsF measures it, for placing the item (StagePlot::placeLabels).
    QSizeF textSize() const;

protected:
    void draw(QCPPainter* painter) override;
};

}  // namespace samplescope::ui
