// The input row: an editable table with add/delete rows, paste from the
// clipboard, open a file, and the row selector for 2-D files.
#pragma once

#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QWidget>

#include "ui/panels/logits_table_model.h"
#include "ui/session/session.h"

namespace samplescope::ui {

class LogitsEditor : public QWidget {
    Q_OBJECT
public:
    explicit LogitsEditor(Session* session, QWidget* parent = nullptr);

    LogitsTableModel* model() const { return model_; }
    QTableView* table() const { return table_; }
    QSpinBox* rowSelector() const { return row_; }

    void addRow();
    void deleteSelectedRows();

signals:
    void openRequested();
    void pasteRequested();
    void errorRaised(const QString& message);

private:
    void refreshSource();

    Session* session_;
    LogitsTableModel* model_;
    QTableView* table_;
    QLabel* source_;
    QSpinBox* row_;
    QLabel* row_label_;
};

}  // namespace samplescope::ui
