#include "ui/panels/logits_table_model.h"

#include <cmath>

#include "engine/base/input_error.h"
#include "ui/panels/parameter_control.h"

namespace samplescope::ui {

LogitsTableModel::LogitsTableModel(Session* session, QObject* parent)
    : QAbstractTableModel(parent), session_(session), shown_rows_(session->vocabSize()) {
    connect(session_, &Session::logitsChanged, this, [this] {
        // Same size: refresh in place (an edit in progress stays open); else reset.
        if (shown_rows_ == session_->vocabSize()) {
            if (shown_rows_ > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, 2));
            return;
        }
        beginResetModel();
        shown_rows_ = session_->vocabSize();
        endResetModel();
    });
    connect(session_, &Session::labelsChanged, this, [this] {
        if (shown_rows_ > 0) emit dataChanged(index(0, Label), index(rowCount() - 1, Label));
    });
}

int LogitsTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(shown_rows_); }
int LogitsTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : 3; }

QVariant LogitsTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || static_cast<std::size_t>(index.row()) >= session_->vocabSize()) return {};
    const auto id = static_cast<std::size_t>(index.row());
    if (role == Qt::TextAlignmentRole) {
        return index.column() == Label ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role != Qt::DisplayRole && role != Qt::EditRole && role != Qt::ToolTipRole) return {};
    switch (index.column()) {
        case Id: return index.row();
        case Label: {
            const auto& raw = session_->labels()->raw();
            if (role == Qt::EditRole) return id < raw.size() ? QString::fromStdString(raw[id]) : QString();
            return QString::fromStdString(session_->labels()->label(index.row()));
        }
        case Logit: {
            const double value = (*session_->logits())[id];
            return QString::fromStdString(format_number(value));
        }
        default: return {};
    }
}

QVariant LogitsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const QStringList names{QStringLiteral("id"), QStringLiteral("label"), QStringLiteral("logit")};
    return names.value(section);
}

Qt::ItemFlags LogitsTableModel::flags(const QModelIndex& index) const {
    Qt::ItemFlags flags = QAbstractTableModel::flags(index);
    if (index.column() != Id) flags |= Qt::ItemIsEditable;
    return flags;
}

bool LogitsTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::EditRole || !index.isValid()) return false;
    const auto id = static_cast<std::size_t>(index.row());
    try {
        if (index.column() == Label) {
            session_->setLabel(id, value.toString().toStdString());
            return true;
        }
        if (index.column() == Logit) {
            const auto number = parseNumberText(value.toString());
            if (!number) {
                throw InputError("logits", "logit of id " + std::to_string(id) + " must be a number, got \"" +
                                               value.toString().trimmed().toStdString() + "\"");
            }
            session_->setLogit(id, *number);
            return true;
        }
    } catch (const InputError& error) {
        emit editRefused(QString::fromUtf8(error.what()));
    }
    return false;
}

}  // namespace samplescope::ui
