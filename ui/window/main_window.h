// The desktop window: parameters, history and statistics docked on the left;
// the answer line, an error banner and the views (pipeline plots, token table,
// logits input, two pipelines side by side, empirical sampling) in the middle.
// Further views are added with addView(), or addInputView() for a view fed
// with the window's input.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QMainWindow>
#include <QTabWidget>

#include "engine/pipelines/pipeline_examples.h"
#include "engine/io/vocabulary.h"
#include "ui/compare/compare_view.h"
#include "ui/pipelines/empirical_histogram_view.h"
#include "ui/common/error_banner.h"
#include "ui/common/examples.h"
#include "ui/generate/generate_view.h"
#include "ui/multistep/beam_view.h"
#include "ui/multistep/model_slot.h"
#include "ui/multistep/speculative_view.h"
#include "ui/panels/history_panel.h"
#include "ui/panels/logits_editor.h"
#include "ui/panels/parameter_panel.h"
#include "ui/pipelines/pipeline_compare_view.h"
#include "ui/stages/pipeline_stage_plots.h"
#include "ui/stages/pipeline_view.h"
#include "ui/panels/result_bar.h"
#include "ui/session/sampling_worker.h"
#include "ui/session/session.h"
#include "ui/session/session_undo.h"
#include "ui/panels/token_path_bar.h"
#include "ui/panels/statistics_panel.h"
#include "ui/panels/token_table_panel.h"
#include "ui/responses/response_view.h"

class QScrollArea;

