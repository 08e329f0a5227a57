#include "ui/generate/generated_text_view.h"

#include <algorithm>

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include "ui/common/palette.h"
#include "ui/generate/token_colours.h"

namespace samplescope::ui {

namespace {

constexpr int kMargin = 6;
constexpr int kPadX = 4;
constexpr int kPadY = 3;
constexpr int kGap = 5;       // between two words
constexpr int kLineGap = 6;   // between two lines

QFont markFont(const QFont& base) {
    QFont small = base;
    small.setPointSizeF(base.pointSizeF() * 0.72);
    small.setBold(true);
    return small;
}

}  // namespace

GeneratedTextView::GeneratedTextView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("generated_text"));
    setMouseTracking(true);
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::Base);
    QFont larger = font();
    larger.setPointSizeF(larger.pointSizeF() * 1.2);
    setFont(larger);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void GeneratedTextView::setPieces(std::vector<Piece> pieces, int marked, const QString& next, const QString& next_tooltip) {
    pieces_ = std::move(pieces);
    marked_ = marked;
    next_ = next;
    next_tooltip_ = next_tooltip;
    const Layout layout = layoutFor(width());
    boxes_ = layout.boxes;
    next_rect_ = layout.next;
    updateGeometry();
    update();
}

void GeneratedTextView::setNext(const QString& next, const QString& next_tooltip) {
    next_ = next;
    next_tooltip_ = next_tooltip;
    const Layout layout = layoutFor(width());
    boxes_ = layout.boxes;
    next_rect_ = layout.next;
    updateGeometry();
    update();
}

// 0 outside the kept set (a clicked word the pipeline dropped), nothing for the most probable word.
QString GeneratedTextView::rankMark(const Piece& piece) const {
    if (!piece.mark.isEmpty()) return piece.mark;
    if (piece.node < 0) return piece.unknown ? QStringLiteral("?") : QString();
    if (piece.rank == 0) return QStringLiteral("\u00d7");
    return piece.rank == 1 ? QString() : QString::number(piece.rank);
}

int GeneratedTextView::boxWidth(const Piece& piece) const {
    const QString mark = rankMark(piece);
    int width = fontMetrics().horizontalAdvance(piece.text) + 2 * kPadX;
    if (!mark.isEmpty()) width += QFontMetrics(markFont(font())).horizontalAdvance(mark) + 2;
    // A sentence's "." is still a box one can see and hit.
    return std::max(width, fontMetrics().height());
}

GeneratedTextView::Layout GeneratedTextView::layoutFor(int width) const {
    Layout out;
    const int line = fontMetrics().height() + 2 * kPadY;
    const int right = std::max(width - kMargin, kMargin + 1);
    int x = kMargin;
    int y = kMargin;
    const auto place = [&](int w, bool attached) {
        if (x > kMargin && !attached) x += kGap;
        if (x > kMargin && x + w > right) {
            x = kMargin;
            y += line + kLineGap;
        }
        const QRect box(x, y, w, line);
        x += w;
        return box;
    };
    for (const auto& piece : pieces_) out.boxes.push_back(place(boxWidth(piece), piece.attached));
    if (!next_.isEmpty()) {
        QFont italic = font();
        italic.setItalic(true);
        out.next = place(QFontMetrics(italic).horizontalAdvance(next_) + 2 * kPadX, false);
    }
    out.height = y + line + kMargin;
    return out;
}

int GeneratedTextView::heightForWidth(int width) const { return layoutFor(width).height; }

QSize GeneratedTextView::sizeHint() const { return {400, heightForWidth(400)}; }

QSize GeneratedTextView::minimumSizeHint() const { return {120, fontMetrics().height() + 2 * (kPadY + kMargin)}; }

void GeneratedTextView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    const Layout layout = layoutFor(width());
    boxes_ = layout.boxes;
    next_rect_ = layout.next;
}

