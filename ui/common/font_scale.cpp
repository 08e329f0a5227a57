#include "ui/common/font_scale.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include <QApplication>
#include <QWidget>

#include <qcustomplot.h>

#include "engine/base/input_error.h"

namespace samplescope::ui {

namespace {

double g_scale = 1.0;                 // GUI thread only
std::optional<QFont> g_platform_font;  // the application's font before the first change

QFont times(QFont font, double ratio) {
    if (font.pointSizeF() > 0) {
        font.setPointSizeF(font.pointSizeF() * ratio);
    } else if (font.pixelSize() > 0) {
        font.setPixelSize(std::max(1, static_cast<int>(std::lround(font.pixelSize() * ratio))));
    }
    return font;
}

}  // namespace

double fontScale() { return g_scale; }

QFont scaledFont(const QFont& base, double points) {
    QFont font = base;
    font.setPointSizeF(points * g_scale);
    return font;
}

void setFontScale(double factor) {
    if (!(factor >= kMinFontScale && factor <= kMaxFontScale)) {
        throw InputError("font-scale", "the font scale must be in [" + format_number(kMinFontScale) + ", " +
                                           format_number(kMaxFontScale) + "], got " + format_number(factor));
    }
    if (factor == g_scale) return;
    const double ratio = factor / g_scale;
    if (!g_platform_font) g_platform_font = QApplication::font();
    g_scale = factor;
    QApplication::setFont(times(*g_platform_font, factor));
    for (QWidget* widget : QApplication::allWidgets()) {
        if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
            rescalePlotFonts(*plot, ratio);
            plot->replot(QCustomPlot::rpQueuedReplot);
        }
    }
}

void rescalePlotFonts(QCustomPlot& plot, double ratio) {
    for (QCPAxisRect* rect : plot.axisRects()) {
        for (QCPAxis* axis : rect->axes()) {
            axis->setLabelFont(times(axis->labelFont(), ratio));
            axis->setTickLabelFont(times(axis->tickLabelFont(), ratio));
            axis->setSelectedLabelFont(times(axis->selectedLabelFont(), ratio));
            axis->setSelectedTickLabelFont(times(axis->selectedTickLabelFont(), ratio));
        }
    }
    // Recursive: the text elements, the legends (also one inside an axis rect's inset layout).
    for (QCPLayoutElement* element : plot.plotLayout()->elements(true)) {
        if (auto* text = qobject_cast<QCPTextElement*>(element)) {
            text->setFont(times(text->font(), ratio));
            text->setSelectedFont(times(text->selectedFont(), ratio));
        } else if (auto* legend = qobject_cast<QCPLegend*>(element)) {
            legend->setFont(times(legend->font(), ratio));
            legend->setSelectedFont(times(legend->selectedFont(), ratio));
            for (int i = 0; i < legend->itemCount(); ++i) {
                if (QCPAbstractLegendItem* item = legend->item(i)) {
                    item->setFont(times(item->font(), ratio));
                    item->setSelectedFont(times(item->selectedFont(), ratio));
                }
            }
        }
    }
    for (int i = 0; i < plot.itemCount(); ++i) {
        if (auto* text = qobject_cast<QCPItemText*>(plot.item(i))) {
            text->setFont(times(text->font(), ratio));
            text->setSelectedFont(times(text->selectedFont(), ratio));
        }
    }
}

QString fontKey(const QFont& font) {
    // The plots use a handful of fonts; comparing two is cheaper than one key(). Never destroyed, as the
    // caches that use it.
    static auto& known = *new std::vector<std::pair<QFont, QString>>;
    for (const auto& [seen, key] : known) {
        if (seen == font) return key;
    }
    if (known.size() >= 32) known.clear();
    known.emplace_back(font, font.key());
    return known.back().second;
}

}  // namespace samplescope::ui
