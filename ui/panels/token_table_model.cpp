#include "ui/panels/token_table_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <QBrush>
#include <QColor>
#include <QFont>

#include "engine/base/input_error.h"
#include "ui/common/palette.h"

namespace samplescope::ui {

std::vector<Stage> tableStages() {
    std::vector<Stage> stages;
    for (const auto& info : kStages) {
        if (info.stage != Stage::Draw && info.contract) stages.push_back(info.stage);
    }
    return stages;
}

namespace {

QString viewOf(std::string_view text) { return QString::fromUtf8(text.data(), static_cast<int>(text.size())); }
QString shortNumber(double value) {
    if (std::isinf(value)) return value < 0 ? QStringLiteral("-inf") : QStringLiteral("inf");
    return QString::number(value, 'g', 6);
}
QString exactNumber(double value) { return QString::fromStdString(format_number(value)); }

}  // namespace

TokenTableModel::TokenTableModel(QObject* parent) : QAbstractTableModel(parent) {}

Stage TokenTableModel::stageOfColumn(int column) {
    return tableStages()[static_cast<std::size_t>(column - FirstStage)];
}

void TokenTableModel::setView(std::shared_ptr<const TraceView> view) {
    const bool reshape = !view_ || !view || view_->trace->vocab_size != view->trace->vocab_size || view_->labels != view->labels;
    if (reshape) {
        beginResetModel();
        view_ = std::move(view);
        rebuildRows();
        endResetModel();
        return;
    }
    view_ = std::move(view);
    if (sort_column_ > Label) {
        // The values changed, so the order may have: rebuild it.
        emit layoutAboutToBeChanged();
        rebuildRows();
        emit layoutChanged();
    }
    emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
    emit headerDataChanged(Qt::Horizontal, 0, columnCount() - 1);
}

void TokenTableModel::setFilter(const QString& text) {
    beginResetModel();
    filter_ = text.trimmed();
    rebuildRows();
    endResetModel();
}

void TokenTableModel::rebuildRows() {
    rows_.clear();
    all_rows_ = true;
    if (!view_) return;
    const auto vocab = static_cast<std::int32_t>(view_->trace->vocab_size);
    if (filter_.isEmpty() && sort_column_ == Id && sort_order_ == Qt::AscendingOrder) return;
    all_rows_ = false;
    rows_.reserve(static_cast<std::size_t>(vocab));
    if (filter_.isEmpty()) {
        rows_.resize(static_cast<std::size_t>(vocab));
        std::iota(rows_.begin(), rows_.end(), 0);
    } else {
        bool is_number = false;
        const long long wanted = filter_.toLongLong(&is_number);
        const std::string needle = filter_.toLower().toStdString();
        for (std::int32_t id = 0; id < vocab; ++id) {
            if (is_number && wanted == id) {
                rows_.push_back(id);
                continue;
            }
            std::string label = view_->labels->label(id);
            std::transform(label.begin(), label.end(), label.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if (label.find(needle) != std::string::npos) rows_.push_back(id);
        }
    }
    if (sort_column_ == Label) {
        std::vector<std::string> labels(rows_.size());
        std::vector<std::size_t> order(rows_.size());
        for (std::size_t i = 0; i < rows_.size(); ++i) labels[i] = view_->labels->label(rows_[i]);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return labels[a] < labels[b]; });
        std::vector<std::int32_t> sorted(rows_.size());
        for (std::size_t i = 0; i < order.size(); ++i) sorted[i] = rows_[order[i]];
        rows_ = std::move(sorted);
    } else if (sort_column_ != Id) {
        // Dense keys first: one lookup per id instead of one per comparison.
        std::vector<double> keys(rows_.size());
        for (std::size_t i = 0; i < rows_.size(); ++i) keys[i] = sortKey(rows_[i], sort_column_);
        std::vector<std::size_t> order(rows_.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&keys](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
        std::vector<std::int32_t> sorted(rows_.size());
        for (std::size_t i = 0; i < order.size(); ++i) sorted[i] = rows_[order[i]];
        rows_ = std::move(sorted);
    }
    if (sort_order_ == Qt::DescendingOrder) std::reverse(rows_.begin(), rows_.end());
}

void TokenTableModel::sort(int column, Qt::SortOrder order) {
    if (column < 0 || column >= columnCount()) return;
    emit layoutAboutToBeChanged();
    sort_column_ = column;
    sort_order_ = order;
    rebuildRows();
    emit layoutChanged();
}

int TokenTableModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !view_) return 0;
    return all_rows_ ? static_cast<int>(view_->trace->vocab_size) : static_cast<int>(rows_.size());
}

int TokenTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : FirstStage + static_cast<int>(tableStages().size());
}

std::int32_t TokenTableModel::idAt(int row) const {
    if (row < 0 || row >= rowCount()) return -1;
    return all_rows_ ? row : rows_[static_cast<std::size_t>(row)];
}

int TokenTableModel::rowOf(std::int32_t id) const {
    if (!view_ || id < 0 || static_cast<std::size_t>(id) >= view_->trace->vocab_size) return -1;
    if (all_rows_) return id;
    const auto it = std::find(rows_.begin(), rows_.end(), id);
    return it == rows_.end() ? -1 : static_cast<int>(it - rows_.begin());
}

double TokenTableModel::sortKey(std::int32_t id, int column) const {
    const SampleTrace& trace = *view_->trace;
    const auto at = static_cast<std::size_t>(id);
    switch (column) {
        case Id: return id;
        case RawLogit: return (*view_->raw_logits)[at];
        case PenalisedLogit: return (*trace.stage(Stage::PresenceFrequency).logits)[at];
        case ScaledLogit: return (*trace.stage(Stage::Temperature).logits)[at];
        default: {
            const StageTrace& stage = trace.stage(stageOfColumn(column));
            return stage.keeps(id) ? stage.prob_of(id) : -1.0;  // dropped sorts below every kept q
        }
    }
}

QString TokenTableModel::exactText(int row, int column) const {
    const std::int32_t id = idAt(row);
    if (id < 0) return {};
    if (column == Id) return QString::number(id);
    if (column == Label) return QString::fromStdString(view_->labels->label(id));
    if (column < FirstStage) return exactNumber(sortKey(id, column));
    const StageTrace& stage = view_->trace->stage(stageOfColumn(column));
    return stage.keeps(id) ? exactNumber(stage.prob_of(id)) : QStringLiteral("dropped");
}

QVariant TokenTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !view_) return {};
    const std::int32_t id = idAt(index.row());
    if (id < 0) return {};
    const int column = index.column();
    const SampleTrace& trace = *view_->trace;
    const bool chosen = id == trace.token;
    const bool is_stage = column >= FirstStage;
    const bool dropped = is_stage && !trace.stage(stageOfColumn(column)).keeps(id);
    switch (role) {
        case Qt::DisplayRole:
            if (column == Id) return id;
            if (column == Label) return QString::fromStdString(view_->labels->label(id));
            if (dropped) return QStringLiteral("dropped");
            return shortNumber(sortKey(id, column));
        case Qt::ToolTipRole: return exactText(index.row(), column);
        case kSortKeyRole: return column == Label ? QVariant(QString::fromStdString(view_->labels->label(id))) : QVariant(sortKey(id, column));
        case Qt::TextAlignmentRole:
            return column == Label ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
        case Qt::ForegroundRole:
            if (dropped) return QBrush(QColor(0x99, 0x99, 0x99));
            return {};
        case Qt::BackgroundRole:
            if (chosen) return QBrush(QColor(0xD5, 0x5E, 0x00, 50));
            return {};
        case Qt::FontRole:
            if (chosen || dropped) {
                QFont font;
                font.setBold(chosen);
                font.setItalic(dropped);
                return font;
            }
            return {};
        default: return {};
    }
}

QVariant TokenTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
    if (section < FirstStage) {
        static const QStringList names{QStringLiteral("id"), QStringLiteral("label"), QStringLiteral("raw logit"),
                                       QStringLiteral("penalised logit"), QStringLiteral("scaled logit")};
        static const QStringList tips{QStringLiteral("Token id"), QStringLiteral("Token label (tok_<id> without a vocabulary)"),
                                      QStringLiteral("The logit as given"),
                                      QStringLiteral("After the repetition, presence and frequency penalties"),
                                      QStringLiteral("After temperature (l / T)")};
        return role == Qt::DisplayRole ? names[section] : tips[section];
    }
    const auto& info = stage_info(stageOfColumn(section));
    const bool active = view_ && view_->trace->stage(info.stage).active;
    if (role == Qt::DisplayRole) {
        return QStringLiteral("q: %1%2").arg(viewOf(info.title), view_ && !active ? QStringLiteral(" (off)") : QString());
    }
    return QStringLiteral("Probability after this stage, or \"dropped\". %1").arg(viewOf(info.summary));
}

}  // namespace samplescope::ui
