// The token table with its search box: type a label or an id to filter, click
// a header to sort, select a row to highlight that token in every plot. The id
// and label columns stay in view when the table scrolls right (a second view
// over the same model lies over them), and every column is at least as wide
// as its header text.
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
    ~TokenTablePanel() override;

    TokenTableModel* model() const { return model_; }
    QTableView* table() const { return table_; }
    // The view over the frozen columns (id and label), on top of the table's own.
    QTableView* frozenTable() const { return frozen_; }
    QLineEdit* search() const { return search_; }
    QLabel* countLabel() const { return count_; }
    void setView(std::shared_ptr<const TraceView> view);
    void selectToken(std::int32_t id);  // scrolls to it; no signal

    static constexpr int kFrozenColumns = 2;  // id and label

signals:
    void tokenSelected(std::int32_t id);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    // A token selected while the table was hidden (--select, a click on a plot)
    // is scrolled to once the table has its size.
    void showEvent(QShowEvent* event) override;

private:
    void updateCount();
    // Widens every column narrower than its header's text (never narrows one).
    void fitHeaders();
    void placeFrozen();

    TokenTableModel* model_;
    QTableView* table_;
    QTableView* frozen_;
    QLineEdit* search_;
    QLabel* count_;
    std::int32_t selected_ = -1;
};

}  // namespace samplescope::ui
