// The Beam tab: beam search on the language model as Hugging Face
// transformers or vLLM runs it (engine/generation/beam.h), drawn as its tree
// (each node a token with its cumulative log-probability, pruned candidates
// greyed, finished hypotheses with their length-penalised scores, the chosen
// hypothesis highlighted), and beside it a continuation of the same prompt
// sampled with the window's pipeline and parameters, as the Generate tab
// samples, with both texts' log-probabilities under the model.
//
// Beam search draws nothing, so the tab always shows the search its controls
// ask for: a control changed searches again, off the GUI thread, and a
// parameter moved in the window samples the continuation again. "Show step"
// replays the search step by step without computing anything.
#pragma once

#include <optional>
#include <vector>

#include <QFutureWatcher>
#include <QWidget>

#include "engine/generation/beam.h"
#include "ui/generate/generated_text_view.h"
#include "ui/multistep/beam_jobs.h"
#include "ui/multistep/beam_tree_view.h"
#include "ui/multistep/model_slot.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QScrollArea;
class QSpinBox;
class QStackedWidget;
class QTableWidget;

namespace samplescope::ui {

class Session;

class BeamView : public QWidget {
    Q_OBJECT
public:
    BeamView(Session* session, ModelSlot* model, QWidget* parent = nullptr);
    ~BeamView() override;

    static QString defaultPrompt();
    // The step limit's range here (the CLI takes up to kMaxBeamSteps; a tree of more columns is no lesson).
    static constexpr int kMaxSteps = 100;

    // A search from `prompt` with the tab's controls, and a sampled
    // continuation; before the model is ready it waits for it. Refused (a bad
    // prompt or control): everything stays as it was and the message is raised.
    void start(const QString& prompt);
    // Draws the search as it stood after `step` steps (1 to the steps taken).
    void showThroughStep(int step);

    bool idle() const;
    bool hasSearch() const { return !steps_.empty(); }
    const std::vector<BeamStep>& steps() const { return steps_; }
    const std::vector<BeamHypothesis>& result() const { return result_; }
    const BeamOptions& options() const { return options_; }
    const std::vector<PromptWord>& promptWords() const { return words_; }
    const std::optional<SampledText>& sample() const { return sample_; }
    int shownStep() const { return shown_; }

    QLineEdit* promptEntry() const { return prompt_; }
    QPushButton* searchButton() const { return search_; }
    QSpinBox* widthBox() const { return width_; }
    QSpinBox* stepsBox() const { return steps_box_; }
    QLineEdit* lengthPenaltyEntry() const { return penalty_; }
    QComboBox* earlyStoppingBox() const { return early_; }
    QComboBox* rulesBox() const { return rules_; }
    QSpinBox* showStepBox() const { return show_step_; }
    QLabel* statusLabel() const { return status_; }
    BeamTreeView* treeView() const { return tree_view_; }
    QScrollArea* treeScroll() const { return tree_scroll_; }
    GeneratedTextView* beamText() const { return beam_text_; }
    GeneratedTextView* sampleText() const { return sample_text_; }
    QLabel* beamTotals() const { return beam_totals_; }
    QLabel* sampleTotals() const { return sample_totals_; }
    QTableWidget* hypothesesTable() const { return hypotheses_; }
    QLabel* placeholder() const { return placeholder_; }

signals:
    void errorRaised(const QString& message);
    void statusMessage(const QString& message);
    void idleChanged();

protected:
    void showEvent(QShowEvent* event) override;

private:
    struct Request {
        QString prompt;
        std::vector<PromptWord> words;
        BeamOptions options;
        std::optional<BeamSearch> search;  // none: keep the search, sample again
        std::optional<GenerationJob> sample;
    };
    BeamOptions controls() const;  // throws InputError
    void searchAgain();
    bool request(const QString& prompt, bool search);
    void launch(Request request);
    void onJobFinished();
    void refresh();
    void refreshControls();
    void refreshTree();
    void refreshComparison();
    GenerationJob sampleJob(const std::vector<PromptWord>& words, std::size_t steps) const;

    Session* session_;
    ModelSlot* model_;
    QString prompt_text_;  // the prompt of the search on show
    std::vector<PromptWord> words_;
    BeamOptions options_;
    QString penalty_text_;  // the length penalty in force, as typed
    std::vector<BeamStep> steps_;
    std::vector<BeamHypothesis> result_;
    std::optional<SampledText> sample_;
    QString sample_settings_;
    int shown_ = 0;
    bool sample_stale_ = false;
    std::optional<QString> pending_prompt_;  // a start waiting for the model
    std::optional<Request> running_;         // the job's request
    std::optional<Request> queued_;          // the newest request made while it ran
    QFutureWatcher<BeamOutcome> watcher_;

    QLineEdit* prompt_;
    QPushButton* search_;
    QSpinBox* width_;
    QSpinBox* steps_box_;
    QLineEdit* penalty_;
    QComboBox* early_;
    QComboBox* rules_;
    QLabel* model_label_;
    QPushButton* open_model_;
    QSpinBox* show_step_;
    QLabel* status_;
    BeamTreeView* tree_view_;
    QScrollArea* tree_scroll_;
    QLabel* tree_legend_;
    QLabel* beam_title_;
    GeneratedTextView* beam_text_;
    QLabel* beam_totals_;
    QLabel* sample_title_;
    GeneratedTextView* sample_text_;
    QLabel* sample_totals_;
    QLabel* measure_note_;
    QTableWidget* hypotheses_;
    QStackedWidget* stack_;
    QLabel* placeholder_;
};

}  // namespace samplescope::ui