void GeneratedTextView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing, true);
    const QFont mark_font = markFont(font());
    QFont italic = font();
    italic.setItalic(true);
    for (std::size_t i = 0; i < pieces_.size() && i < boxes_.size(); ++i) {
        const Piece& piece = pieces_[i];
        const QRectF box = QRectF(boxes_[i]).adjusted(0.5, 0.5, -0.5, -0.5);
        const QString mark = rankMark(piece);
        QColor text_colour(0x55, 0x55, 0x55);
        if (piece.node >= 0) {
            const ProbabilityBand& band = probabilityBand(piece.probability);
            const QColor fill = piece.fill.isValid() ? piece.fill : band.background;
            painter.setBrush(fill);
            QPen outline(fill == QColor(Qt::white) ? QColor(0xAA, 0xAA, 0xAA) : fill.darker(130), 1.0);
            if (piece.clicked) outline = QPen(palette::kVermillion, 1.8, Qt::DashLine);
            painter.setPen(outline);
            painter.drawRoundedRect(box, 3, 3);
            text_colour = piece.ink.isValid() ? piece.ink : band.text;
        }
        if (piece.node >= 0 && (piece.node == marked_ || piece.outlined)) {
            painter.setBrush(Qt::NoBrush);
            painter.setPen(palette::selectedPen());
            painter.drawRoundedRect(box.adjusted(-1.5, -1.5, 1.5, 1.5), 4, 4);
        }
        painter.setFont(piece.unknown ? italic : font());
        painter.setPen(text_colour);
        const QRect text_rect = boxes_[i].adjusted(kPadX, kPadY, 0, -kPadY);
        painter.drawText(text_rect, Qt::AlignLeft | Qt::AlignVCenter, piece.text);
        if (!mark.isEmpty()) {
            painter.setFont(mark_font);
            const int x = text_rect.left() + QFontMetrics(piece.unknown ? italic : font()).horizontalAdvance(piece.text) + 1;
            painter.drawText(QRect(x, boxes_[i].top() + 1, boxes_[i].right() - x, boxes_[i].height() / 2 + 2),
                             Qt::AlignLeft | Qt::AlignTop, mark);
        }
    }
    if (!next_.isEmpty() && next_rect_.isValid()) {
        painter.setBrush(Qt::NoBrush);
        painter.setPen(QPen(palette::kVermillion, 1.5, Qt::DashLine));
        painter.drawRoundedRect(QRectF(next_rect_).adjusted(0.5, 0.5, -0.5, -0.5), 3, 3);
        if (marked_ == kNextSlot) {
            painter.setPen(palette::selectedPen());
            painter.drawRoundedRect(QRectF(next_rect_).adjusted(-1, -1, 1, 1), 4, 4);
        }
        painter.setFont(italic);
        painter.setPen(palette::kVermillion.darker(120));
        painter.drawText(next_rect_.adjusted(kPadX, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, next_);
    }
}

int GeneratedTextView::nodeAt(const QPoint& point) const {
    if (next_rect_.contains(point)) return kNextSlot;
    for (std::size_t i = 0; i < boxes_.size() && i < pieces_.size(); ++i) {
        if (boxes_[i].contains(point)) return pieces_[i].node;
    }
    return -1;
}

QString GeneratedTextView::tooltipAt(const QPoint& point) const {
    if (next_rect_.contains(point)) return next_tooltip_;
    for (std::size_t i = 0; i < boxes_.size() && i < pieces_.size(); ++i) {
        if (boxes_[i].contains(point)) return pieces_[i].tooltip;
    }
    return {};
}

QRect GeneratedTextView::nodeRect(int node) const {
    if (node == kNextSlot) return next_rect_;
    for (std::size_t i = 0; i < boxes_.size() && i < pieces_.size(); ++i) {
        if (pieces_[i].node == node && node >= 0) return boxes_[i];
    }
    return {};
}

bool GeneratedTextView::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString tip = tooltipAt(help->pos());
        if (tip.isEmpty()) {
            QToolTip::hideText();
            event->ignore();
        } else {
            QToolTip::showText(help->globalPos(), tip, this);
        }
        return true;
    }
    return QWidget::event(event);
}

void GeneratedTextView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
    const int node = nodeAt(event->position().toPoint());
    if (node == kNextSlot) {
        emit nextClicked();
    } else if (node >= 0) {
        emit nodeClicked(node);
    }
}

void GeneratedTextView::mouseMoveEvent(QMouseEvent* event) {
    setCursor(nodeAt(event->position().toPoint()) == -1 ? Qt::ArrowCursor : Qt::PointingHandCursor);
    QWidget::mouseMoveEvent(event);
}

}  // namespace samplescope::ui
