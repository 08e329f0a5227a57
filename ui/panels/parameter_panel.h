// Every sampling parameter as a control, generated from kParams, plus the
// seed (with a random-seed button), a greedy toggle and a reset to defaults.
// Emits the whole parameter set after each accepted edit. A refused value
// shows its message in one reserved line (messageLine), so nothing moves; the
// same line names why a hovered knob has no effect (setKnobNotes).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QCheckBox>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QToolButton>

#include "engine/core/sampling_params.h"
#include "ui/panels/knob_notes.h"
#include "ui/panels/parameter_control.h"

namespace samplescope::ui {

// DRY's sequence breakers as typed in the panel: items separated by ';', each
// either ids ("198,271": the breaker 198 271, parse_dry_sequence_breakers) or
// a string in double quotes ("\n", with \n \t \" \\ escapes), which stands for
// every token whose text contains it, each as a single-token breaker (the
// first case of llama.cpp's get_overlapping_token_sequences). Throws
// InputError("dry_sequence_breakers") for bad text; `note` says what each
// string resolved to.
struct DryBreakerText {
    std::vector<std::vector<std::int64_t>> breakers;
    QString note;
};
DryBreakerText parseDryBreakerText(const QString& text, const std::vector<std::string>& token_texts);

class ParameterPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit ParameterPanel(QWidget* parent = nullptr);

    // Shows these parameters (no signal); V decides whether top-k is on.
    void setParams(const SamplingParams& params, std::size_t vocab_size);
    const SamplingParams& params() const { return params_; }

    ParameterControl* control(Param param) const { return controls_[static_cast<std::size_t>(param)]; }
    TextParameterControl* logitBiasControl() const { return logit_bias_; }
    TextParameterControl* dryBreakersControl() const { return dry_breakers_; }
    // The llama.cpp samplers' group (the rows after kContractParamCount and the two lists), collapsed at first.
    QToolButton* extrasToggle() const { return extras_toggle_; }
    QWidget* extrasGroup() const { return extras_; }
    bool extrasExpanded() const { return extras_toggle_->isChecked(); }
    // The group's line naming llama.cpp's samplers that are on ("on: XTC, DRY"), else "all off".
    QLabel* extrasSummary() const { return extras_summary_; }
    void setExtrasExpanded(bool expanded);
    // Each token's text for DRY's string breakers (the vocabulary's, else the row's labels).
    void setTokenTexts(std::function<std::vector<std::string>()> texts) { token_texts_ = std::move(texts); }
    QLineEdit* seedEntry() const { return seed_entry_; }
    // The seed box's message while its text is refused, else empty.
    const QString& seedError() const { return seed_error_; }
    // The reserved line under the contract's controls: a refused value's message (red), what a refused box
    // kept after focus left it, why a hovered knob has no effect, else how to edit.
    MessageLine* messageLine() const { return message_; }
    QCheckBox* greedyBox() const { return greedy_; }
    QPushButton* randomSeedButton() const { return random_seed_; }
    QPushButton* defaultsButton() const { return defaults_; }

    // An engine error about one parameter (e.g. T too small for these logits), shown at its control.
    void showEngineError(const QString& field, const QString& message);
    void clearEngineErrors();

    // Why each knob has no effect in the trace on show (knob_notes); applied while the panel's parameters
    // are the ones the trace ran with (its seed aside), so a note never outlives an edit.
    void setKnobNotes(const KnobNotes& notes);

signals:
    void paramsEdited(const samplescope::SamplingParams& params);

private:
    void onValue(Param param, double value);
    void onSeedEntry();
    void onGreedy(bool on);
    void onListText(const QString& key, const QString& text);
    void refreshStates();
    void showListTexts();
    void applyKnobNotes();
    void onErrorChanged(const QString& message);
    QString pendingError() const;
    void showMessage();
    void restoreSeed();

    std::vector<ParameterControl*> controls_;
    TextParameterControl* logit_bias_;
    TextParameterControl* dry_breakers_;
    QToolButton* extras_toggle_;
    QLabel* extras_summary_;
    QWidget* extras_;
    std::function<std::vector<std::string>()> token_texts_;
    QString breaker_text_;  // the breakers as last typed, shown while they still stand for the parameters
    EntryBox* seed_entry_;
    QString seed_error_;
    MessageLine* message_;
    QString error_text_;   // the newest refusal still in a box
    QString kept_text_;    // a refused box restored when focus left it
    ParameterControl* hovered_ = nullptr;
    std::optional<KnobNotes> notes_;
    QPushButton* random_seed_;
    QCheckBox* greedy_;
    QPushButton* defaults_;
    SamplingParams params_;
    std::size_t vocab_size_ = 0;
    double temperature_before_greedy_ = 1.0;
};

}  // namespace samplescope::ui
