#include "ui/compare/compare_view.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>
#include <limits>

#include "engine/base/input_error.h"
#include "ui/compare/batch_params_model.h"
#include "ui/compare/compare_rows_model.h"
#include "ui/common/count_text.h"

namespace samplescope {

namespace {

QString fromView(std::string_view text) { return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size())); }

QString duration(double seconds) {
    if (seconds < 1e-3) return QObject::tr("%1 µs").arg(seconds * 1e6, 0, 'f', 1);
    if (seconds < 1.0) return QObject::tr("%1 ms").arg(seconds * 1e3, 0, 'f', 2);
    return QObject::tr("%1 s").arg(seconds, 0, 'f', 2);
}

QString chip(const QString& text, Verdict verdict, std::size_t count) {
    const QColor color = CompareRowsModel::background(verdict);
    // Only a non-zero near-tie or mismatch count is tinted, so the eye goes there.
    if (count == 0 || !color.isValid()) return QStringLiteral("&nbsp;%1&nbsp;").arg(text);
    return QStringLiteral("<span style='background-color:%1'>&nbsp;<b>%2</b>&nbsp;</span>").arg(color.name(), text);
}

const QString kErrorStyle = QStringLiteral("color:#a6290a");

}  // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
    params_model_ = new BatchParamsModel(this);
    rows_model_ = new CompareRowsModel(this);
    rows_proxy_ = new QSortFilterProxyModel(this);
    rows_proxy_->setSourceModel(rows_model_);
    rows_proxy_->setSortRole(CompareRowsModel::SortRole);
    rows_proxy_->setFilterRole(CompareRowsModel::VerdictRole);
    watcher_ = new QFutureWatcher<RunOutcome>(this);
    buildLayout();

    connect(watcher_, &QFutureWatcher<RunOutcome>::finished, this, &CompareView::runFinished);
    connect(generate_button_, &QPushButton::clicked, this, [this] { generate(); });
    connect(open_logits_button_, &QPushButton::clicked, this, &CompareView::openLogitsDialog);
    connect(open_params_button_, &QPushButton::clicked, this, &CompareView::openParamsDialog);
    connect(run_button_, &QPushButton::clicked, this, [this] { runComparison(); });
    connect(mode_combo_, &QComboBox::currentIndexChanged, this, [this] {
        draws_spin_->setEnabled(options().mode == batch::Mode::Fast);
    });
    connect(only_differences_, &QCheckBox::toggled, this, [this](bool only) {
        // VerdictRole holds the Verdict as an int: keep every row but the equal ones.
        rows_proxy_->setFilterRegularExpression(
            only ? QStringLiteral("^(?!%1$)").arg(static_cast<int>(Verdict::Equal)) : QString());
    });
    connect(rows_table_, &QTableView::doubleClicked, this,
            [this](const QModelIndex& index) { openRow(rows_proxy_->mapToSource(index).row()); });
    connect(params_model_, &BatchParamsModel::editRefused, this, [this](int row, int column, const QString& message) {
        showError(tr("Refused (the cell keeps its value): %1").arg(message));
        const QRect cell = params_table_->visualRect(params_model_->index(row, column));
        QToolTip::showText(params_table_->viewport()->mapToGlobal(cell.bottomLeft()), message, params_table_);
    });
    connect(params_model_, &BatchParamsModel::requestsEdited, this, [this] {
        clearError();
        if (comparison_) {
            results_stale_ = true;
            showSummary();
        }
    });

    draws_spin_->setEnabled(false);
    updateSource();
    showSummary();
}

CompareView::~CompareView() {
    // The run holds its own copy of the batch; waiting only keeps it from
    // outliving the application.
    watcher_->waitForFinished();
}

