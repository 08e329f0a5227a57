// The input row as an editable table (id, label, logit), lazy so that a
// 128,256-token row costs only the rows on screen. An edit the contract
// refuses (a NaN or +inf logit, text that is not a number) is rejected with
// its message and the row stays as it was.
#pragma once

#include <QAbstractTableModel>

#include "ui/session/session.h"

namespace samplescope::ui {

class LogitsTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column : int { Id, Label, Logit };

    explicit LogitsTableModel(Session* session, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

signals:
    void editRefused(const QString& message);

private:
    Session* session_;
    std::size_t shown_rows_ = 0;
};

}  // namespace samplescope::ui
