// One factor over every font of the window, for a projector: the application's
// font and every plot's text (View > Presentation font size, --font-scale).
// Plots size their text in points times fontScale(); a change of the factor
// rescales the plots already drawn.
#pragma once

#include <QFont>

class QCustomPlot;

namespace samplescope::ui {

// View > Presentation font size; --font-scale takes any factor in [kMinFontScale, kMaxFontScale].
constexpr double kPresentationFontScale = 1.4;
constexpr double kMinFontScale = 0.75;
constexpr double kMaxFontScale = 2.5;

double fontScale();

// The application's font becomes the platform's own times `factor`, and every
// QCustomPlot's text is rescaled and replotted. Throws InputError outside
// [kMinFontScale, kMaxFontScale] (nothing changes).
void setFontScale(double factor);

// `base` (its family and weight) at `points` times fontScale().
QFont scaledFont(const QFont& base, double points);

// Multiplies every font of `plot` by `ratio`: its axes, legend, text elements and items.
void rescalePlotFonts(QCustomPlot& plot, double ratio);

// font.key(), kept for the fonts seen last: QFont::key() builds its text at
// every call, and the plots' text caches look their font up at every draw.
// GUI thread only.
QString fontKey(const QFont& font);

}  // namespace samplescope::ui
