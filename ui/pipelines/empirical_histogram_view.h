// Draws N tokens from a pipeline's final distribution with consecutive draws
// of the request's stream, off the GUI thread (progress bar, cancel), and
// shows the counts against the exact q with the chi-square test's verdict at
// alpha, the pooling it used, and each tested token's deviation after Holm's
// correction, all from engine/stats/empirical_sampling.h. Before the first
// draw it says what Draw will do instead of showing empty axes.
#pragma once

#include <QFutureWatcher>
#include <QWidget>

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/stats/empirical_sampling.h"

class QComboBox;
class QCPItemText;
class QCPTextElement;
class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTimer;

namespace samplescope {

class EmpiricalHistogramView : public QWidget {
    Q_OBJECT
public:
    explicit EmpiricalHistogramView(QWidget* parent = nullptr);
    // Past this many ids that can be drawn, the plot shows the likeliest this many and one bar for the rest.
    static constexpr std::size_t kMaxBars = 40;
    ~EmpiricalHistogramView() override;

    void setInput(std::vector<double> logits, std::vector<std::string> labels, SamplingParams params,
                  std::vector<std::int64_t> prompt_ids, std::vector<std::int64_t> output_ids);
    // A preset is picked from the combo box; any other pipeline (a custom one) is set here.
    void setPipeline(const Pipeline& pipeline);
    void setDraws(int draws);

    // Starts drawing (ignored while a run is going); finished() follows.
    void start();
    void cancel();
    bool running() const;

    // The last finished run, or none.
    const std::optional<EmpiricalResult>& result() const { return result_; }
    const Pipeline& pipeline() const { return pipeline_; }

    QComboBox* pipelineCombo() const { return pipeline_combo_; }
    QSpinBox* drawsBox() const { return draws_; }
    QPushButton* drawButton() const { return draw_button_; }
    QPushButton* cancelButton() const { return cancel_button_; }
    QProgressBar* progressBar() const { return progress_; }
    QLabel* summary() const { return summary_; }
    QCustomPlot* plot() const { return plot_; }
    // The line above the plot that says how the ids were binned for the test
    // (empty before a result), and the hint shown in the plot before one.
    QString poolingNote() const;
    QString hint() const;

signals:
    void finished();

private:
    void showResult();
    void showError(const QString& message);
    // No result on show: empty axes are hidden behind a line saying what
    // Draw does; `why` (may be empty) says why the last sample went.
    void showIdle(const QString& why = {});
    void updateHint();
    void pollProgress();
    QString labelOf(std::int32_t id) const;

    std::vector<double> logits_;
    std::vector<std::string> labels_;
    SamplingParams params_;
    std::vector<std::int64_t> prompt_ids_;
    std::vector<std::int64_t> output_ids_;
    Pipeline pipeline_;

    struct DrawOutcome {
        std::optional<EmpiricalResult> result;
        std::string error;  // an InputError's one line
    };

    std::optional<EmpiricalResult> result_;
    QFutureWatcher<DrawOutcome> watcher_;
    // Shared with the worker, which may outlive a cancelled run's widget state.
    std::shared_ptr<std::atomic<bool>> cancel_;
    std::shared_ptr<std::atomic<std::uint64_t>> done_;
    std::uint64_t asked_ = 0;
    std::uint64_t input_serial_ = 0;  // bumped by setInput
    std::uint64_t run_serial_ = 0;    // the input a run was started on
    QString error_;

    QComboBox* pipeline_combo_ = nullptr;
    QSpinBox* draws_ = nullptr;
    QPushButton* draw_button_ = nullptr;
    QPushButton* cancel_button_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* summary_ = nullptr;
    QCustomPlot* plot_ = nullptr;
    QCPTextElement* pooling_ = nullptr;
    QCPItemText* hint_ = nullptr;
    QString idle_why_;
    bool idle_ = true;
    QTimer* poll_ = nullptr;
};

}  // namespace samplescope