void CompareView::buildLayout() {
    auto* layout = new QVBoxLayout(this);

    // The batch: generate one or open files.
    auto* batch_box = new QGroupBox(tr("Batch"), this);
    auto* batch_layout = new QVBoxLayout(batch_box);
    auto* generate_row = new QHBoxLayout;
    rows_spin_ = new QSpinBox(batch_box);
    rows_spin_->setRange(1, 4096);
    rows_spin_->setValue(64);
    rows_spin_->setToolTip(tr("B: rows in the batch"));
    vocab_spin_ = new QSpinBox(batch_box);
    vocab_spin_->setRange(1, 262144);
    vocab_spin_->setValue(1000);
    vocab_spin_->setToolTip(tr("V: ids per row"));
    workload_combo_ = new QComboBox(batch_box);
    for (const auto workload : {batch::Workload::Mixed, batch::Workload::EveryStage, batch::Workload::TopPOnly,
                                batch::Workload::Greedy}) {
        workload_combo_->addItem(fromView(batch::workload_name(workload)), static_cast<int>(workload));
    }
    workload_combo_->setToolTip(tr("mixed: every kind of row (greedy, each stage alone and together, -inf ids, ties);\n"
                                   "every-stage: penalties over 1,000-id histories, T = 0.7, k = 50, p = 0.9, m = 0.05;\n"
                                   "top-p: p = 0.9; greedy: T = 0"));
    seed_spin_ = new QSpinBox(batch_box);
    seed_spin_->setRange(0, std::numeric_limits<int>::max());
    seed_spin_->setToolTip(tr("Seed of the generated logits and parameters"));
    generate_button_ = new QPushButton(tr("Generate"), batch_box);
    open_logits_button_ = new QPushButton(tr("Open logits…"), batch_box);
    open_logits_button_->setToolTip(tr("A [B, V] logits file: a 2-D .npy of f32/f64, or any format the trace view reads"));
    open_params_button_ = new QPushButton(tr("Open params…"), batch_box);
    open_params_button_->setToolTip(tr("A JSON list with one object per row (temperature, top_k, top_p, min_p, "
                                       "repetition_penalty, presence_penalty, frequency_penalty, seed as a decimal "
                                       "string, prompt_ids, output_ids, skip_draws)"));
    generate_row->addWidget(new QLabel(tr("Generate a batch:"), batch_box));
    generate_row->addWidget(new QLabel(tr("B"), batch_box));
    generate_row->addWidget(rows_spin_);
    generate_row->addWidget(new QLabel(tr("V"), batch_box));
    generate_row->addWidget(vocab_spin_);
    generate_row->addWidget(new QLabel(tr("Workload"), batch_box));
    generate_row->addWidget(workload_combo_);
    generate_row->addWidget(new QLabel(tr("Seed"), batch_box));
    generate_row->addWidget(seed_spin_);
    generate_row->addWidget(generate_button_);
    generate_row->addStretch(1);
    batch_layout->addLayout(generate_row);
    // Files on a line of their own, so the batch box fits a 1280-pixel window.
    auto* files_row = new QHBoxLayout;
    files_row->addWidget(new QLabel(tr("or open files:"), batch_box));
    files_row->addWidget(open_logits_button_);
    files_row->addWidget(open_params_button_);
    files_row->addStretch(1);
    batch_layout->addLayout(files_row);
    source_label_ = new QLabel(batch_box);
    source_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    batch_layout->addWidget(source_label_);
    layout->addWidget(batch_box);

    // The run: mode, backend, draws; the busy indicator.
    auto* run_row = new QHBoxLayout;
    mode_combo_ = new QComboBox(this);
    for (const auto mode : {batch::Mode::Exact, batch::Mode::Fast}) {
        mode_combo_->addItem(fromView(batch::mode_name(mode)), static_cast<int>(mode));
    }
    mode_combo_->setToolTip(tr("exact: the contract row by row (f64, the PCG32 stream), tolerance 1e-9;\n"
                               "fast: f32 selection and a Gumbel-max draw, compared on kept sets (1e-5) and logprobs (1e-4)"));
    backend_combo_ = new QComboBox(this);
    for (const auto backend : {batch::Backend::Auto, batch::Backend::Host, batch::Backend::Cuda}) {
        backend_combo_->addItem(fromView(batch::backend_name(backend)), static_cast<int>(backend));
    }
    backend_combo_->setToolTip(tr("auto: the GPU when one answers, else the host twin; host: the host twin; "
                                  "cuda: the GPU or an error"));
    draws_spin_ = new QSpinBox(this);
    draws_spin_->setRange(0, 100000);
    draws_spin_->setValue(1000);
    draws_spin_->setToolTip(tr("Fast mode: draws per row for the goodness-of-fit test of the engine's draws "
                               "against the reference's q (0: no test)"));
    run_button_ = new QPushButton(tr("Run comparison"), this);
    run_button_->setDefault(true);
    busy_ = new QProgressBar(this);
    busy_->setRange(0, 0);  // an indeterminate bar: the engine reports no progress
    busy_->setMaximumWidth(160);
    busy_->setVisible(false);
    busy_label_ = new QLabel(tr("Running the reference and the batch engine…"), this);
    busy_label_->setVisible(false);
    run_row->addWidget(new QLabel(tr("Mode"), this));
    run_row->addWidget(mode_combo_);
    run_row->addWidget(new QLabel(tr("Backend"), this));
    run_row->addWidget(backend_combo_);
    run_row->addWidget(new QLabel(tr("Fit draws"), this));
    run_row->addWidget(draws_spin_);
    run_row->addWidget(run_button_);
    run_row->addWidget(busy_);
    run_row->addWidget(busy_label_);
    run_row->addStretch(1);
    layout->addLayout(run_row);

    error_label_ = new QLabel(this);
    error_label_->setWordWrap(true);
    error_label_->setStyleSheet(kErrorStyle);
    error_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    error_label_->setVisible(false);
    layout->addWidget(error_label_);

    auto* split = new QSplitter(Qt::Vertical, this);
    auto* params_box = new QGroupBox(tr("Per-row parameters (double-click a cell to edit; grey: off)"), split);
    auto* params_layout = new QVBoxLayout(params_box);
    params_table_ = new QTableView(params_box);
    params_table_->setModel(params_model_);
    params_table_->setAlternatingRowColors(true);
    params_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    params_table_->horizontalHeader()->setStretchLastSection(true);
    // Column widths from the first rows only, so a batch of thousands sizes at once.
    params_table_->horizontalHeader()->setResizeContentsPrecision(64);
    params_table_->verticalHeader()->setDefaultSectionSize(params_table_->fontMetrics().height() + 6);
    params_layout->addWidget(params_table_);
    params_table_->resizeColumnsToContents();  // the headers whole before any batch

    auto* results_box = new QGroupBox(tr("Reference (CPU, f64) against the batch engine, one line per row"), split);
    auto* results_layout = new QVBoxLayout(results_box);
    counts_label_ = new QLabel(results_box);
    counts_label_->setTextFormat(Qt::RichText);
    details_label_ = new QLabel(results_box);
    details_label_->setTextFormat(Qt::RichText);
    details_label_->setWordWrap(true);
    backend_label_ = new QLabel(results_box);
    backend_label_->setWordWrap(true);
    backend_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* counts_row = new QHBoxLayout;
    counts_row->addWidget(counts_label_, 1);
    only_differences_ = new QCheckBox(tr("Only rows that are not equal"), results_box);
    counts_row->addWidget(only_differences_);
    results_layout->addLayout(counts_row);
    results_layout->addWidget(details_label_);
    results_layout->addWidget(backend_label_);
    rows_table_ = new QTableView(results_box);
    rows_table_->setModel(rows_proxy_);
    rows_table_->setSortingEnabled(true);
    rows_table_->sortByColumn(CompareRowsModel::RowColumn, Qt::AscendingOrder);
    rows_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    rows_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    rows_table_->verticalHeader()->setVisible(false);
    rows_table_->verticalHeader()->setDefaultSectionSize(rows_table_->fontMetrics().height() + 6);
    rows_table_->horizontalHeader()->setResizeContentsPrecision(64);
    rows_table_->horizontalHeader()->setStretchLastSection(true);
    rows_table_->setToolTip(tr("Double-click a row to open it in the stage view"));
    rows_table_->resizeColumnsToContents();  // the headers whole before any run
    results_layout->addWidget(rows_table_, 1);
    split->addWidget(params_box);
    split->addWidget(results_box);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    layout->addWidget(split, 1);
}

