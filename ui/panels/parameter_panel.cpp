#include "ui/panels/parameter_panel.h"

#include <QGridLayout>
#include <QHBoxLayout>

#include "engine/base/input_error.h"

namespace samplescope::ui {

ParameterPanel::ParameterPanel(QWidget* parent) : QGroupBox(QStringLiteral("Parameters"), parent) {
    setObjectName(QStringLiteral("parameter_panel"));
    auto* grid = new QGridLayout(this);
    grid->setVerticalSpacing(3);
    grid->setColumnStretch(1, 1);
    int row = 0;
    for (const auto& info : kParams) {
        auto* control = new ParameterControl(info, grid, row, this);
        connect(control, &ParameterControl::valueEdited, this, &ParameterPanel::onValue);
        controls_.push_back(control);
        row += 2;
    }

    auto* seed_label = new QLabel(QStringLiteral("Seed"), this);
    const QString seed_tip = QStringLiteral("The request's seed: the draws come from stream(seed, 4) (PCG32). "
                                            "A decimal integer in [0, 2^64 - 1]. A new seed starts a new request.");
    seed_label->setToolTip(seed_tip);
    seed_entry_ = new QLineEdit(this);
    seed_entry_->setObjectName(QStringLiteral("entry_seed"));
    seed_entry_->setToolTip(seed_tip);
    random_seed_ = new QPushButton(QStringLiteral("Random seed"), this);
    random_seed_->setObjectName(QStringLiteral("random_seed"));
    random_seed_->setToolTip(QStringLiteral("Pick a random 64-bit seed (a new request)"));
    seed_error_ = new QLabel(this);
    seed_error_->setObjectName(QStringLiteral("error_seed"));
    seed_error_->setStyleSheet(QStringLiteral("color: #B00020;"));
    seed_error_->setWordWrap(true);
    seed_error_->setVisible(false);
    grid->addWidget(seed_label, row, 0);
    grid->addWidget(seed_entry_, row, 1, 1, 2);
    grid->addWidget(random_seed_, row, 3);
    grid->addWidget(seed_error_, row + 1, 0, 1, 4);
    row += 2;

    greedy_ = new QCheckBox(QStringLiteral("Greedy (T = 0: argmax, no draw)"), this);
    greedy_->setObjectName(QStringLiteral("greedy"));
    greedy_->setToolTip(QStringLiteral("Sets temperature to 0; unticking restores the temperature before."));
    defaults_ = new QPushButton(QStringLiteral("Reset to defaults"), this);
    defaults_->setObjectName(QStringLiteral("defaults"));
    defaults_->setToolTip(QStringLiteral("Every parameter to its default (each step off, T = 1); the seed stays."));
    grid->addWidget(greedy_, row, 0, 1, 3);
    grid->addWidget(defaults_, row, 3);

    connect(seed_entry_, &QLineEdit::editingFinished, this, &ParameterPanel::onSeedEntry);
    connect(random_seed_, &QPushButton::clicked, this, [this] {
        params_.seed = choose_seed();
        seed_entry_->setText(QString::number(*params_.seed));
        seed_error_->setVisible(false);
        emit paramsEdited(params_);
    });
    connect(greedy_, &QCheckBox::toggled, this, &ParameterPanel::onGreedy);
    connect(defaults_, &QPushButton::clicked, this, [this] {
        SamplingParams defaults;
        defaults.seed = params_.seed;
        setParams(defaults, vocab_size_);
        emit paramsEdited(params_);
    });
}

void ParameterPanel::setParams(const SamplingParams& params, std::size_t vocab_size) {
    params_ = params;
    vocab_size_ = vocab_size;
    for (auto* control : controls_) control->setValue(param_value(params, control->info().param));
    seed_entry_->setText(params.seed ? QString::number(*params.seed) : QString());
    seed_error_->setVisible(false);
    seed_entry_->setStyleSheet(QString());
    {
        const QSignalBlocker block(greedy_);
        greedy_->setChecked(is_greedy(params));
    }
    refreshStates();
}

void ParameterPanel::refreshStates() {
    const auto state = [](bool on) { return on ? QStringLiteral("on") : QStringLiteral("off"); };
    control(Param::RepetitionPenalty)->setState(state(uses_repetition_penalty(params_)), uses_repetition_penalty(params_));
    const bool additive = uses_presence_frequency(params_);
    control(Param::PresencePenalty)->setState(state(params_.presence_penalty != 0.0), additive && params_.presence_penalty != 0.0);
    control(Param::FrequencyPenalty)->setState(state(params_.frequency_penalty != 0.0), additive && params_.frequency_penalty != 0.0);
    if (is_greedy(params_)) {
        control(Param::Temperature)->setState(QStringLiteral("greedy"), true);
    } else {
        control(Param::Temperature)->setState(state(uses_temperature(params_)), uses_temperature(params_));
    }
    const bool top_k = uses_top_k(params_, vocab_size_);
    control(Param::TopK)->setState(params_.top_k > 0 && !top_k ? QStringLiteral("off (>= V)") : state(top_k), top_k);
    control(Param::TopP)->setState(state(uses_top_p(params_)), uses_top_p(params_));
    control(Param::MinP)->setState(state(uses_min_p(params_)), uses_min_p(params_));
}

void ParameterPanel::onValue(Param param, double value) {
    SamplingParams next = params_;
    try {
        set_param(next, param, value);
    } catch (const InputError& error) {
        control(param)->showError(QString::fromUtf8(error.what()));
        return;
    }
    if (param == Param::Temperature && value != 0.0) temperature_before_greedy_ = value;
    params_ = next;
    {
        const QSignalBlocker block(greedy_);
        greedy_->setChecked(is_greedy(params_));
    }
    refreshStates();
    emit paramsEdited(params_);
}

void ParameterPanel::onSeedEntry() {
    const std::string text = seed_entry_->text().trimmed().toStdString();
    try {
        const std::uint64_t seed = parse_seed(text);
        seed_error_->setVisible(false);
        seed_entry_->setStyleSheet(QString());
        if (params_.seed == seed) return;
        params_.seed = seed;
        emit paramsEdited(params_);
    } catch (const InputError& error) {
        seed_error_->setText(QString::fromUtf8(error.what()));
        seed_error_->setVisible(true);
        seed_entry_->setStyleSheet(QStringLiteral("border: 2px solid #B00020;"));
    }
}

void ParameterPanel::onGreedy(bool on) {
    auto* temperature = control(Param::Temperature);
    if (on) {
        if (params_.temperature != 0.0) temperature_before_greedy_ = params_.temperature;
        params_.temperature = 0.0;
    } else {
        params_.temperature = temperature_before_greedy_ != 0.0 ? temperature_before_greedy_ : 1.0;
    }
    temperature->setValue(params_.temperature);
    refreshStates();
    emit paramsEdited(params_);
}

void ParameterPanel::showEngineError(const QString& field, const QString& message) {
    for (auto* control : controls_) {
        if (QString::fromUtf8(control->info().key.data(), static_cast<int>(control->info().key.size())) == field) {
            control->showError(message);
        }
    }
}

void ParameterPanel::clearEngineErrors() {
    for (auto* control : controls_) {
        if (!control->error().isEmpty() && control->entry()->text() ==
            QString::fromStdString(format_number(param_value(params_, control->info().param)))) {
            control->showError(QString());
        }
    }
}

}  // namespace samplescope::ui
