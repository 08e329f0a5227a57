#include "ui/stages/legend_item.h"

#include <algorithm>
#include <memory>
#include <vector>

#include <QFontMetrics>

#include "ui/stages/text_cache.h"

namespace samplescope::ui {

namespace {

// Keyed by the icon height the box is measured against and the name too. A plot's names are few.
std::shared_ptr<const LegendItem::MeasuredName> measure(const QFont& font, int icon_height, const QString& name) {
    return cachedText<LegendItem::MeasuredName>(font, QString::number(icon_height) + QLatin1Char('\x1f') + name, 512, [&] {
        LegendItem::MeasuredName made;
        made.box = QFontMetrics(font).boundingRect(0, 0, 0, icon_height, Qt::TextDontClip, name);
        made.text = preparedText(name, font, std::nullopt, Qt::AlignLeft);
        return made;
    });
}

// The plottable's icon is drawn by the plottable itself; its drawLegendIcon is
// protected, so it is reached the way a derived class may name it.
struct IconAccess : QCPAbstractPlottable {
    using QCPAbstractPlottable::drawLegendIcon;
};

}  // namespace

const LegendItem::MeasuredName& LegendItem::measured(const QFont& font, int icon_height) const {
    // The layout asks for the size several times a replot: the last answer is kept while nothing changed.
    if (!measured_ || icon_height != icon_height_ || mPlottable->name() != name_ || font != font_) {
        measured_ = measure(font, icon_height, mPlottable->name());
        name_ = mPlottable->name();
        font_ = font;
        icon_height_ = icon_height;
    }
    return *measured_;
}

QSize LegendItem::minimumOuterSizeHint() const {
    if (!mPlottable) return {};
    const QSize icon = mParentLegend->iconSize();
    const QRect box = measured(getFont(), icon.height()).box;
    return {icon.width() + mParentLegend->iconTextPadding() + box.width() + mMargins.left() + mMargins.right(),
            std::max(box.height(), icon.height()) + mMargins.top() + mMargins.bottom()};
}

void LegendItem::draw(QCPPainter* painter) {
    if (!mPlottable) return;
    const QFont font = getFont();
    painter->setFont(font);
    painter->setPen(QPen(getTextColor()));
    const QSize icon = mParentLegend->iconSize();
    // The name's top left where QCustomPlot's drawText puts it (no vertical alignment: the top).
    painter->drawStaticText(QPointF(mRect.x() + icon.width() + mParentLegend->iconTextPadding(), mRect.y()),
                            measured(font, icon.height()).text);
    const QRect icon_rect(mRect.topLeft(), icon);
    painter->save();
    painter->setClipRect(icon_rect, Qt::IntersectClip);
    const auto draw_icon = &IconAccess::drawLegendIcon;
    (mPlottable->*draw_icon)(painter, icon_rect);
    painter->restore();
    if (getIconBorderPen().style() != Qt::NoPen) {
        painter->setPen(getIconBorderPen());
        painter->setBrush(Qt::NoBrush);
        painter->drawRect(icon_rect);
    }
}

void useCachedLegendItems(QCPLegend* legend) {
    std::vector<QCPAbstractPlottable*> plottables;
    bool replace = false;
    for (int i = 0; i < legend->itemCount(); ++i) {
        QCPAbstractLegendItem* item = legend->item(i);
        if (!item) continue;  // an empty cell of the grid
        auto* entry = qobject_cast<QCPPlottableLegendItem*>(item);
        if (!entry || !entry->plottable()) return;
        plottables.push_back(entry->plottable());
        replace = replace || !dynamic_cast<LegendItem*>(entry);
    }
    if (!replace) return;
    legend->clearItems();
    for (auto* plottable : plottables) legend->addItem(new LegendItem(legend, plottable));
}

}  // namespace samplescope::ui