std::vector<RowRequest> CompareView::requests() const { return params_model_->requests(); }

void CompareView::setBatch(CompareBatch batch) {
    seedEveryRow(batch.requests);
    batch_ = std::move(batch);
    params_model_->setRequests(batch_.requests, batch_.vocab);
    params_table_->resizeColumnsToContents();
    comparison_.reset();
    compared_batch_.reset();
    results_stale_ = false;
    rows_model_->clear();
    clearError();
    updateSource();
    showSummary();
}

bool CompareView::loadFiles(const QString& logits_path, const QString& params_path) {
    if (isRunning()) return false;
    try {
        QApplication::setOverrideCursor(Qt::WaitCursor);
        CompareBatch loaded = loadCompareBatch(logits_path.toStdString(), params_path.toStdString());
        QApplication::restoreOverrideCursor();
        setBatch(std::move(loaded));
        return true;
    } catch (const InputError& error) {
        QApplication::restoreOverrideCursor();
        showError(tr("Not loaded (the batch on show stays): %1").arg(QString::fromStdString(error.what())));
    } catch (const std::bad_alloc&) {
        QApplication::restoreOverrideCursor();
        showError(tr("Not loaded (the batch on show stays): %1 is too large for memory").arg(logits_path));
    }
    return false;
}

bool CompareView::loadParamsFile(const QString& params_path) {
    if (isRunning()) return false;
    if (batch_.empty()) {
        showError(tr("Open or generate logits first: a params file gives one object per row of a batch."));
        return false;
    }
    try {
        CompareBatch next = batch_;
        next.requests = load_row_requests_file(params_path.toStdString(), batch_.rows);
        checkHistories(next.requests, next.vocab, params_path.toStdString());
        next.source = batch_.source + " + " + params_path.toStdString();
        next.source_name = batch_.source_name + " + " + QFileInfo(params_path).fileName().toStdString();
        setBatch(std::move(next));
        return true;
    } catch (const InputError& error) {
        showError(tr("Not loaded (the parameters on show stay): %1").arg(QString::fromStdString(error.what())));
    }
    return false;
}

