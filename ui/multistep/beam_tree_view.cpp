#include "ui/multistep/beam_tree_view.h"

#include <algorithm>

#include <QHelpEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include "ui/common/palette.h"

namespace samplescope::ui {

namespace {

constexpr int kMargin = 6;
constexpr int kPadX = 4;
constexpr int kGapX = 22;     // between two columns
constexpr int kRowGap = 3;
constexpr int kRootChars = 24;

QString qs(const std::string& text) { return QString::fromStdString(text); }
QString lp(double value) { return QString::number(value, 'f', 2).replace(QLatin1Char('-'), QChar(0x2212)); }

const QColor kChosenFill(0xCF, 0xE3, 0xF2);
const QColor kPrunedInk(0x9A, 0x9A, 0x9A);

}  // namespace

BeamTreeView::BeamTreeView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("beam_tree"));
    setMouseTracking(true);
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::Base);
}

void BeamTreeView::setTree(std::optional<BeamTree> tree, double length_penalty) {
    tree_ = std::move(tree);
    length_penalty_ = length_penalty;
    layoutTree();
    updateGeometry();
    update();
}

QString BeamTreeView::boxText(const BeamNode& node) const {
    if (node.hidden > 0) return QStringLiteral("+%1 pruned").arg(node.hidden);
    if (node.parent < 0) {
        const QString text = qs(node.text);
        return text.size() <= kRootChars ? text : QChar(0x2026) + text.right(kRootChars - 1);
    }
    return qs(node.text);
}

QString BeamTreeView::logprobText(const BeamNode& node) const {
    if (node.parent < 0) return {};
    return node.hidden > 0 ? QStringLiteral("\u2264 %1").arg(lp(node.logprob)) : lp(node.logprob);
}

QString BeamTreeView::besideText(int id) const {
    if (!tree_) return {};
    const BeamNode& node = tree_->node(id);
    if (node.hidden > 0 || node.parent < 0) return {};
    QString out;
    if (node.fate == CandidateFate::Finished || node.hypothesis >= 0) {
        out = QStringLiteral("score %1").arg(lp(node.score));
        if (node.hypothesis >= 0) out += QStringLiteral(" #%1").arg(node.hypothesis + 1);
    } else if (node.fate == CandidateFate::NotFinished) {
        out = QStringLiteral("not taken");
    }
    return out;
}

void BeamTreeView::layoutTree() {
    boxes_.clear();
    column_x_.clear();
    if (!tree_) {
        size_ = QSize(200, 60);
        return;
    }
    const auto& nodes = tree_->nodes();
    const QFontMetrics metrics = fontMetrics();
    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.85);
    const QFontMetrics small_metrics(small);
    QFont small_bold = small;
    small_bold.setBold(true);
    const QFontMetrics beside_metrics(small_bold);
    const int row = metrics.height() + 6;
    std::vector<int> widths(tree_->depth() + 1, 0);
    std::vector<int> beside(tree_->depth() + 1, 0);
    std::vector<int> box_width(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const BeamNode& node = nodes[i];
        const QString lp_text = logprobText(node);
        box_width[i] = metrics.horizontalAdvance(boxText(node)) + 2 * kPadX +
                       (lp_text.isEmpty() ? 0 : small_metrics.horizontalAdvance(lp_text) + kPadX);
        widths[node.step] = std::max(widths[node.step], box_width[i]);
        const QString side = besideText(static_cast<int>(i));
        if (!side.isEmpty()) beside[node.step] = std::max(beside[node.step], beside_metrics.horizontalAdvance(side) + 6);
    }
    // A column is as wide as its widest box; a hypothesis's label beside a box needs room before the next column.
    const int header = metrics.height() + 4;
    int x = kMargin;
    for (std::size_t d = 0; d < widths.size(); ++d) {
        column_x_.push_back(x);
        x += widths[d] + std::max(kGapX, beside[d] + 8);
    }
    boxes_.assign(nodes.size(), QRect());
    // A column per step, its nodes in the order of their parents' rows: each parent's children (best
    // first) take the rows from the parent's own row down, where those are free. The best continuation
    // stays level with its parent when it can, and a column is only as tall as its own nodes need (a
    // row for every leaf of the whole tree put a parent's later children hundreds of rows below it).
    std::vector<int> row_of(nodes.size(), 0);
    std::vector<int> column{BeamTree::kRoot};
    while (!column.empty()) {
        std::vector<int> next;
        int next_free = 0;
        for (const int parent : column) {
            int r = std::max(next_free, row_of[static_cast<std::size_t>(parent)]);
            for (const int child : nodes[static_cast<std::size_t>(parent)].children) {
                row_of[static_cast<std::size_t>(child)] = r++;
                next.push_back(child);
            }
            next_free = r;
        }
        column = std::move(next);
    }
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const int y = header + kMargin + row_of[i] * (row + kRowGap);
        boxes_[i] = QRect(column_x_[nodes[i].step], y, box_width[i], row);
    }
    int right = 0;
    int bottom = 0;
    for (std::size_t i = 0; i < boxes_.size(); ++i) {
        right = std::max(right, boxes_[i].right() + 8 + beside_metrics.horizontalAdvance(besideText(static_cast<int>(i))));
        bottom = std::max(bottom, boxes_[i].bottom());
    }
    size_ = QSize(right + kMargin, bottom + kMargin);
}

