// The Generate tab: a prompt, a language model (Debian's English trigram
// model by default) and the text it writes token by token, each token
// sampled through the window's pipeline with the window's parameters.
//
// The tab shares the window's session rather than keeping its own: a teacher
// expects one set of knobs, so the parameter dock, the answer line, the
// statistics, the history, the token table and the Pipeline tab all show the
// step the tab is on, and moving a parameter redraws that step through the
// window's own worker with the model's row already in the session (no model
// call). The tab feeds the session each step it shows
// (Session::showGenerationStep) and draws the same plots as the Pipeline tab
// in a PipelineView of its own. When something else replaces the session's
// row (an example, a file, an undo past the generation) the tab says so
// instead of showing another row under its text.
//
// Its parts are meant to be shared by the views that will sit beside it
// (speculative decoding, beam search): the jobs (generation_jobs.h), the
// branch tree (generation_tree.h, branch_tree_view.h) and the coloured text
// (generated_text_view.h, token_colours.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QFutureWatcher>
#include <QWidget>

#include "engine/generation/generation.h"
#include "engine/models/language_model.h"
#include "ui/common/trace_view.h"
#include "ui/generate/branch_tree_view.h"
#include "ui/generate/generated_text_view.h"
#include "ui/generate/generation_jobs.h"
#include "ui/generate/generation_tree.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QScrollArea;
class QSpinBox;
class QStackedWidget;

namespace samplescope::ui {

class PipelineView;
class Session;

class GenerateView : public QWidget {
    Q_OBJECT
public:
    enum class ModelState { NotLoaded, Loading, Ready, Missing, Failed };

    explicit GenerateView(Session* session, QWidget* parent = nullptr);
    ~GenerateView() override;

    // The prompt the app opens on when the model is installed.
    static QString defaultPrompt();

    // Starts loading the default model unless one is loaded or loading (the
    // tab does this when first shown); says what to install when it is missing.
    void ensureModel();
    // Loads another model file; a refused file leaves the model and the text as they were.
    void openModelFile(const QString& path);
    // A model loaded elsewhere (the app's flags load it before the window opens); a refused load is raised.
    void setModel(ModelLoad loaded);
    // Where ensureModel() first looks for the default model (a tab beside it that has loaded it); none: it loads it.
    void setModelSource(std::function<ModelLoad()> source) { model_source_ = std::move(source); }
    // A fresh text from `prompt`, then `steps` tokens written. Before the
    // model is ready it waits for it. A refused prompt leaves everything as
    // it was and raises the message.
    void start(const QString& prompt, int steps = 0);

    // Each acts on the step on show (the cursor), off the GUI thread:
    void step();                    // writes the token the draw picks
    void generate(int steps);       // writes up to `steps` tokens, stopping at the end of the text
    void writeToken(std::int64_t id);  // writes this word instead of the drawn one (a new branch)
    void regenerateFromHere();      // writes the rest of the line again with the parameters now
    void undoToken();               // removes the line's last token: the state is the one before it
    void goToStart();               // shows the step after the prompt
    // Shows the step that wrote `node` (the root: the step after the prompt).
    void showStepOf(int node);
    // Shows the step after the line's last token.
    void showNextStep();

    // The window's newest trace: drawn in the tab's plots when it is the step on show.
    void showTrace(const std::shared_ptr<const TraceView>& view, std::int32_t selected);

    bool idle() const;
    ModelState modelState() const { return model_state_; }
    const std::shared_ptr<const LanguageModel>& model() const { return model_; }
    // Whether the session shows the tab's step now.
    bool attached() const { return attached_; }
    bool hasText() const { return tree_ != nullptr; }
    const GenerationTree& tree() const { return *tree_; }
    int cursor() const { return cursor_; }
    // The node whose step is on show when it is a written token's (-1: the next step is on show).
    int markedNode() const;
    const std::vector<PromptWord>& promptWords() const { return prompt_words_; }
    // The text of the line as it reads (prompt included).
    QString lineText() const;