bool CompareView::generate() {
    if (isRunning()) return false;
    const auto workload = static_cast<batch::Workload>(workload_combo_->currentData().toInt());
    try {
        setBatch(generateCompareBatch(static_cast<std::size_t>(rows_spin_->value()),
                                        static_cast<std::size_t>(vocab_spin_->value()), workload,
                                        static_cast<std::uint64_t>(seed_spin_->value())));
        return true;
    } catch (const InputError& error) {
        showError(tr("Not generated (the batch on show stays): %1").arg(QString::fromStdString(error.what())));
    }
    return false;
}

void CompareView::openLogitsDialog() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a [B, V] logits file"), QString(),
                                                      tr("Logits (*.npy *.json *.csv *.tsv *.txt);;All files (*)"));
    if (!path.isEmpty()) loadFiles(path);
}

void CompareView::openParamsDialog() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open per-row parameters"), QString(),
                                                      tr("Params JSON (*.json);;All files (*)"));
    if (!path.isEmpty()) loadParamsFile(path);
}

batch::CompareOptions CompareView::options() const {
    batch::CompareOptions options;
    options.mode = static_cast<batch::Mode>(mode_combo_->currentData().toInt());
    options.backend = static_cast<batch::Backend>(backend_combo_->currentData().toInt());
    options.draws = options.mode == batch::Mode::Fast ? draws_spin_->value() : 0;
    return options;
}

void CompareView::setOptions(const batch::CompareOptions& options) {
    mode_combo_->setCurrentIndex(mode_combo_->findData(static_cast<int>(options.mode)));
    backend_combo_->setCurrentIndex(backend_combo_->findData(static_cast<int>(options.backend)));
    draws_spin_->setValue(options.draws);
}

