#include "ui/panels/token_table_panel.h"

#include <QTimer>

#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include "ui/common/count_text.h"

namespace samplescope::ui {

namespace {

constexpr int kRowHeight = 22;

void setUpRows(QTableView* table) {
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->setAlternatingRowColors(true);
    table->verticalHeader()->setVisible(false);
    table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    table->verticalHeader()->setDefaultSectionSize(kRowHeight);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
}

}  // namespace

TokenTablePanel::TokenTablePanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("token_table_panel"));
    model_ = new TokenTableModel(this);
    search_ = new QLineEdit(this);
    search_->setObjectName(QStringLiteral("token_search"));
    search_->setPlaceholderText(QStringLiteral("Search by label or id"));
    search_->setClearButtonEnabled(true);
    count_ = new QLabel(this);
    count_->setObjectName(QStringLiteral("token_count"));
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(QStringLiteral("Find:"), this));
    top->addWidget(search_, 1);
    top->addWidget(count_);

    table_ = new QTableView(this);
    table_->setObjectName(QStringLiteral("token_table"));
    table_->setModel(model_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(TokenTableModel::Id, Qt::AscendingOrder);
    setUpRows(table_);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    table_->horizontalHeader()->setDefaultSectionSize(118);
    table_->setColumnWidth(TokenTableModel::Id, 70);

    // The id and label columns, frozen: a second view over the same model and
    // selection, showing only those columns, lies over the table's own copy of
    // them and scrolls with it vertically, never horizontally.
    frozen_ = new QTableView(table_);
    frozen_->setObjectName(QStringLiteral("token_table_frozen"));
    frozen_->setModel(model_);
    frozen_->setSelectionModel(table_->selectionModel());
    setUpRows(frozen_);
    frozen_->setFocusPolicy(Qt::NoFocus);
    frozen_->setFrameShape(QFrame::NoFrame);
    frozen_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    frozen_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    frozen_->setVerticalScrollMode(table_->verticalScrollMode());
    frozen_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    frozen_->horizontalHeader()->setSortIndicator(TokenTableModel::Id, Qt::AscendingOrder);
    frozen_->setSortingEnabled(true);
    frozen_->setStyleSheet(QStringLiteral("#token_table_frozen { border-right: 1px solid #8a8a8a; }"));
    table_->viewport()->stackUnder(frozen_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(table_, 1);

    const auto hideUnfrozen = [this] {
        for (int c = 0; c < model_->columnCount(); ++c) frozen_->setColumnHidden(c, c >= kFrozenColumns);
        for (int c = 0; c < kFrozenColumns; ++c) frozen_->setColumnWidth(c, table_->columnWidth(c));
        placeFrozen();
    };
    hideUnfrozen();
    connect(model_, &QAbstractItemModel::modelReset, this, hideUnfrozen);
    connect(table_->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int section, int, int size) {
        if (section >= kFrozenColumns) return;
        if (frozen_->columnWidth(section) != size) frozen_->setColumnWidth(section, size);
        placeFrozen();
    });
    connect(frozen_->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int section, int, int size) {
        if (section < kFrozenColumns && table_->columnWidth(section) != size) table_->setColumnWidth(section, size);
    });
    connect(table_->horizontalHeader(), &QHeaderView::geometriesChanged, this, &TokenTablePanel::placeFrozen);
    // The table leads: the frozen view follows its position, and only a scroll
    // the frozen view makes itself (a wheel over it) is passed back, never a
    // clamp while its range is still catching up with the table's.
    QScrollBar* down = table_->verticalScrollBar();
    QScrollBar* frozen_down = frozen_->verticalScrollBar();
    connect(down, &QAbstractSlider::valueChanged, frozen_down, &QAbstractSlider::setValue);
    connect(frozen_down, &QAbstractSlider::rangeChanged, this, [down, frozen_down] { frozen_down->setValue(down->value()); });
    connect(frozen_down, &QAbstractSlider::valueChanged, this, [down, frozen_down](int value) {
        if (frozen_down->maximum() == down->maximum() && value != down->value()) down->setValue(value);
    });
    // One sort indicator for both headers (the model sorts once, for whichever was clicked).
    const auto mirror = [](QHeaderView* to) {
        return [to](int section, Qt::SortOrder order) {
            const QSignalBlocker block(to);
            to->setSortIndicator(section, order);
        };
    };
    connect(table_->horizontalHeader(), &QHeaderView::sortIndicatorChanged, this, mirror(frozen_->horizontalHeader()));
    connect(frozen_->horizontalHeader(), &QHeaderView::sortIndicatorChanged, this, mirror(table_->horizontalHeader()));
    table_->installEventFilter(this);

    connect(search_, &QLineEdit::textChanged, this, [this](const QString& text) {
        model_->setFilter(text);
        updateCount();
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

bool TokenTablePanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == table_ && (event->type() == QEvent::Resize || event->type() == QEvent::Show)) placeFrozen();
    return QWidget::eventFilter(watched, event);
}

void TokenTablePanel::placeFrozen() {
    int width = 0;
    for (int c = 0; c < kFrozenColumns; ++c) width += table_->columnWidth(c);
    const QHeaderView* header = table_->horizontalHeader();
    frozen_->setGeometry(table_->viewport()->x(), header->y(), width, header->height() + table_->viewport()->height());
}

void TokenTablePanel::updateCount() { count_->setText(countText(model_->rowCount(), QStringLiteral("row"), QStringLiteral("rows"))); }

void TokenTablePanel::fitHeaders() {
    QHeaderView* header = table_->horizontalHeader();
    for (int c = 0; c < model_->columnCount(); ++c) {
        const int needed = header->sectionSizeHint(c);
        if (header->sectionSize(c) < needed) header->resizeSection(c, needed);
    }
}

void TokenTablePanel::setView(std::shared_ptr<const TraceView> view) {
    model_->setView(std::move(view));
    updateCount();
    fitHeaders();
    if (selected_ >= 0) selectToken(selected_);
}

TokenTablePanel::~TokenTablePanel() {
    // ~QWidget deletes the two tables after this class's part is gone, and
    // their headers still signal while they go: those signals must not reach it.
    for (QObject* child : findChildren<QObject*>()) QObject::disconnect(child, nullptr, this, nullptr);
}

void TokenTablePanel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (selected_ >= 0) {
        // After the layout has given the table its height, so the row lands in the middle.
        QTimer::singleShot(0, this, [this] {
            if (selected_ >= 0) selectToken(selected_);
        });
    }
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
    // To the row only: the columns stay where the user scrolled them (id and label are frozen in view).
    const int across = table_->horizontalScrollBar()->value();
    table_->scrollTo(index, QAbstractItemView::PositionAtCenter);
    table_->horizontalScrollBar()->setValue(across);
    table_->viewport()->update();
    frozen_->viewport()->update();
}

}  // namespace samplescope::ui