QSize BeamTreeView::sizeHint() const { return size_; }
QSize BeamTreeView::minimumSizeHint() const { return size_; }

QRect BeamTreeView::nodeRect(int node) const {
    if (node < 0 || static_cast<std::size_t>(node) >= boxes_.size()) return {};
    return boxes_[static_cast<std::size_t>(node)];
}

int BeamTreeView::nodeAt(const QPoint& point) const {
    for (std::size_t i = 0; i < boxes_.size(); ++i) {
        if (boxes_[i].contains(point)) return static_cast<int>(i);
    }
    return -1;
}

QString BeamTreeView::tooltipFor(int id) const {
    if (!tree_ || id < 0) return {};
    const BeamNode& node = tree_->node(id);
    if (node.parent < 0) return QStringLiteral("The prompt: %1").arg(qs(node.text).toHtmlEscaped());
    if (node.hidden > 0) {
        return QStringLiteral("%1 more candidates of this beam at step %2 were pruned (not among the best); the best of "
                              "them has log p %3")
            .arg(node.hidden)
            .arg(node.step)
            .arg(lp(node.logprob));
    }
    QString fate;
    switch (node.fate) {
        case CandidateFate::Kept: fate = QStringLiteral("kept: a beam of the next step"); break;
        case CandidateFate::Finished: fate = QStringLiteral("finished: a hypothesis"); break;
        case CandidateFate::NotFinished: fate = QStringLiteral("ended, but not taken as a hypothesis (ranked past w, or the set was closed)"); break;
        case CandidateFate::Pruned: fate = QStringLiteral("pruned: not among the best"); break;
    }
    QString tip = QStringLiteral("<b>%1</b> (id %2) at step %3: %4<br>log p(token) = %5, summed log p = %6, rank %7")
                      .arg(qs(node.text).toHtmlEscaped())
                      .arg(node.token)
                      .arg(node.step)
                      .arg(fate, QString::number(node.token_logprob, 'g', 8), QString::number(node.logprob, 'g', 8))
                      .arg(node.rank);
    if (node.hypothesis >= 0 || node.fate == CandidateFate::Finished) {
        tip += QStringLiteral("<br>score = %1 / L^%2 = %3")
                   .arg(QString::number(node.logprob, 'g', 8), QString::number(length_penalty_), QString::number(node.score, 'g', 8));
        if (node.length > 0) tip += QStringLiteral(" with L = %1").arg(node.length);
    }
    if (node.hypothesis >= 0) tip += QStringLiteral("<br>hypothesis #%1 of the result").arg(node.hypothesis + 1);
    if (node.chosen) tip += QStringLiteral("<br><i>on the chosen hypothesis</i>");
    if (node.running) tip += QStringLiteral("<br><i>a running beam at the last step shown</i>");
    return tip;
}

bool BeamTreeView::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString tip = tooltipFor(nodeAt(help->pos()));
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