bool CompareView::isRunning() const { return watcher_->isRunning(); }

bool CompareView::runComparison() {
    if (isRunning()) return false;
    if (batch_.empty()) {
        showError(tr("Nothing to compare yet: generate a batch or open a logits file."));
        return false;
    }
    auto snapshot = std::make_shared<CompareBatch>(batch_);
    snapshot->requests = params_model_->requests();
    const batch::CompareOptions run_options = options();
    clearError();
    setBusy(true);
    // The task owns everything it reads, so the GUI may change the batch meanwhile.
    watcher_->setFuture(QtConcurrent::run([snapshot = std::shared_ptr<const CompareBatch>(std::move(snapshot)),
                                           run_options]() -> RunOutcome {
        RunOutcome outcome;
        outcome.batch = snapshot;
        try {
            outcome.comparison =
                std::make_shared<const batch::BatchComparison>(batch::compare_batch(snapshot->input(), run_options));
        } catch (const std::exception& error) {
            // InputError for refused input; std::runtime_error for a failing CUDA call.
            outcome.error = QString::fromStdString(error.what());
        }
        return outcome;
    }));
    return true;
}

void CompareView::runFinished() {
    setBusy(false);
    const RunOutcome outcome = watcher_->result();
    if (!outcome.comparison) {
        showError(tr("The comparison did not run: %1").arg(outcome.error));
        emit comparisonFailed(outcome.error);
        return;
    }
    comparison_ = outcome.comparison;
    compared_batch_ = outcome.batch;
    results_stale_ = params_model_->requests().size() != compared_batch_->requests.size();
    if (!results_stale_) {
        const auto& now = params_model_->requests();
        for (std::size_t r = 0; r < now.size() && !results_stale_; ++r) {
            const auto& ran = compared_batch_->requests[r];
            results_stale_ = !(now[r].params == ran.params && now[r].prompt_ids == ran.prompt_ids &&
                               now[r].output_ids == ran.output_ids && now[r].skip_draws == ran.skip_draws);
        }
    }
    rows_model_->setComparison(comparison_);
    rows_table_->resizeColumnsToContents();
    showSummary();
    emit comparisonFinished();
}

void CompareView::setBusy(bool busy) {
    busy_->setVisible(busy);
    busy_label_->setVisible(busy);
    for (QWidget* w : std::initializer_list<QWidget*>{run_button_, generate_button_, open_logits_button_,
                                                      open_params_button_, rows_spin_, vocab_spin_, seed_spin_,
                                                      workload_combo_, mode_combo_, backend_combo_}) {
        w->setEnabled(!busy);
    }
    draws_spin_->setEnabled(!busy && options().mode == batch::Mode::Fast);
    params_model_->setEditable(!busy);
}

void CompareView::showError(const QString& message) {
    error_label_->setText(QStringLiteral("⚠ ") + message);
    error_label_->setVisible(true);
}

void CompareView::clearError() {
    error_label_->clear();
    error_label_->setVisible(false);
}

QString CompareView::errorText() const {
    QString text = error_label_->text();
    if (text.startsWith(QStringLiteral("⚠ "))) text.remove(0, 2);
    return text;
}

QString CompareView::backendStatement() const { return backend_label_->text(); }

void CompareView::updateSource() {
    if (batch_.empty()) {
        source_label_->setText(tr("No batch yet: generate one or open a [B, V] logits file."));
        source_label_->setToolTip(QString());
        return;
    }
    source_label_->setToolTip(QString::fromStdString(batch_.source));
    source_label_->setText(tr("On show: %1, B = %2, V = %3")
                               .arg(QString::fromStdString(batch_.source_name),
                                    ui::countText(batch_.rows, tr("row"), tr("rows")),
                                    ui::countText(batch_.vocab, tr("id"), tr("ids"))));
}

