#include "ui/panels/token_table_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLocale>
#include <QVBoxLayout>

namespace samplescope::ui {

TokenTablePanel::TokenTablePanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("token_table_panel"));
    model_ = new TokenTableModel(this);
    search_ = new QLineEdit(this);
    search_->setObjectName(QStringLiteral("token_search"));
    search_->setPlaceholderText(QStringLiteral("Search by label or id"));
    search_->setClearButtonEnabled(true);
    count_ = new QLabel(this);
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(QStringLiteral("Find:"), this));
    top->addWidget(search_, 1);
    top->addWidget(count_);

    table_ = new QTableView(this);
    table_->setObjectName(QStringLiteral("token_table"));
    table_->setModel(model_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(TokenTableModel::Id, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setAlternatingRowColors(true);
    table_->verticalHeader()->setVisible(false);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    table_->verticalHeader()->setDefaultSectionSize(22);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    table_->horizontalHeader()->setDefaultSectionSize(118);
    table_->setColumnWidth(TokenTableModel::Id, 70);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(table_, 1);

    connect(search_, &QLineEdit::textChanged, this, [this](const QString& text) {
        model_->setFilter(text);
        count_->setText(QStringLiteral("%1 rows").arg(QLocale(QLocale::English).toString(model_->rowCount())));
        if (selected_ >= 0) selectToken(selected_);
    });
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current, const QModelIndex&) {
                const std::int32_t id = model_->idAt(current.row());
                if (id >= 0 && id != selected_) {
                    selected_ = id;
                    emit tokenSelected(id);
                }
            });
}

void TokenTablePanel::setView(std::shared_ptr<const TraceView> view) {
    model_->setView(std::move(view));
    count_->setText(QStringLiteral("%1 rows").arg(QLocale(QLocale::English).toString(model_->rowCount())));
    if (selected_ >= 0) selectToken(selected_);
}

void TokenTablePanel::selectToken(std::int32_t id) {
    selected_ = id;
    const int row = model_->rowOf(id);
    const QSignalBlocker block(table_->selectionModel());
    if (row < 0) {
        table_->clearSelection();
        return;
    }
    const QModelIndex index = model_->index(row, 0);
    table_->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    table_->scrollTo(index, QAbstractItemView::PositionAtCenter);
    table_->viewport()->update();
}

}  // namespace samplescope::ui
