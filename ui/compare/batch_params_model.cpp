#include "ui/compare/batch_params_model.h"

#include <QBrush>
#include <QColor>
#include <QLocale>
#include <QStringList>

#include <charconv>
#include <span>
#include <string>

#include "engine/base/input_error.h"
#include "kernels/batch_engine.h"

namespace samplescope {

namespace {

QString idList(const std::vector<std::int64_t>& ids) {
    QStringList parts;
    parts.reserve(static_cast<qsizetype>(ids.size()));
    for (const auto id : ids) parts << QString::number(id);
    return parts.join(QStringLiteral(", "));
}

std::vector<std::int64_t> parseIdList(const QString& text, const std::string& key) {
    std::vector<std::int64_t> ids;
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty()) return ids;
    for (const QString& part : trimmed.split(QLatin1Char(','))) {
        bool ok = false;
        const qlonglong id = QLocale::c().toLongLong(part.trimmed(), &ok);
        if (!ok) {
            throw InputError(key, key + " must be a comma-separated list of integer ids, got \"" +
                                      part.trimmed().toStdString() + "\"");
        }
        ids.push_back(id);
    }
    return ids;
}

std::uint64_t parseSkipDraws(const QString& text) {
    const std::string s = text.trimmed().toStdString();
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) {
        throw InputError("skip_draws", "skip_draws must be an integer >= 0, got \"" + s + "\"");
    }
    return value;
}

}  // namespace

BatchParamsModel::BatchParamsModel(QObject* parent) : QAbstractTableModel(parent) {}

void BatchParamsModel::setRequests(std::vector<RowRequest> requests, std::size_t vocab) {
    beginResetModel();
    requests_ = std::move(requests);
    vocab_ = vocab;
    last_error_.clear();
    endResetModel();
}

void BatchParamsModel::setEditable(bool editable) {
    editable_ = editable;
    if (!requests_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, kColumnCount - 1));
}

std::optional<Param> BatchParamsModel::paramAt(int column) {
    if (column < 0 || column >= kParamColumns) return std::nullopt;
    return kParams[static_cast<std::size_t>(column)].param;
}

int BatchParamsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(requests_.size());
}

int BatchParamsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QString BatchParamsModel::text(const RowRequest& request, int column, bool full) const {
    if (const auto param = paramAt(column)) {
        if (*param == Param::TopK) return QString::number(request.params.top_k);
        const double value = param_value(request.params, *param);
        // The cell shows 8 significant digits; the editor and the tooltip the exact value.
        return full ? QString::fromStdString(format_number(value)) : QString::number(value, 'g', 8);
    }
    switch (column) {
        case kSeedColumn: return request.params.seed ? QString::number(*request.params.seed) : QString();
        case kSkipDrawsColumn: return QString::number(request.skip_draws);
        case kPromptColumn: return idList(request.prompt_ids);
        case kOutputColumn: return idList(request.output_ids);
        default: return {};
    }
}

bool BatchParamsModel::isOff(const RowRequest& request, int column) const {
    const auto param = paramAt(column);
    // Off as the parameter's badge says (its stage descriptor's row).
    return param && !param_badge(param_info(*param), request.params, vocab_).on;
}

QVariant BatchParamsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const RowRequest& request = requests_[static_cast<std::size_t>(index.row())];
    const int column = index.column();
    switch (role) {
        case Qt::DisplayRole: return text(request, column, false);
        case Qt::EditRole: return text(request, column, true);
        case Qt::ForegroundRole:
            // Off parameters are greyed, so the stages a row uses stand out.
            if (isOff(request, column)) return QBrush(QColor(0x8a, 0x8a, 0x8a));
            return {};
        case Qt::TextAlignmentRole:
            if (column < kPromptColumn) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
            return {};
        case Qt::ToolTipRole:
            return text(request, column, true) + QStringLiteral("\n") +
                   headerData(column, Qt::Horizontal, Qt::ToolTipRole).toString();
        default: return {};
    }
}

