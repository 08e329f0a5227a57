// A QCustomPlot drawn into one opaque paint buffer. QCustomPlot clears its
// buffers to transparent at each replot and, at each repaint, fills the widget
// with its background brush and blends every buffer over it: about a
// nanosecond a pixel, the largest part of repainting a plot. Here every layer
// shares one buffer (the overlay, where nothing is drawn, included), a layer
// below all others fills the viewport with the background brush, and the
// widget copies that buffer instead of blending it; nor is the buffer cleared
// before a replot, as the fill covers it. What was blended over the brush at
// the repaint is blended over it in the buffer: the same picture, up to a few
// levels of rounding at antialiased edges.
#pragma once

#include <QBrush>
#include <QPaintEvent>
#include <QWidget>

#include <qcustomplot.h>

namespace samplescope::ui {

class OpaquePlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit OpaquePlot(QWidget* parent = nullptr);

    // The layer under all others that fills the viewport (hidden: QCustomPlot's own blend).
    static const QString kFillLayer;

    // The brush QCustomPlot paints under its buffers (setBackground).
    const QBrush& backgroundBrush() const { return mBackgroundBrush; }
    // Whether the fill layer paints every pixel of the one buffer (an opaque brush, the layer
    // shown and lowest): the buffer is then neither cleared before a replot nor blended after.
    bool fillsBuffer() const;
    // Whether the last repaint copied the buffer (one buffer, an opaque brush) rather than
    // leaving it to QCustomPlot to blend.
    bool copiedLastPaint() const { return copied_; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    bool copied_ = false;
};

}  // namespace samplescope::ui
