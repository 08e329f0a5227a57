// The per-row parameters of a batch as an editable table: one column per
// sampling parameter (in the pipeline's order, named by the kParams table),
// then the seed, the draws already consumed and the prompt/output ids as comma
// lists. An edit the contract refuses is not applied: the cell keeps its value
// and editRefused carries the contract's one-line message.
#pragma once

#include <QAbstractTableModel>

#include <cstddef>
#include <optional>
#include <vector>

#include "engine/json/params_json.h"
#include "engine/core/sampling_params.h"

namespace samplescope {

class BatchParamsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int kParamColumns = static_cast<int>(kContractParamCount);  // the batch engine's
    static constexpr int kSeedColumn = kParamColumns;
    static constexpr int kSkipDrawsColumn = kParamColumns + 1;
    static constexpr int kPromptColumn = kParamColumns + 2;
    static constexpr int kOutputColumn = kParamColumns + 3;
    static constexpr int kColumnCount = kParamColumns + 4;

    explicit BatchParamsModel(QObject* parent = nullptr);

    void setRequests(std::vector<RowRequest> requests, std::size_t vocab);
    const std::vector<RowRequest>& requests() const { return requests_; }
    std::size_t vocab() const { return vocab_; }
    void setEditable(bool editable);

    static int columnOf(Param param) { return static_cast<int>(param); }
    static std::optional<Param> paramAt(int column);

    // The message refusing `text` in that cell, or none when it would be accepted.
    std::optional<QString> check(int row, int column, const QString& text) const;
    // The last refusal's message (empty after an accepted edit).
    const QString& lastError() const { return last_error_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

signals:
    void editRefused(int row, int column, const QString& message);
    void requestsEdited();

private:
    // Applies the text to a copy of the row, or throws InputError with the contract's message.
    RowRequest edited(int row, int column, const QString& text) const;
    QString text(const RowRequest& request, int column, bool full) const;
    bool isOff(const RowRequest& request, int column) const;

    std::vector<RowRequest> requests_;
    std::size_t vocab_ = 0;
    bool editable_ = true;
    QString last_error_;
};

}  // namespace samplescope