QVariant BatchParamsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Vertical) {
        if (role == Qt::DisplayRole) return QString::number(section);
        return {};
    }
    if (role == Qt::DisplayRole) {
        if (const auto param = paramAt(section)) return QString::fromUtf8(param_info(*param).label.data(),
                                                                          static_cast<qsizetype>(param_info(*param).label.size()));
        switch (section) {
            case kSeedColumn: return tr("Seed");
            case kSkipDrawsColumn: return tr("Draws used");
            case kPromptColumn: return tr("Prompt ids");
            case kOutputColumn: return tr("Output ids");
            default: return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        if (const auto param = paramAt(section)) {
            const auto& info = param_info(*param);
            return QString::fromStdString(std::string(info.key) + ": " + std::string(info.formula) + " Valid: " +
                                          std::string(info.valid_range) + ".");
        }
        switch (section) {
            case kSeedColumn: return tr("seed: a decimal integer in [0, 2^64 - 1]; empty chooses a new one.");
            case kSkipDrawsColumn: return tr("skip_draws: uniforms the row's stream has already consumed.");
            case kPromptColumn: return tr("prompt_ids: comma-separated ids in [0, V), for the repetition penalty.");
            case kOutputColumn: return tr("output_ids: comma-separated ids in [0, V), for every penalty.");
            default: return {};
        }
    }
    return {};
}

Qt::ItemFlags BatchParamsModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsSelectable | Qt::ItemIsEnabled;
    if (editable_) f |= Qt::ItemIsEditable;
    return f;
}

RowRequest BatchParamsModel::edited(int row, int column, const QString& value) const {
    RowRequest request = requests_[static_cast<std::size_t>(row)];
    if (const auto param = paramAt(column)) {
        const std::string key(param_info(*param).key);
        bool ok = false;
        const double number = QLocale::c().toDouble(value.trimmed(), &ok);
        if (!ok) throw InputError(key, key + " must be a number, got \"" + value.trimmed().toStdString() + "\"");
        set_param(request.params, *param, number);
        return request;
    }
    switch (column) {
        case kSeedColumn:
            if (value.trimmed().isEmpty()) {
                request.params.seed = choose_seed();
            } else {
                request.params.seed = parse_seed(value.trimmed().toStdString());
            }
            break;
        case kSkipDrawsColumn: request.skip_draws = parseSkipDraws(value); break;
        case kPromptColumn:
        case kOutputColumn: {
            auto& ids = column == kPromptColumn ? request.prompt_ids : request.output_ids;
            ids = parseIdList(value, column == kPromptColumn ? "prompt_ids" : "output_ids");
            // The batch engine's own check names the id outside [0, V); it
            // calls this single row "row 0", and the caller names the real one.
            try {
                (void)batch::make_batch_input(nullptr, 1, vocab_, std::span<const RowRequest>(&request, 1));
            } catch (const InputError& error) {
                std::string message = error.what();
                if (message.rfind("row 0: ", 0) == 0) message.erase(0, 7);
                throw InputError(error.field(), message);
            }
            break;
        }
        default: break;
    }
    return request;
}

std::optional<QString> BatchParamsModel::check(int row, int column, const QString& value) const {
    try {
        (void)edited(row, column, value);
    } catch (const InputError& error) {
        return tr("row %1: %2").arg(row).arg(QString::fromStdString(error.what()));
    }
    return std::nullopt;
}

bool BatchParamsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || role != Qt::EditRole || !editable_) return false;
    const int row = index.row();
    const int column = index.column();
    if (const auto refusal = check(row, column, value.toString())) {
        // The contract: refuse with one line, keep what the user had.
        last_error_ = *refusal;
        emit editRefused(row, column, last_error_);
        return false;
    }
    last_error_.clear();
    RowRequest request = edited(row, column, value.toString());
    RowRequest& current = requests_[static_cast<std::size_t>(row)];
    if (request.params == current.params && request.prompt_ids == current.prompt_ids &&
        request.output_ids == current.output_ids && request.skip_draws == current.skip_draws) {
        return true;
    }
    current = std::move(request);
    emit dataChanged(this->index(row, 0), this->index(row, kColumnCount - 1));
    emit requestsEdited();
    return true;
}

}  // namespace samplescope
