// Every sampling parameter as a control, generated from kParams, plus the
// seed (with a random-seed button), a greedy toggle and a reset to defaults.
// Emits the whole parameter set after each accepted edit.
#pragma once

#include <memory>
#include <vector>

#include <QCheckBox>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

#include "engine/core/sampling_params.h"
#include "ui/panels/parameter_control.h"

namespace samplescope::ui {

class ParameterPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit ParameterPanel(QWidget* parent = nullptr);

    // Shows these parameters (no signal); V decides whether top-k is on.
    void setParams(const SamplingParams& params, std::size_t vocab_size);
    const SamplingParams& params() const { return params_; }

    ParameterControl* control(Param param) const { return controls_[static_cast<std::size_t>(param)]; }
    QLineEdit* seedEntry() const { return seed_entry_; }
    QLabel* seedError() const { return seed_error_; }
    QCheckBox* greedyBox() const { return greedy_; }
    QPushButton* randomSeedButton() const { return random_seed_; }
    QPushButton* defaultsButton() const { return defaults_; }

    // An engine error about one parameter (e.g. T too small for these logits), shown at its control.
    void showEngineError(const QString& field, const QString& message);
    void clearEngineErrors();

signals:
    void paramsEdited(const samplescope::SamplingParams& params);

private:
    void onValue(Param param, double value);
    void onSeedEntry();
    void onGreedy(bool on);
    void refreshStates();

    std::vector<ParameterControl*> controls_;
    QLineEdit* seed_entry_;
    QLabel* seed_error_;
    QPushButton* random_seed_;
    QCheckBox* greedy_;
    QPushButton* defaults_;
    SamplingParams params_;
    std::size_t vocab_size_ = 0;
    double temperature_before_greedy_ = 1.0;
};

}  // namespace samplescope::ui
