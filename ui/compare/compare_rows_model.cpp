#include "ui/compare/compare_rows_model.h"

#include <QBrush>
#include <QPainter>
#include <QPainterPath>
#include <QPixmap>
#include <QStringList>

#include "ui/common/count_text.h"

namespace samplescope {

namespace {

// Okabe & Ito's palette ("Color Universal Design", 2008): told apart under
// the common colour-vision deficiencies.
const QColor kVermillion(0xd5, 0x5e, 0x00);
const QColor kOrange(0xe6, 0x9f, 0x00);
const QColor kBluishGreen(0x00, 0x9e, 0x73);

QString verdictText(Verdict verdict) {
    const auto name = verdict_name(verdict);
    return QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
}

// A distinct shape per verdict: circle (equal), triangle (near-tie), square with
// a cross (mismatch), so the icon reads without its colour.
QIcon makeIcon(Verdict verdict) {
    QPixmap pixmap(16, 16);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    switch (verdict) {
        case Verdict::Equal:
            painter.setPen(QPen(kBluishGreen.darker(120), 1.5));
            painter.setBrush(Qt::NoBrush);
            painter.drawEllipse(QRectF(3.5, 3.5, 9, 9));
            break;
        case Verdict::NearTie: {
            QPainterPath triangle;
            triangle.moveTo(8, 2);
            triangle.lineTo(14.5, 14);
            triangle.lineTo(1.5, 14);
            triangle.closeSubpath();
            painter.setPen(QPen(Qt::black, 1));
            painter.setBrush(kOrange);
            painter.drawPath(triangle);
            break;
        }
        case Verdict::Mismatch:
            painter.setPen(QPen(Qt::black, 1));
            painter.setBrush(kVermillion);
            painter.drawRect(QRectF(1.5, 1.5, 13, 13));
            painter.setPen(QPen(Qt::white, 2));
            painter.drawLine(QPointF(5, 5), QPointF(11, 11));
            painter.drawLine(QPointF(11, 5), QPointF(5, 11));
            break;
    }
    return QIcon(pixmap);
}

QString logprobDifference(double difference) {
    if (difference == 0.0) return QStringLiteral("0");
    return QString::number(difference, 'e', 2);
}

}  // namespace

CompareRowsModel::CompareRowsModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareRowsModel::setComparison(std::shared_ptr<const batch::BatchComparison> comparison) {
    beginResetModel();
    comparison_ = std::move(comparison);
    endResetModel();
}

void CompareRowsModel::clear() { setComparison(nullptr); }

QColor CompareRowsModel::background(Verdict verdict) {
    // Light tints of the palette's colours, so black text stays readable.
    switch (verdict) {
        case Verdict::Equal: return {};
        case Verdict::NearTie: return {0xfb, 0xe3, 0xa8};
        case Verdict::Mismatch: return {0xf5, 0xc0, 0x9c};
    }
    return {};
}

QIcon CompareRowsModel::icon(Verdict verdict) {
    static const QIcon icons[] = {makeIcon(Verdict::Equal), makeIcon(Verdict::NearTie), makeIcon(Verdict::Mismatch)};
    return icons[static_cast<int>(verdict)];
}

int CompareRowsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !comparison_ ? 0 : static_cast<int>(comparison_->rows.size());
}

int CompareRowsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString CompareRowsModel::detail(const batch::RowComparison& row) const {
    QStringList parts;
    if (row.token != Verdict::Equal) parts << tr("token %1").arg(verdictText(row.token));
    // Fast mode draws with its own random numbers: another token is no
    // disagreement when the reference keeps it (its draws face the fit test).
    if (row.token == Verdict::Equal && row.engine_token != row.reference_token) {
        parts << tr("another draw from the same kept set");
    }
    if (row.kept != Verdict::Equal) {
        QString kept = tr("kept set %1").arg(verdictText(row.kept));
        if (!row.kept_mismatched_ids.empty()) {
            QStringList ids;
            const std::size_t shown = std::min<std::size_t>(row.kept_mismatched_ids.size(), 8);
            for (std::size_t i = 0; i < shown; ++i) ids << ui::groupedNumber(row.kept_mismatched_ids[i]);
            if (shown < row.kept_mismatched_ids.size()) ids << QStringLiteral("...");
            kept += tr(" at ids %1").arg(ids.join(QStringLiteral(", ")));
        }
        parts << kept;
    }
    if (row.logprob != Verdict::Equal) parts << tr("logprob %1").arg(verdictText(row.logprob));
    return parts.join(QStringLiteral("; "));
}

