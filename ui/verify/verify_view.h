// The "Verify a sampler" tab: logits ([V] or [B, V]), optional per-row
// parameters (the batch params JSON) and a sampler's draws, opened or dropped;
// the verification (engine/stats/verification.h) runs off the GUI thread with
// progress and cancel; per row the observed frequencies against the exact q
// (log scale option, the tail region marked, draws outside the support in red)
// and the verdict with what it can and cannot vouch for.
#pragma once

#include <functional>

#include <QFutureWatcher>
#include <QString>
#include <QWidget>

#include <atomic>
#include <memory>
#include <vector>

#include "engine/core/row_request.h"
#include "engine/io/logits_loader.h"
#include "engine/io/samples_reader.h"
#include "engine/stats/verification.h"
#include "ui/verify/verify_plot_data.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace samplescope {

class VerifyView : public QWidget {
    Q_OBJECT
public:
    explicit VerifyView(QWidget* parent = nullptr);
    ~VerifyView() override;

    // Each returns false and shows the one-line error on bad input, keeping what was loaded.
    bool loadLogitsFile(const QString& path);
    bool loadParamsFile(const QString& path);
    bool loadSamplesFile(const QString& path);
    // The same from memory (tests, callers with their own arrays).
    void setInputs(LogitsMatrix logits, std::vector<RowRequest> requests, SampleRows samples);
    // Parameters for every row when no params file is loaded.
    void setParams(const SamplingParams& params);

    // Starts the verification off the GUI thread; false while one runs or without inputs.
    bool runVerification();
    void cancel();
    bool isRunning() const;

    // The last finished verification (null before any, or after a cancel).
    std::shared_ptr<const SamplerVerification> verification() const { return verification_; }
    const VerifyPlotData& plotData() const { return plot_; }
    QString verdictText() const;
    QString errorText() const;
    QCustomPlot* plot() const { return plot_widget_; }
    QCheckBox* logScaleBox() const { return log_box_; }
    QSpinBox* rowSpin() const { return row_spin_; }
    QComboBox* pipelineCombo() const { return pipeline_combo_; }

signals:
    void verificationFinished(bool pass);
    void progressed(int rows_done);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    bool load(const std::function<void()>& read);
    struct Outcome {
        std::shared_ptr<const SamplerVerification> verification;
        std::vector<std::vector<std::int64_t>> samples;
        QString error;
        bool cancelled = false;
    };
    void finished();
    void showRow(int row);
    void showError(const QString& text);
    void updateStatus();

    LogitsMatrix logits_;
    std::vector<RowRequest> requests_;  // empty: params_ for every row
    SamplingParams params_;
    SampleRows samples_;
    QString logits_name_, params_name_, samples_name_;

    std::shared_ptr<const SamplerVerification> verification_;
    std::vector<std::vector<std::int64_t>> verified_samples_;
    VerifyPlotData plot_;
    std::shared_ptr<std::atomic<bool>> cancel_;
    QFutureWatcher<Outcome>* watcher_ = nullptr;

    QLabel* inputs_label_ = nullptr;
    QComboBox* pipeline_combo_ = nullptr;
    QDoubleSpinBox* alpha_spin_ = nullptr;
    QPushButton* run_button_ = nullptr;
    QPushButton* cancel_button_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QSpinBox* row_spin_ = nullptr;
    QCheckBox* log_box_ = nullptr;
    QLabel* verdict_label_ = nullptr;
    QLabel* error_label_ = nullptr;
    QCustomPlot* plot_widget_ = nullptr;
};

}  // namespace samplescope
