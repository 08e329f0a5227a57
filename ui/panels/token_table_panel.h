// The token table with its search box: type a label or an id to filter, click
// a header to sort, select a row to highlight that token in every plot.
#pragma once

#include <cstdint>

#include <QLabel>
#include <QLineEdit>
#include <QTableView>
#include <QWidget>

#include "ui/panels/token_table_model.h"

namespace samplescope::ui {

class TokenTablePanel : public QWidget {
    Q_OBJECT
public:
    explicit TokenTablePanel(QWidget* parent = nullptr);

    TokenTableModel* model() const { return model_; }
    QTableView* table() const { return table_; }
    QLineEdit* search() const { return search_; }
    void setView(std::shared_ptr<const TraceView> view);
    void selectToken(std::int32_t id);  // scrolls to it; no signal

signals:
    void tokenSelected(std::int32_t id);

private:
    TokenTableModel* model_;
    QTableView* table_;
    QLineEdit* search_;
    QLabel* count_;
    std::int32_t selected_ = -1;
};

}  // namespace samplescope::ui