    PipelineView* pipelineView() const { return pipeline_; }
    GeneratedTextView* textView() const { return text_; }
    BranchTreeView* treeView() const { return branches_; }
    QLineEdit* promptEntry() const { return prompt_; }
    QPushButton* startButton() const { return start_; }
    QPushButton* stepButton() const { return step_; }
    QPushButton* generateButton() const { return generate_; }
    QSpinBox* countBox() const { return count_; }
    QPushButton* undoButton() const { return undo_; }
    QPushButton* regenerateButton() const { return regenerate_; }
    // Writes the token selected in the window (a plot of another tab, the token table) at the step on show.
    QPushButton* writeSelectedButton() const { return write_selected_; }
    QPushButton* openModelButton() const { return open_model_; }
    QLabel* placeholder() const { return placeholder_; }
    QLabel* stepLabel() const { return info_; }
    QLabel* modelLabel() const { return model_label_; }

signals:
    void errorRaised(const QString& message);   // one line, for the window's banner
    void statusMessage(const QString& message);
    void idleChanged();

protected:
    void showEvent(QShowEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    enum class After { Advance, Regenerate };
    struct PendingStart {
        QString prompt;
        int steps = 0;
    };

    void startLoading(const QString& path);
    void onModelLoaded();
    void acceptModel(ModelLoad loaded);
    bool startNow(const QString& prompt, int steps);
    void runJob(int steps, std::optional<std::int64_t> forced, After after);
    void onJobFinished();
    // Puts node's step into the session; false (and the message raised) when refused.
    bool feed(int node);
    void onSessionChanged();
    void setAttached(bool attached);
    bool showsCursorStep() const;
    void refresh();
    void refreshText();
    void refreshControls();
    void refreshPlaceholder();
    QString tokenTooltip(int node) const;
    QString contextTail(int node) const;
    void refreshNextSlot();
    void elideModelLabel();

    Session* session_;
    ModelState model_state_ = ModelState::NotLoaded;
    QString model_error_;
    std::shared_ptr<const LanguageModel> model_;
    std::shared_ptr<const TokenLabels> labels_;
    std::function<ModelLoad()> model_source_;
    QString model_path_;    // the model's file, "" for the default
    QString loading_path_;  // the file being loaded (or last tried)
    QString model_text_;  // the model line before eliding
    std::vector<PromptWord> prompt_words_;
    QString prompt_text_;
    std::unique_ptr<GenerationTree> tree_;
    int cursor_ = GenerationTree::kRoot;
    bool attached_ = false;
    bool feeding_ = false;
    // The rows put into the session, by node: an undo that brings one back finds its node again.
    std::map<int, std::weak_ptr<const std::vector<double>>> fed_rows_;
    std::optional<PendingStart> pending_;
    After after_ = After::Advance;
    int job_start_ = GenerationTree::kRoot;
    bool job_attached_ = false;  // whether the session showed the tab's step when the job started
    bool job_running_ = false;
    QFutureWatcher<ModelLoad> load_watcher_;
    QFutureWatcher<GenerationOutcome> job_watcher_;
    std::shared_ptr<const TraceView> shown_view_;  // the newest trace of the step on show
    std::int32_t shown_selected_ = -1;
    bool plots_stale_ = false;

    QLineEdit* prompt_;
    QPushButton* start_;
    QLabel* model_label_;
    QPushButton* open_model_;
    QPushButton* step_;
    QPushButton* generate_;
    QSpinBox* count_;
    QPushButton* undo_;
    QPushButton* regenerate_;
    QPushButton* write_selected_;
    GeneratedTextView* text_;
    QScrollArea* text_scroll_;
    QLabel* legend_;
    BranchTreeView* branches_;
    QLabel* info_;
    QStackedWidget* stack_;
    QLabel* placeholder_;
    PipelineView* pipeline_;
};

}  // namespace samplescope::ui