void BeamTreeView::paintEvent(QPaintEvent* event) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing, true);
    if (!tree_) return;
    const auto& nodes = tree_->nodes();
    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.85);
    QFont small_bold = small;
    small_bold.setBold(true);
    // Step numbers over the columns.
    painter.setPen(QColor(0x77, 0x77, 0x77));
    painter.setFont(small);
    for (std::size_t d = 1; d < column_x_.size(); ++d) {
        painter.drawText(QPoint(column_x_[d], kMargin + fontMetrics().ascent()), QStringLiteral("step %1").arg(d));
    }
    // Edges first, the chosen path last (on top).
    for (int pass = 0; pass < 2; ++pass) {
        for (std::size_t i = 1; i < nodes.size(); ++i) {
            const BeamNode& node = nodes[i];
            if ((pass == 1) != node.chosen) continue;
            const QRect from = boxes_[static_cast<std::size_t>(node.parent)];
            const QRect to = boxes_[i];
            const QPointF a(from.right() + 1, from.center().y() + 0.5);
            const QPointF b(to.left(), to.center().y() + 0.5);
            QPainterPath path(a);
            path.cubicTo(QPointF((a.x() + b.x()) / 2, a.y()), QPointF((a.x() + b.x()) / 2, b.y()), b);
            QPen pen(QColor(0x55, 0x55, 0x55), 1.2);
            if (node.fate == CandidateFate::Pruned || node.fate == CandidateFate::NotFinished) pen = QPen(kPrunedInk, 1.0, Qt::DashLine);
            if (node.chosen) pen = QPen(palette::kBlue, 3.0);
            painter.setPen(pen);
            painter.setBrush(Qt::NoBrush);
            painter.drawPath(path);
        }
    }
    const QRect visible = event->rect();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const QRect box = boxes_[i];
        if (!box.adjusted(-4, -4, 400, 4).intersects(visible)) continue;
        const BeamNode& node = nodes[i];
        const bool grey = node.hidden > 0 || node.fate == CandidateFate::Pruned || node.fate == CandidateFate::NotFinished;
        const bool finished = node.hidden == 0 && (node.fate == CandidateFate::Finished || (node.hypothesis >= 0 && node.ends));
        QColor fill = Qt::white;
        QColor ink = Qt::black;
        QPen outline(QColor(0x55, 0x55, 0x55), 1.0);
        if (grey) {
            fill = QColor(0xF4, 0xF4, 0xF4);
            ink = kPrunedInk;
            outline = QPen(QColor(0xBB, 0xBB, 0xBB), 1.0, Qt::DashLine);
        }
        if (node.parent < 0) fill = QColor(0xEE, 0xEE, 0xEE);
        if (finished) outline = QPen(palette::kBluishGreen, 2.5);
        if (node.running) outline = QPen(palette::kBlack, 2.0);
        if (node.chosen && node.parent >= 0) fill = kChosenFill;
        if (node.chosen && node.hypothesis == 0) {
            fill = palette::kBlue;
            ink = Qt::white;
        }
        painter.setBrush(fill);
        painter.setPen(outline);
        painter.drawRoundedRect(QRectF(box).adjusted(0.5, 0.5, -0.5, -0.5), 3, 3);
        painter.setFont(font());
        painter.setPen(ink);
        const QRect inner = box.adjusted(kPadX, 0, -kPadX, 0);
        painter.drawText(inner, Qt::AlignLeft | Qt::AlignVCenter, boxText(node));
        const QString lp_text = logprobText(node);
        if (!lp_text.isEmpty()) {
            painter.setFont(small);
            painter.setPen(node.chosen && node.hypothesis == 0 ? QColor(Qt::white) : grey ? kPrunedInk : QColor(0x44, 0x44, 0x44));
            painter.drawText(inner, Qt::AlignRight | Qt::AlignVCenter, lp_text);
        }
        const QString side = besideText(static_cast<int>(i));
        if (!side.isEmpty()) {
            painter.setFont(node.hypothesis == 0 ? small_bold : small);
            painter.setPen(node.fate == CandidateFate::NotFinished ? kPrunedInk : palette::kBluishGreen.darker(140));
            painter.drawText(QRect(box.right() + 6, box.top(), 400, box.height()), Qt::AlignLeft | Qt::AlignVCenter, side);
        }
    }
}

}  // namespace samplescope::ui
