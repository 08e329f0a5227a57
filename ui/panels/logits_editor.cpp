#include "ui/panels/logits_editor.h"

#include <set>
#include <vector>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLocale>
#include <QVBoxLayout>

#include "engine/base/input_error.h"

namespace samplescope::ui {

LogitsEditor::LogitsEditor(Session* session, QWidget* parent) : QWidget(parent), session_(session) {
    setObjectName(QStringLiteral("logits_editor"));
    model_ = new LogitsTableModel(session, this);
    table_ = new QTableView(this);
    table_->setObjectName(QStringLiteral("logits_table"));
    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->verticalHeader()->setVisible(false);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    table_->verticalHeader()->setDefaultSectionSize(22);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setColumnWidth(0, 80);
    table_->setColumnWidth(1, 220);

    auto* open = new QPushButton(QStringLiteral("Open file..."), this);
    open->setToolTip(QStringLiteral(".npy (f16, bf16, f32, f64), .safetensors (a tensor chooser when it holds several), "
                                    "a JSON array or object, CSV/TSV, plain text or `label: logit` lines. "
                                    "You can also drop a file on the window."));
    auto* paste = new QPushButton(QStringLiteral("Paste"), this);
    paste->setToolTip(QStringLiteral("Replace the row with the clipboard: bare numbers, `label: logit` per line, "
                                     "or comma/tab separated; a line of numbers only is a row of logits (Ctrl+Shift+V)"));
    auto* add = new QPushButton(QStringLiteral("Add row"), this);
    add->setObjectName(QStringLiteral("add_row"));
    add->setToolTip(QStringLiteral("Insert a token with logit 0 after the current row"));
    auto* remove = new QPushButton(QStringLiteral("Delete rows"), this);
    remove->setObjectName(QStringLiteral("delete_rows"));
    remove->setToolTip(QStringLiteral("Delete the selected tokens (ids after them shift down)"));
    row_label_ = new QLabel(QStringLiteral("Row of file:"), this);
    row_ = new QSpinBox(this);
    row_->setObjectName(QStringLiteral("matrix_row"));
    source_ = new QLabel(this);
    source_->setObjectName(QStringLiteral("logits_source"));

    auto* bar = new QHBoxLayout;
    for (QWidget* w : std::initializer_list<QWidget*>{open, paste, add, remove, row_label_, row_}) bar->addWidget(w);
    bar->addSpacing(12);
    bar->addWidget(source_, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(table_, 1);

    connect(open, &QPushButton::clicked, this, &LogitsEditor::openRequested);
    connect(paste, &QPushButton::clicked, this, &LogitsEditor::pasteRequested);
    connect(add, &QPushButton::clicked, this, &LogitsEditor::addRow);
    connect(remove, &QPushButton::clicked, this, &LogitsEditor::deleteSelectedRows);
    connect(model_, &LogitsTableModel::editRefused, this, &LogitsEditor::errorRaised);
    connect(row_, qOverload<int>(&QSpinBox::valueChanged), this, [this](int row) {
        if (static_cast<std::size_t>(row) == session_->matrixRow()) return;
        try {
            session_->setMatrixRow(static_cast<std::size_t>(row));
        } catch (const InputError& error) {
            emit errorRaised(QString::fromUtf8(error.what()));
        }
    });
    connect(session_, &Session::logitsChanged, this, &LogitsEditor::refreshSource);
    refreshSource();
}

void LogitsEditor::refreshSource() {
    const QLocale english(QLocale::English);
    source_->setText(QStringLiteral("Source: %1 · V = %2").arg(session_->source(), english.toString(static_cast<qulonglong>(session_->vocabSize()))));
    const bool many = session_->matrixRows() > 1;
    row_label_->setVisible(many);
    row_->setVisible(many);
    const QSignalBlocker block(row_);
    row_->setRange(0, static_cast<int>(session_->matrixRows()) - 1);
    row_->setValue(static_cast<int>(session_->matrixRow()));
    row_->setSuffix(QStringLiteral(" of %1").arg(session_->matrixRows()));
}

void LogitsEditor::addRow() {
    const QModelIndex current = table_->currentIndex();
    const std::size_t at = current.isValid() ? static_cast<std::size_t>(current.row()) + 1 : session_->vocabSize();
    try {
        session_->insertTokens(at, 1, 0.0);
        table_->setCurrentIndex(model_->index(static_cast<int>(at), LogitsTableModel::Logit));
        table_->scrollTo(table_->currentIndex());
    } catch (const InputError& error) {
        emit errorRaised(QString::fromUtf8(error.what()));
    }
}

void LogitsEditor::deleteSelectedRows() {
    std::set<int> rows;
    for (const QModelIndex& index : table_->selectionModel()->selectedRows()) rows.insert(index.row());
    if (rows.empty() && table_->currentIndex().isValid()) rows.insert(table_->currentIndex().row());
    if (rows.empty()) return;
    std::vector<std::size_t> ids;
    for (const int row : rows) ids.push_back(static_cast<std::size_t>(row));
    try {
        session_->removeTokens(std::move(ids));
    } catch (const InputError& error) {
        emit errorRaised(QString::fromUtf8(error.what()));
    }
}

}  // namespace samplescope::ui
