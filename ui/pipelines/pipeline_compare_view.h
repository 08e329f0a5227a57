// Two pipelines side by side on the same row, parameters and seed: both stage
// strips, the ids kept by one and not the other, the probability each assigns
// to every token, the total-variation distance, and whether the same seed
// draws the same token; what each engine would refuse or decide differently in
// its own float32 arithmetic, and the token's logprob in each engine's modes.
// Every number comes from engine/pipelines/pipeline_diff.h.
#pragma once

#include <QWidget>

#include <optional>
#include <string>
#include <vector>

#include "engine/pipelines/pipeline_diff.h"
#include "engine/pipelines/pipeline_examples.h"

class QCPBarsGroup;
class QCustomPlot;
class QLabel;
class QTableWidget;
class QTabWidget;

namespace samplescope {

class PipelineEditor;
class StageStrip;

// What loading `after` over `before` changes, one "key old -> new" per parameter in kParams order (the two
// lists too); the seed is never compared.
QStringList paramChanges(const SamplingParams& before, const SamplingParams& after);

class PipelineCompareView : public QWidget {
    Q_OBJECT
public:
    explicit PipelineCompareView(QWidget* parent = nullptr);

    // `mirostat_mu`: mirostat's state before this step (the session's after a Step), 2 tau when absent.
    void setInput(std::vector<double> logits, std::vector<std::string> labels, SamplingParams params,
                  std::vector<std::int64_t> prompt_ids, std::vector<std::int64_t> output_ids,
                  std::optional<double> mirostat_mu = std::nullopt);
    void setPipelines(const Pipeline& a, const Pipeline& b);
    // Opens an example: its row, parameters and the two pipelines that disagree on it.
    void showExample(const PipelineExample& example);

    // The diff on show; none while the input is missing or refused.
    const std::optional<PipelineDiff>& diff() const { return diff_; }
    const SamplingParams& params() const { return params_; }

    PipelineEditor* editorA() const { return editor_a_; }
    PipelineEditor* editorB() const { return editor_b_; }
    // Whether the two editors are tabs of one widget: the space the view has is
    // narrower than they need side by side (1280 x 720 with the side panels open).
    bool editorsTabbed() const { return editors_tabbed_; }
    StageStrip* stripA() const { return strip_a_; }
    StageStrip* stripB() const { return strip_b_; }
    QTableWidget* table() const { return table_; }
    // Per side, the drawn token's logprob as the engine returns it, one row a mode.
    QTableWidget* logprobTable() const { return logprobs_; }
    // The engines' refusals and float32 notes ("" when there are none).
    QLabel* engineNotes() const { return notes_; }
    // What the pipelines on show do differently by their order (a temperature applied after truncation); hidden
    // when nothing is to be said.
    QLabel* orderNote() const { return order_note_; }
    // After "Load engine defaults": which parameters it changed, old -> new; hidden until then and again once
    // the parameters differ from those it loaded.
    QLabel* defaultsNote() const { return defaults_note_; }
    QLabel* verdict() const { return verdict_; }
    QLabel* keptSummary() const { return kept_; }
    QCustomPlot* plot() const { return plot_; }
    // The left-hand tabs: the final q plot first; the window adds the stage plots of each side.
    QTabWidget* plotTabs() const { return plot_tabs_; }
    const std::vector<std::string>& labels() const { return labels_; }

signals:
    // The user loaded a stack's own defaults: the parameters changed here.
    void paramsChanged(const samplescope::SamplingParams& params);
    // The same load in words ("Loaded vLLM defaults: temperature 0.7 -> 1, ..."), for a status bar.
    void defaultsLoaded(const QString& summary);
    // After every recomputation: diff() holds the new runs, or none.
    void diffChanged();

protected:
    bool event(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    // Side by side where they fit, else tabs: decided by the width the view is
    // given (its scroll area's viewport when it sits in one, not its own width,
    // which side by side never falls below).
    void arrangeEditors(bool force = false);
    void recompute();
    void showEngineDetails(const PipelineDiff& diff);
    void loadEngineDefaults(const QString& preset);
    void showOrderNote();
    QString labelOf(std::int32_t id) const;
    QString idList(const IdList& ids) const;

    std::vector<double> logits_;
    std::vector<std::string> labels_;
    SamplingParams params_;
    std::vector<std::int64_t> prompt_ids_;
    std::vector<std::int64_t> output_ids_;
    std::optional<double> mirostat_mu_;
    std::optional<PipelineDiff> diff_;

    PipelineEditor* editor_a_ = nullptr;
    PipelineEditor* editor_b_ = nullptr;
    QWidget* editors_row_ = nullptr;
    QTabWidget* editors_tabs_ = nullptr;
    bool editors_tabbed_ = false;
    StageStrip* strip_a_ = nullptr;
    StageStrip* strip_b_ = nullptr;
    QLabel* kept_ = nullptr;
    QLabel* verdict_ = nullptr;
    QTableWidget* table_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QTabWidget* plot_tabs_ = nullptr;
    QTableWidget* logprobs_ = nullptr;
    QLabel* notes_ = nullptr;
    QLabel* order_note_ = nullptr;
    QLabel* defaults_note_ = nullptr;
    std::optional<SamplingParams> loaded_defaults_;  // the parameters the last load set, while they stand
    QCustomPlot* plot_ = nullptr;
    QCPBarsGroup* group_ = nullptr;
};

}  // namespace samplescope
