#include "ui/stages/axis_label.h"

#include <memory>

#include <QFontMetrics>
#include <QStaticText>

#include "ui/stages/text_cache.h"

namespace samplescope::ui {

namespace {

struct LaidOut {
    QRect bounds;         // QFontMetrics::boundingRect(0, 0, 0, 0, Qt::TextDontClip, text): the drawn box's height
    int centred_height;   // the same with Qt::AlignHCenter | Qt::AlignVCenter: the height the margin reserves
    double line_height;   // the laid-out line's height, which drawText centres in the box (QStaticText rounds its own)
    double advance;       // the width drawText centres in the box
    QStaticText text;
};

std::shared_ptr<const LaidOut> layOut(const QFont& font, const QString& text) {
    return cachedText<LaidOut>(font, text, 256, [&] {
        LaidOut made;
        const QFontMetrics metrics(font);
        made.bounds = metrics.boundingRect(0, 0, 0, 0, Qt::TextDontClip, text);
        made.centred_height = metrics.boundingRect(0, 0, 0, 0, Qt::TextDontClip | Qt::AlignHCenter | Qt::AlignVCenter, text).height();
        made.line_height = QFontMetricsF(font).height();
        made.advance = QFontMetricsF(font).horizontalAdvance(text);
        made.text = preparedText(text, font, std::nullopt, Qt::AlignLeft);
        return made;
    });
}

// QCustomPlot's axis painter, measuring the title from the cache and, on a
// horizontal axis, drawing it from there as QCustomPlot places it (below).
class CachedLabelPainter : public QCPAxisPainterPrivate {
public:
    explicit CachedLabelPainter(QCustomPlot* plot) : QCPAxisPainterPrivate(plot) {}

    int size() override {
        const QString title = label;
        label.clear();
        int result = QCPAxisPainterPrivate::size();
        label = title;
        if (!title.isEmpty()) result += layOut(labelFont, title)->centred_height + labelPadding;
        return result;
    }

protected:
    // QCustomPlot's key for its cached tick labels, from their look, made at every draw; the font's text
    // form in it is dear. Made again only when one of its inputs changed.
    QByteArray generateLabelParameterHash() const override {
        if (hash_.isEmpty() || hashed_.rotation != tickLabelRotation || hashed_.side != tickLabelSide ||
            hashed_.substitute != substituteExponent || hashed_.cross != numberMultiplyCross || hashed_.color != tickLabelColor ||
            hashed_.font != tickLabelFont) {
            hash_ = QCPAxisPainterPrivate::generateLabelParameterHash();
            hashed_ = {tickLabelRotation, tickLabelSide, substituteExponent, numberMultiplyCross, tickLabelColor, tickLabelFont};
        }
        return hash_;
    }

public:
    void draw(QCPPainter* painter) override {
        const QString title = label;
        // A vertical axis's title (turned, its glyphs placed a fraction of a pixel apart from drawText's)
        // or a title of several lines: as QCustomPlot draws it.
        if (QCPAxis::orientation(type) == Qt::Vertical || title.contains(QLatin1Char('\n'))) {
            QCPAxisPainterPrivate::draw(painter);
            return;
        }
        label.clear();
        QCPAxisPainterPrivate::draw(painter);
        label = title;
        if (title.isEmpty()) return;
        const auto laid_out = layOut(labelFont, title);
        const LaidOut& laid = *laid_out;
        // In a box as tall as the title's bounding box and as wide as the axis rect, centred, the box's
        // near edge where the empty title's selection box lies (a line of no height, labelPadding past the
        // tick labels).
        const int height = laid.bounds.height();
        const double top = type == QCPAxis::atBottom ? mLabelSelectionBox.top() : mLabelSelectionBox.top() - height;
        painter->setFont(labelFont);
        painter->setPen(QPen(labelColor));
        painter->drawStaticText(QPointF(axisRect.left() + (axisRect.width() - laid.advance) / 2.0,
                                        top + (height - laid.line_height) / 2.0),
                                laid.text);
    }

private:
    struct Look {
        double rotation = 0.0;
        QCPAxis::LabelSide side = QCPAxis::lsOutside;
        bool substitute = false;
        bool cross = false;
        QColor color;
        QFont font;
    };
    mutable QByteArray hash_;
    mutable Look hashed_;
};

// The painter a QCPAxis holds (a protected member, reached through a pointer to it).
struct AxisPainter : QCPAxis {
    static QCPAxisPainterPrivate* QCPAxis::*member() { return &AxisPainter::mAxisPainter; }
};

}  // namespace

void useCachedAxisLabel(QCPAxis* axis) {
    if (!axis || usesCachedAxisLabel(axis)) return;
    QCPAxisPainterPrivate*& held = axis->*AxisPainter::member();
    auto* made = new CachedLabelPainter(axis->parentPlot());
    const QCPAxisPainterPrivate& old = *held;
    made->type = old.type;
    made->basePen = old.basePen;
    made->lowerEnding = old.lowerEnding;
    made->upperEnding = old.upperEnding;
    made->labelPadding = old.labelPadding;
    made->labelFont = old.labelFont;
    made->labelColor = old.labelColor;
    made->label = old.label;
    made->tickLabelPadding = old.tickLabelPadding;
    made->tickLabelRotation = old.tickLabelRotation;
    made->tickLabelSide = old.tickLabelSide;
    made->substituteExponent = old.substituteExponent;
    made->numberMultiplyCross = old.numberMultiplyCross;
    made->tickLengthIn = old.tickLengthIn;
    made->tickLengthOut = old.tickLengthOut;
    made->subTickLengthIn = old.subTickLengthIn;
    made->subTickLengthOut = old.subTickLengthOut;
    made->tickPen = old.tickPen;
    made->subTickPen = old.subTickPen;
    made->tickLabelFont = old.tickLabelFont;
    made->tickLabelColor = old.tickLabelColor;
    made->axisRect = old.axisRect;
    made->viewportRect = old.viewportRect;
    made->offset = old.offset;
    made->abbreviateDecimalPowers = old.abbreviateDecimalPowers;
    made->reversedEndings = old.reversedEndings;
    made->subTickPositions = old.subTickPositions;
    made->tickPositions = old.tickPositions;
    made->tickLabels = old.tickLabels;
    delete held;
    held = made;
}

bool usesCachedAxisLabel(const QCPAxis* axis) {
    return axis && dynamic_cast<const CachedLabelPainter*>(axis->*AxisPainter::member()) != nullptr;
}

}  // namespace samplescope::ui
