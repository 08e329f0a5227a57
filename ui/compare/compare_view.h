// The Compare view: a [B, V] batch (loaded or generated) with its per-row
// parameters, run through the CPU reference and the batch engine off the GUI
// thread, and compared row by row under the contract's near-tie rule
// (kernels/tools/batch_compare.h). It says which backend really ran, GPU or host
// twin, and why; double-clicking a row asks for it to be opened in a stage view.
#pragma once

#include <QFutureWatcher>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/sampling_params.h"
#include "kernels/tools/batch_compare.h"
#include "ui/compare/compare_batch.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace samplescope {

class BatchParamsModel;
class CompareRowsModel;

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);
    ~CompareView() override;

    // Replaces the batch (its rows without a seed get one) and clears the results.
    void setBatch(CompareBatch batch);
    const CompareBatch& batch() const { return batch_; }
    // The batch as it will run: the loaded logits with the table's parameters.
    std::vector<RowRequest> requests() const;

    // Load from files / generate; on bad input show the one-line error, keep
    // the batch on show and return false.
    bool loadFiles(const QString& logits_path, const QString& params_path = {});
    bool loadParamsFile(const QString& params_path);
    bool generate();

    // Starts the comparison off the GUI thread with the mode, backend and
    // draws chosen; false (nothing started) while one runs or without a batch.
    bool runComparison();
    bool isRunning() const;
    void setOptions(const batch::CompareOptions& options);
    batch::CompareOptions options() const;

    // The last finished comparison and the batch it ran on (null before any).
    std::shared_ptr<const batch::BatchComparison> comparison() const { return comparison_; }
    std::shared_ptr<const CompareBatch> comparedBatch() const { return compared_batch_; }
    // Emits openRowRequested for a row of the last comparison.
    void openRow(int row);

    // The one-line message on show (a refused file, edit or run); empty when none.
    QString errorText() const;
    QString backendStatement() const;

    BatchParamsModel* paramsModel() const { return params_model_; }
    CompareRowsModel* rowsModel() const { return rows_model_; }
    QTableView* paramsTable() const { return params_table_; }
    QTableView* rowsTable() const { return rows_table_; }
    QSpinBox* rowsSpin() const { return rows_spin_; }
    QSpinBox* vocabSpin() const { return vocab_spin_; }
    QSpinBox* generateSeedSpin() const { return seed_spin_; }
    QComboBox* workloadCombo() const { return workload_combo_; }
    QPushButton* generateButton() const { return generate_button_; }
    QComboBox* modeCombo() const { return mode_combo_; }
    QComboBox* backendCombo() const { return backend_combo_; }
    QSpinBox* drawsSpin() const { return draws_spin_; }
    QPushButton* runButton() const { return run_button_; }
    QCheckBox* onlyDifferencesCheck() const { return only_differences_; }
    QLabel* countsLabel() const { return counts_label_; }
    QLabel* detailsLabel() const { return details_label_; }
    QLabel* backendLabel() const { return backend_label_; }
    QLabel* sourceLabel() const { return source_label_; }

signals:
    void comparisonFinished();
    void comparisonFailed(const QString& message);
    void openRowRequested(std::vector<double> logits, samplescope::SamplingParams params,
                          std::vector<std::int64_t> prompt, std::vector<std::int64_t> output,
                          std::uint64_t skip_draws);

private:
    struct RunOutcome {
        std::shared_ptr<const batch::BatchComparison> comparison;
        std::shared_ptr<const CompareBatch> batch;
        QString error;
    };

    void buildLayout();
    void openLogitsDialog();
    void openParamsDialog();
    void runFinished();
    void setBusy(bool busy);
    void showError(const QString& message);
    void clearError();
    void showSummary();
    void updateSource();

    CompareBatch batch_;
    std::shared_ptr<const batch::BatchComparison> comparison_;
    std::shared_ptr<const CompareBatch> compared_batch_;
    bool results_stale_ = false;
    QFutureWatcher<RunOutcome>* watcher_ = nullptr;

    BatchParamsModel* params_model_ = nullptr;
    CompareRowsModel* rows_model_ = nullptr;
    QSortFilterProxyModel* rows_proxy_ = nullptr;
    QTableView* params_table_ = nullptr;
    QTableView* rows_table_ = nullptr;
    QSpinBox* rows_spin_ = nullptr;
    QSpinBox* vocab_spin_ = nullptr;
    QSpinBox* seed_spin_ = nullptr;
    QComboBox* workload_combo_ = nullptr;
    QPushButton* generate_button_ = nullptr;
    QPushButton* open_logits_button_ = nullptr;
    QPushButton* open_params_button_ = nullptr;
    QComboBox* mode_combo_ = nullptr;
    QComboBox* backend_combo_ = nullptr;
    QSpinBox* draws_spin_ = nullptr;
    QPushButton* run_button_ = nullptr;
    QProgressBar* busy_ = nullptr;
    QLabel* busy_label_ = nullptr;
    QLabel* source_label_ = nullptr;
    QLabel* error_label_ = nullptr;
    QLabel* counts_label_ = nullptr;
    QLabel* details_label_ = nullptr;
    QLabel* backend_label_ = nullptr;
    QCheckBox* only_differences_ = nullptr;
};

}  // namespace samplescope