namespace samplescope::ui {

struct Example;

struct MainWindowOptions {
    bool persist_settings = true;  // read and write QSettings (off for tests and screenshots)
};

// The window's current input, as a view beyond the trace's needs it: labels in
// their readable form ("" where an id has none).
struct WindowInput {
    std::vector<double> logits;
    std::vector<std::string> labels;
    SamplingParams params;
    std::vector<std::int64_t> prompt_ids;
    std::vector<std::int64_t> output_ids;
    std::optional<double> mirostat_mu;  // the session's (nothing: 2 tau)
};

// Picks one of a .safetensors file's float tensors; "" cancels.
using TensorChooser = std::function<QString(const QString& file, const QStringList& tensors)>;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(MainWindowOptions options = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Adds a view as a tab of the central area and returns its index.
    int addView(QWidget* view, const QString& title);
    // Adds a view that is fed the window's input: `feed` runs when the view is
    // on show and the input changed since it last ran (never while hidden, so
    // a full-size row costs nothing until the user looks).
    int addInputView(QWidget* view, const QString& title, std::function<void(const WindowInput&)> feed);
    WindowInput currentInput() const;
    // Brings the tab holding `view` to the front.
    void showView(QWidget* view);

    Session& session() { return session_; }
    ParameterPanel* parameterPanel() const { return parameters_; }
    HistoryPanel* historyPanel() const { return history_; }
    StatisticsPanel* statisticsPanel() const { return statistics_; }
    PipelineView* pipelineView() const { return pipeline_; }
    TokenTablePanel* tokenTable() const { return tokens_; }
    PipelineCompareView* pipelineCompareView() const { return compare_pipelines_; }
    // The stage plots of Compare pipelines' side A and B (llama.cpp's extra stages among them).
    PipelineStagePlots* pipelineStagePlots(int side) const { return side == 0 ? stage_plots_a_ : stage_plots_b_; }
    EmpiricalHistogramView* histogramView() const { return histogram_; }
    CompareView* batchCompareView() const { return batch_compare_; }
    QWidget* verifyView() const { return verify_; }
    // The Response tab (File > Open response...).
    ResponseView* responseView() const { return responses_; }
    // The Response tab's selected token as this window's row (top N plus a
    // "rest" token, labelled as an approximation; a full row exactly), the
    // response's pipeline as Compare pipelines' side A. False and the banner on refusal.
    bool openResponseRow();
    // The Generate tab: a language model writes text, each step shown through the window's session.
    GenerateView* generateView() const { return generate_; }
    // The Speculative and Beam tabs, and the model they share (the Generate tab's when it has loaded it).
    SpeculativeView* speculativeView() const { return speculative_; }
    BeamView* beamView() const { return beam_; }
    ModelSlot* multistepModel() const { return multistep_model_; }
    // The stage plots on show: the Generate tab's while it is the current tab, else the Pipeline tab's.
    PipelineView* activePipelineView() const;
    LogitsEditor* logitsEditor() const { return logits_; }
    ErrorBanner* errorBanner() const { return banner_; }
    // The engine's message when the latest sampling run was refused (shown in
    // the panel of its field), empty once a run succeeds.
    const QString& lastFailure() const { return last_failure_; }
    ResultBar* resultBar() const { return result_; }
    TokenPathBar* tokenPathBar() const { return path_; }
    // Undo and redo of every change to the session (Edit > Undo, Ctrl+Z).
    SessionUndo& undo() { return undo_; }
    QTabWidget* views() const { return views_; }
    const SamplingWorker& worker() const { return worker_; }

    const std::shared_ptr<const TraceView>& currentView() const { return view_; }
    std::int32_t selectedToken() const { return selected_; }
    double lastDisplayMs() const { return last_display_ms_; }          // GUI-thread wall time of the last update
    double lastDisplayCpuMs() const { return last_display_cpu_ms_; }  // and its CPU time
    void selectToken(std::int32_t id);

    // Inputs; on failure the banner shows the reason and everything stays as it was.
    // A .safetensors file with several float tensors asks the tensor chooser
    // unless `tensor` names one. `u2AsBf16` reads .npy uint16 data as bfloat16
    // bits (the CLI's --u2-as-bf16; File > "Open logits, reading <u2 as bfloat16...").
    bool openLogitsFile(const QString& path, const QString& tensor = {}, bool u2AsBf16 = false);
    // The most a logits file may need as doubles (the CLI's --max-memory; File > "Memory limit for
    // files..."). The text as --max-memory takes it ("4G", "512M", bytes; empty: the default); a bad
    // text is refused in the banner, naming it, and the limit stays.
    bool setMemoryLimitText(const QString& text);
    void setMemoryLimit(std::uint64_t bytes) { memory_limit_ = bytes; }
    std::uint64_t memoryLimit() const { return memory_limit_; }
    bool pasteLogitsText(const QString& text, const QString& source);
    bool loadExample(const Example& example);
    // Loads the example's row and parameters and opens Compare pipelines on
    // the two pipelines that disagree on it.
    bool loadPipelineExample(const PipelineExample& example);
    // Opens a llama.cpp sampler example in Compare pipelines, on the stage plots of its sampler's side.
    bool loadSamplerExample(const SamplerExample& example);
    // Labels from a tokenizer.json, vocab.json, vocab.txt or .gguf. Another
    // size is accepted with a warning in the banner; a bad file is refused and
    // the previous labels stay.
    bool openVocabularyFile(const QString& path);
    void setVocabulary(Vocabulary vocabulary);
    void clearVocabulary();
    void showError(const QString& message);
    void setTensorChooser(TensorChooser chooser) { tensor_chooser_ = std::move(chooser); }

    void step();
    void resetRequest();
    // Every font and plot label `factor` times its normal size (View > Presentation font size,
    // --font-scale). Throws InputError outside [kMinFontScale, kMaxFontScale].
    void setFontScale(double factor);
    // The parameters dock's width at font scale 1 (370 px: every button's text whole).
    static constexpr int kParametersWidth = 370;

    // True when the newest request has been drawn (or refused).
    bool isDrawn() const;
    // Runs the event loop until isDrawn() or the timeout; returns isDrawn().
    bool waitUntilDrawn(int timeout_ms = 30000);
    // Draws the newest request and saves the window as PNG. Throws InputError.
    void saveScreenshot(const QString& path);

signals:
    void traceDisplayed(std::uint64_t generation);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    std::optional<MirostatStep> pipelineMirostatStep();
    QScrollArea* scrolledPage(QWidget* view);
    void buildMenus();
    void addInputViews();
    void addGenerateView();
    void addMultistepViews();
    void inputChanged();
    void refreshShownView();
    void showLabelWarningsOrHideBanner();
    void openVocabularyDialog();
    void scheduleSampling();
    void submitNow();
    void onTrace(std::shared_ptr<const TraceView> view);
    void onFailure(std::uint64_t generation, const QString& field, const QString& message);
    void redrawSelection();
    void restoreSettings();
    void saveSettings() const;
    void openFileDialog();
    void openU2AsBf16Dialog();
    void exportPlotDialog(QCustomPlot* plot);
    void exportAllPlotsDialog();
    void exportTraceDialog();
    void exportTableDialog();

    std::uint64_t memory_limit_ = 0;  // bytes; set to the default budget on construction
    MainWindowOptions options_;
    Session session_;
    SessionUndo undo_{&session_};
    SamplingWorker worker_;
    ParameterPanel* parameters_;
    HistoryPanel* history_;
    StatisticsPanel* statistics_;
    PipelineView* pipeline_;
    TokenTablePanel* tokens_;
    LogitsEditor* logits_;
    ErrorBanner* banner_;
    ResultBar* result_;
    TokenPathBar* path_;
    QTabWidget* views_;
    PipelineCompareView* compare_pipelines_ = nullptr;
    PipelineStagePlots* stage_plots_a_ = nullptr;
    PipelineStagePlots* stage_plots_b_ = nullptr;
    EmpiricalHistogramView* histogram_ = nullptr;
    CompareView* batch_compare_ = nullptr;
    QWidget* verify_ = nullptr;
    ResponseView* responses_ = nullptr;
    GenerateView* generate_ = nullptr;
    ModelSlot* multistep_model_ = nullptr;
    SpeculativeView* speculative_ = nullptr;
    BeamView* beam_ = nullptr;
    bool pipeline_stale_ = false;  // the Pipeline tab's plots lag the newest trace (drawn when shown)
    std::vector<std::optional<PlotMode>> submitted_modes_;  // the plot views the newest request made curves for

    struct InputView {
        QWidget* widget;
        std::function<void(const WindowInput&)> feed;
        std::uint64_t fed_generation;  // the input generation it last saw
    };
    std::vector<InputView> input_views_;
    std::uint64_t input_generation_ = 1;
    bool refresh_scheduled_ = false;
    TensorChooser tensor_chooser_;

    std::shared_ptr<const TraceView> view_;
    std::int32_t selected_ = -1;
    QString selected_source_;  // the input the selection was made on: a new one clears it
    bool submit_scheduled_ = false;
    std::uint64_t finished_generation_ = 0;
    QString last_failure_;
    double last_display_ms_ = 0.0;
    double last_display_cpu_ms_ = 0.0;
};

}  // namespace samplescope::ui
