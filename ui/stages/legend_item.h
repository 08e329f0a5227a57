// A plottable's legend entry that measures and lays out its name once per
// name and font. QCustomPlot's own entry shapes its name at every size query
// (several per replot: the legend's layout, a stage plot fitting its legend's
// columns) and again to draw it; at a key press that redraws every stage plot,
// the legends' text was about a sixth of the redraw. The names are a handful
// of fixed words ("kept", "chosen", "q before"), so a process-wide cache of
// their sizes and laid-out text (QStaticText) is nearly always hit. It draws
// what QCPPlottableLegendItem draws, in the same places.
#pragma once

#include <memory>

#include <QStaticText>
#include <qcustomplot.h>

namespace samplescope::ui {

class LegendItem : public QCPPlottableLegendItem {
public:
    LegendItem(QCPLegend* legend, QCPAbstractPlottable* plottable) : QCPPlottableLegendItem(legend, plottable) {}

    // A name's box as QCPPlottableLegendItem measures it, and the name laid out.
    struct MeasuredName {
        QRect box;
        QStaticText text;
    };

protected:
    void draw(QCPPainter* painter) override;
    QSize minimumOuterSizeHint() const override;

private:
    const MeasuredName& measured(const QFont& font, int icon_height) const;
    mutable std::shared_ptr<const MeasuredName> measured_;
    mutable QString name_;
    mutable QFont font_;
    mutable int icon_height_ = -1;
};

// Replaces QCustomPlot's entries in `legend` with LegendItems, in the same
// order (the plot adds its own entry when a plottable is made). Entries of
// another kind leave the legend as it is. Cheap when nothing is to replace:
// a plot calls it before each replot.
void useCachedLegendItems(QCPLegend* legend);

}  // namespace samplescope::ui
