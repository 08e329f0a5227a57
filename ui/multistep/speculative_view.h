// The Speculative tab: speculative decoding on the language model, round by
// round, as one would explain it to a class. A cheaper draft (the same n-gram
// model on fewer words, or another file of the same vocabulary) proposes k
// tokens from its q; the target (the model on all its words) checks each
// against its p. The tab shows each round's positions side by side (q and p,
// min(1, p/q) with u marked against it, the verdict), the residual
// normalize(max(0, p - q)) or the bonus row where the last token is drawn,
// the text with each token's origin, and the running acceptance rate against
// its expected value.
//
// The window's parameters and pipeline act on both models' rows, as on the
// Generate tab; a run takes them, the draft, k and the rules at Start and
// keeps them (the rounds of one run are one experiment), and says when the
// window's have changed since. Rounds run off the GUI thread.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <QFutureWatcher>
#include <QWidget>

#include "engine/generation/speculative.h"
#include "ui/generate/generated_text_view.h"
#include "ui/multistep/acceptance_plot.h"
#include "ui/multistep/model_slot.h"
#include "ui/multistep/speculative_jobs.h"
#include "ui/multistep/speculative_round_view.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QScrollArea;
class QSpinBox;
class QStackedWidget;

namespace samplescope::ui {

class Session;

class SpeculativeView : public QWidget {
    Q_OBJECT
public:
    SpeculativeView(Session* session, ModelSlot* model, QWidget* parent = nullptr);
    ~SpeculativeView() override;

    static QString defaultPrompt();

    // A new run from `prompt` with the tab's draft, k and rules and the
    // window's parameters, then `rounds` rounds. Before the model is ready it
    // waits for it. Refused (a bad prompt, mirostat on, a draft of another
    // vocabulary): everything stays as it was and the message is raised.
    void start(const QString& prompt, int rounds = 0);
    void runRounds(int rounds);  // off the GUI thread; stops at the end of the text
    void showRound(int index);
    // Reads another n-gram file as the draft; refused when its vocabulary differs from the model's.
    void openDraftFile(const QString& path);

    bool idle() const;
    bool hasRun() const { return run_ != nullptr; }
    const Speculation& speculation() const { return *run_; }
    const std::vector<SpecRoundRecord>& rounds() const { return rounds_; }
    int shownRound() const { return shown_; }
    // What differs between the run and the tab's controls or the window's parameters ("" when nothing).
    QString pendingChanges() const;

    QLineEdit* promptEntry() const { return prompt_; }
    QPushButton* startButton() const { return start_; }
    QComboBox* draftBox() const { return draft_; }
    QSpinBox* kBox() const { return k_; }
    QComboBox* rulesBox() const { return rules_; }
    QCheckBox* pastEndBox() const { return past_end_; }
    QPushButton* roundButton() const { return round_; }
    QPushButton* runButton() const { return run_n_; }
    QSpinBox* runCountBox() const { return run_count_; }
    QSpinBox* roundBox() const { return round_box_; }
    GeneratedTextView* textView() const { return text_; }
    AcceptancePlot* acceptancePlot() const { return acceptance_; }
    QLabel* acceptanceLabel() const { return acceptance_label_; }
    QLabel* roundLabel() const { return round_label_; }
    QLabel* runLabel() const { return run_label_; }
    SpeculativeRoundView* roundView() const { return round_view_; }
    QLabel* placeholder() const { return placeholder_; }

signals:
    void errorRaised(const QString& message);
    void statusMessage(const QString& message);
    void idleChanged();

protected:
    void showEvent(QShowEvent* event) override;

private:
    struct RunConfig {
        QString prompt;
        QString draft;  // the draft box's data
        int k = 0;
        QString rules;
        bool past_end = false;
        SamplingParams params;
        std::string pipeline;
    };
    RunConfig controls() const;
    std::shared_ptr<const LanguageModel> draftModel(const QString& choice) const;
    bool startNow(const QString& prompt, int rounds);
    void onJobFinished();
    void onDraftLoaded();
    void refresh();
    void refreshText();
    void refreshControls();
    void refreshRound();
    void refreshAcceptance();

    Session* session_;
    ModelSlot* model_;
    std::shared_ptr<Speculation> run_;
    RunConfig run_config_;
    std::vector<SpecRoundRecord> rounds_;
    int shown_ = -1;
    std::optional<std::pair<QString, int>> pending_;  // a start waiting for the model
    std::shared_ptr<const LanguageModel> draft_file_;
    QString draft_file_name_;
    QFutureWatcher<SpeculationOutcome> job_watcher_;
    QFutureWatcher<ModelLoad> draft_watcher_;
    bool job_running_ = false;

    QLineEdit* prompt_;
    QPushButton* start_;
    QComboBox* draft_;
    QPushButton* open_draft_;
    QSpinBox* k_;
    QComboBox* rules_;
    QCheckBox* past_end_;
    QPushButton* round_;
    QPushButton* run_n_;
    QSpinBox* run_count_;
    QLabel* model_label_;
    QPushButton* open_model_;
    QLabel* run_label_;
    QLabel* note_;
    GeneratedTextView* text_;
    QScrollArea* text_scroll_;
    QLabel* legend_;
    QLabel* acceptance_label_;
    AcceptancePlot* acceptance_;
    QSpinBox* round_box_;
    QLabel* round_label_;
    QLabel* column_legend_;
    SpeculativeRoundView* round_view_;
    QScrollArea* round_scroll_;
    QStackedWidget* stack_;
    QLabel* placeholder_;
};

}  // namespace samplescope::ui