QVariant CompareRowsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !comparison_ || index.row() >= rowCount()) return {};
    const auto& row = comparison_->rows[static_cast<std::size_t>(index.row())];
    const int column = index.column();
    switch (role) {
        case Qt::DisplayRole:
            switch (column) {
                // Ids and counts grouped as everywhere in the window (128,255), whatever the locale.
                case RowColumn: return ui::groupedNumber(index.row());
                case VerdictColumn: return verdictText(row.row);
                case ReferenceTokenColumn: return ui::groupedNumber(row.reference_token);
                case EngineTokenColumn: return ui::groupedNumber(row.engine_token);
                case LogprobDifferenceColumn: return logprobDifference(row.logprob_difference);
                case ReferenceKeptColumn: return ui::groupedNumber(row.reference_kept);
                case EngineKeptColumn: return ui::groupedNumber(row.engine_kept);
                case DetailColumn: return detail(row);
                default: return {};
            }
        case Qt::DecorationRole:
            if (column == VerdictColumn) return icon(row.row);
            return {};
        case Qt::BackgroundRole: {
            const QColor color = background(row.row);
            if (color.isValid()) return QBrush(color);
            return {};
        }
        case Qt::FontRole:
            if (column == VerdictColumn && row.row != Verdict::Equal) {
                QFont bold;
                bold.setBold(true);
                return bold;
            }
            return {};
        case Qt::TextAlignmentRole:
            if (column == VerdictColumn || column == DetailColumn) return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        case Qt::ToolTipRole:
            return tr("Reference token %1 (logprob %2), engine token %3 (logprob %4). Double-click to open the row.")
                .arg(ui::groupedNumber(row.reference_token))
                .arg(row.reference_logprob, 0, 'g', 17)
                .arg(ui::groupedNumber(row.engine_token))
                .arg(row.engine_logprob, 0, 'g', 17);
        case VerdictRole: return static_cast<int>(row.row);
        case SortRole:
            // Numbers sort as numbers, not as their grouped text.
            switch (column) {
                case RowColumn: return index.row();
                case VerdictColumn: return static_cast<int>(row.row);
                case ReferenceTokenColumn: return row.reference_token;
                case EngineTokenColumn: return row.engine_token;
                case LogprobDifferenceColumn: return row.logprob_difference;
                case ReferenceKeptColumn: return row.reference_kept;
                case EngineKeptColumn: return row.engine_kept;
                case DetailColumn: return detail(row);
                default: return data(index, Qt::DisplayRole);
            }
        default: return {};
    }
}

QVariant CompareRowsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
            case RowColumn: return tr("Row");
            case VerdictColumn: return tr("Verdict");
            case ReferenceTokenColumn: return tr("CPU token");
            case EngineTokenColumn: return tr("Engine token");
            case LogprobDifferenceColumn: return tr("|Δ logprob|");
            case ReferenceKeptColumn: return tr("CPU kept");
            case EngineKeptColumn: return tr("Engine kept");
            case DetailColumn: return tr("What differs");
            default: return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
            case VerdictColumn: return tr("The contract's near-tie rule (section 4): the worst of token, kept set and logprob.");
            case ReferenceTokenColumn: return tr("The token the CPU reference (exact f64) draws.");
            case EngineTokenColumn: return tr("The token the batch engine draws.");
            case LogprobDifferenceColumn:
                return tr("|engine logprob - reference logprob| of the engine's token (log_softmax after the penalties).");
            case ReferenceKeptColumn: return tr("Ids the CPU reference keeps after every truncation.");
            case EngineKeptColumn: return tr("Ids the batch engine keeps after every truncation.");
            default: return {};
        }
    }
    return {};
}

}  // namespace samplescope
