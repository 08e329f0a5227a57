#include "ui/stages/opaque_plot.h"

namespace samplescope::ui {

namespace {

// Fills the viewport with the plot's background brush: the first thing drawn into the buffer.
class ViewportFill : public QCPLayerable {
public:
    ViewportFill(OpaquePlot* plot, const QString& layer) : QCPLayerable(plot, layer), plot_(plot) {}

protected:
    // QCPLayer::draw clips each layerable to its clipRect() moved up a pixel: the whole viewport
    // one pixel down is the whole viewport.
    QRect clipRect() const override { return plot_->viewport().translated(0, 1); }
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override { painter->setAntialiasing(false); }
    void draw(QCPPainter* painter) override {
        if (plot_->backgroundBrush().style() != Qt::NoBrush) painter->fillRect(plot_->viewport(), plot_->backgroundBrush());
    }

private:
    OpaquePlot* plot_;
};

// QCustomPlot's pixmap buffer, left as it is where QCustomPlot clears it to transparent before
// each replot when the fill layer is about to paint every pixel of it anyway.
class FilledBuffer : public QCPPaintBufferPixmap {
public:
    FilledBuffer(const QSize& size, double ratio, const OpaquePlot* plot) : QCPPaintBufferPixmap(size, ratio), plot_(plot) {}
    void clear(const QColor& color) override {
        if (!plot_->fillsBuffer()) QCPPaintBufferPixmap::clear(color);
    }

private:
    const OpaquePlot* plot_;
};

}  // namespace

const QString OpaquePlot::kFillLayer = QStringLiteral("viewport fill");

OpaquePlot::OpaquePlot(QWidget* parent) : QCustomPlot(parent) {
    // Nothing is drawn on the overlay: as a layer of the main buffer it costs no second buffer.
    if (QCPLayer* overlay = layer(QStringLiteral("overlay"))) overlay->setMode(QCPLayer::lmLogical);
    addLayer(kFillLayer, layer(0), QCustomPlot::limBelow);
    new ViewportFill(this, kFillLayer);  // owned by the plot
    // QCustomPlot keeps the buffers it holds (it makes one only when it holds none).
    mPaintBuffers.clear();
    mPaintBuffers.append(QSharedPointer<QCPAbstractPaintBuffer>(new FilledBuffer(viewport().size(), mBufferDevicePixelRatio, this)));
}

bool OpaquePlot::fillsBuffer() const {
    const QCPLayer* fill = layer(kFillLayer);
    return mPaintBuffers.size() == 1 && mBackgroundBrush.isOpaque() && fill && fill == layer(0) && fill->visible();
}

void OpaquePlot::paintEvent(QPaintEvent* event) {
    copied_ = fillsBuffer();
    if (!copied_) {
        QCustomPlot::paintEvent(event);
        return;
    }
    QCPPainter painter(this);
    if (!painter.isActive()) return;
    painter.setCompositionMode(QPainter::CompositionMode_Source);
    mPaintBuffers.front()->draw(&painter);
}

}  // namespace samplescope::ui