void CompareView::openRow(int row) {
    if (!comparison_ || !compared_batch_ || row < 0 || static_cast<std::size_t>(row) >= compared_batch_->rows) return;
    const auto r = static_cast<std::size_t>(row);
    const RowRequest& request = compared_batch_->requests[r];
    emit openRowRequested(compared_batch_->rowLogits(r), request.params, request.prompt_ids, request.output_ids,
                          request.skip_draws);
}

void CompareView::showSummary() {
    if (!comparison_) {
        counts_label_->setText(tr("No comparison yet: choose a mode and a backend, then Run comparison."));
        details_label_->clear();
        backend_label_->setText(tr("Backend auto runs the batch engine on a GPU when one answers, else on its host "
                                   "twin; this line will say which ran."));
        return;
    }
    const batch::BatchComparison& c = *comparison_;
    counts_label_->setText(tr("Rows <b>%1</b> &nbsp; %2 &nbsp; %3 &nbsp; %4")
                               .arg(ui::groupedNumber(c.counts.rows),
                                    chip(tr("Equal %1").arg(ui::groupedNumber(c.counts.equal)), Verdict::Equal, c.counts.equal),
                                    chip(tr("Near-tie %1").arg(ui::groupedNumber(c.counts.near_tie)), Verdict::NearTie,
                                         c.counts.near_tie),
                                    chip(tr("Mismatch %1").arg(ui::groupedNumber(c.counts.mismatch)), Verdict::Mismatch,
                                         c.counts.mismatch)));

    QStringList details;
    details << tr("%1 mode (δ = %2, logprob within %3)")
                   .arg(fromView(batch::mode_name(c.mode)))
                   .arg(c.tolerance.delta, 0, 'g', 3)
                   .arg(c.tolerance.logprob, 0, 'g', 3);
    details << tr("worst |Δ logprob| %1")
                   .arg(c.worst_logprob_difference == 0.0 ? QStringLiteral("0")
                                                          : QString::number(c.worst_logprob_difference, 'e', 2));
    details << tr("kept sets: %1 mismatch, %2 near-tie")
                   .arg(ui::groupedNumber(c.kept_mismatches), ui::groupedNumber(c.kept_near_ties));
    if (c.fit) {
        details << tr("goodness of fit p = %1 (χ² %2 on %3 dof, %4 × %5 draws)")
                       .arg(c.fit->p_value, 0, 'g', 3)
                       .arg(c.fit->statistic, 0, 'f', 1)
                       .arg(QLocale(QLocale::English).toString(c.fit->dof, 'f', 0),
                            ui::countText(c.fit->rows, tr("row"), tr("rows")), ui::groupedNumber(c.fit->draws_per_row));
    } else if (c.mode == batch::Mode::Fast) {
        details << tr("no goodness-of-fit test (fit draws 0)");
    }
    if (c.mode == batch::Mode::Fast) {
        details << tr("fast mode draws with its own random numbers: its token counts as equal when the reference "
                      "keeps it");
    }
    details << tr("time: reference %1, batch engine %2").arg(duration(c.reference_seconds), duration(c.engine_seconds));
    QString text = details.join(QStringLiteral(" · "));
    if (results_stale_) {
        text += QStringLiteral("<br><span style='%1'>%2</span>")
                    .arg(kErrorStyle, tr("The parameters changed since this run: these lines are for the parameters "
                                         "it ran with. Run again to compare the edited batch."));
    }
    details_label_->setText(text);

    const QString device = QString::fromStdString(c.device);
    if (c.backend == batch::Backend::Cuda) {
        backend_label_->setText(tr("The batch engine ran on a GPU: %1.").arg(device));
    } else {
        QString why = c.note.empty() ? tr("the host backend was chosen") : QString::fromStdString(c.note);
        // The engine's note reads "no GPU: <reason>"; the sentence already says it.
        if (why.startsWith(QStringLiteral("no GPU: "))) why = tr("backend auto found none (%1)").arg(why.mid(8));
        // device reads "host twin (N threads)".
        backend_label_->setText(tr("The batch engine ran on the %1, not on a GPU: %2.").arg(device, why));
    }
}

}  // namespace samplescope
