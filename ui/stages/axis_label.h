// Axis titles measured and drawn from a cache. QCustomPlot measures an axis's
// title at every layout and measures and shapes it again to draw it, at every
// replot of every stage plot: a tenth of a plot's redraw for a text that
// changes only with the view. useCachedAxisLabel gives an axis a painter that
// keeps each title's measured box and laid-out text (QStaticText) per font and
// text, process-wide: it measures every title from there, and draws a
// horizontal axis's title from there, pixel for pixel where and as QCustomPlot
// does. A vertical axis's title (turned: drawn from the cache, its glyphs
// land a fraction of a pixel apart) and everything else on the axis (ticks,
// tick labels, selection boxes) QCustomPlot still draws.
#pragma once

#include <qcustomplot.h>

namespace samplescope::ui {

// Replaces `axis`'s painter with one that draws its title from the cache, the
// axis's settings carried over. Call it once, before the axis is first drawn.
void useCachedAxisLabel(QCPAxis* axis);

// Whether `axis` draws its title from the cache.
bool usesCachedAxisLabel(const QCPAxis* axis);

}  // namespace samplescope::ui
