// Scatter marks drawn once into a pixmap, then copied at each point: QCustomPlot
// rasterises an antialiased ellipse per point for its round shapes, and a
// curve's few hundred points cost more than the rest of its plot. GUI thread
// only; each pixmap is kept for the process's lifetime.
#pragma once

#include <QColor>

#include <qcustomplot.h>

namespace samplescope::ui {

// A 3.5 px filled disc.
QCPScatterStyle discScatter(const QColor& color);
// A circle of `diameter` px outlined 1 px in `pen` and filled with `fill`, as
// QCPScatterStyle(ssCircle, pen, fill, diameter) draws it.
QCPScatterStyle ringScatter(const QColor& pen, const QColor& fill, int diameter);

}  // namespace samplescope::ui
