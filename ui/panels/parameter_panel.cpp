#include "ui/panels/parameter_panel.h"

#include <algorithm>

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
    // The contract's parameters here; llama.cpp's extra ones in their own group below.
    extras_ = new QWidget(this);
    extras_->setObjectName(QStringLiteral("llamacpp_samplers"));
    auto* extras_grid = new QGridLayout(extras_);
    extras_grid->setContentsMargins(8, 0, 0, 0);
    extras_grid->setVerticalSpacing(3);
    extras_grid->setColumnStretch(1, 1);
    int extras_row = 0;
    for (std::size_t i = 0; i < kParams.size(); ++i) {
        const bool extra = i >= kContractParamCount;
        auto* control = extra ? new ParameterControl(kParams[i], extras_grid, extras_row, extras_)
                              : new ParameterControl(kParams[i], grid, row, this);
        connect(control, &ParameterControl::valueEdited, this, &ParameterPanel::onValue);
        connect(control, &ParameterControl::errorChanged, this, &ParameterPanel::onErrorChanged);
        connect(control, &ParameterControl::restoredAfterRefusal, this, [this](const QString& message) {
            kept_text_ = message;
            showMessage();
        });
        connect(control, &ParameterControl::hovered, this, [this, control](bool inside) {
            if (inside) {
                hovered_ = control;
            } else if (hovered_ == control) {
                hovered_ = nullptr;
            }
            showMessage();
        });
        controls_.push_back(control);
        (extra ? extras_row : row) += 1;
    }
    logit_bias_ = new TextParameterControl(
        QStringLiteral("logit_bias"), QStringLiteral("Logit bias"),
        QStringLiteral("<b>Logit bias</b> (logit_bias)<br>id:bias pairs separated by commas, e.g. "
                       "<tt>15:2.5,7:-inf</tt>: each id's logit plus its bias; -inf bans the id. Empty is off. "
                       "llama.cpp applies it first."),
        extras_grid, extras_row, extras_);
    extras_row += 2;
    dry_breakers_ = new TextParameterControl(
        QStringLiteral("dry_sequence_breakers"), QStringLiteral("DRY breakers"),
        QStringLiteral("<b>DRY sequence breakers</b> (dry_sequence_breakers)<br>Items separated by <tt>;</tt>: ids "
                       "(<tt>13;198,271</tt>: the breaker 13 and the two-token breaker 198 271) or a string in double "
                       "quotes (<tt>\"\\n\";\":\"</tt>, escapes \\n \\t \\\" \\\\). A string stands "
                       "for every token of the loaded vocabulary (else the row's labels) whose text contains it, each "
                       "as a single-token breaker: the first case of llama.cpp's "
                       "get_overlapping_token_sequences (multi-token spellings are not looked for). A repeat never "
                       "reaches back over a breaker, and a single-token breaker is never penalised."),
        extras_grid, extras_row, extras_);
    connect(logit_bias_, &TextParameterControl::textEdited, this, &ParameterPanel::onListText);
    connect(dry_breakers_, &TextParameterControl::textEdited, this, &ParameterPanel::onListText);
    connect(logit_bias_, &TextParameterControl::errorChanged, this, &ParameterPanel::onErrorChanged);
    connect(dry_breakers_, &TextParameterControl::errorChanged, this, &ParameterPanel::onErrorChanged);

    auto* seed_label = new QLabel(QStringLiteral("Seed"), this);
    const QString seed_tip = QStringLiteral("The request's seed: the draws come from stream(seed, 4) (PCG32). "
                                            "A decimal integer in [0, 2^64 - 1]. A new seed starts a new request.");
    seed_label->setToolTip(seed_tip);
    seed_entry_ = new EntryBox(this);
    seed_entry_->setObjectName(QStringLiteral("entry_seed"));
    seed_entry_->setToolTip(seed_tip);
    // A 20-digit seed scrolls inside the box (its first digits on show, all of them in the tooltip); the box's
    // size never follows its text, so a long seed never widens the panel.
    seed_entry_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    seed_entry_->setMinimumWidth(entryWidthFor(seed_entry_, QStringLiteral("0000000")));
    seed_entry_->setFixedHeight(seed_entry_->sizeHint().height());
    random_seed_ = new QPushButton(QStringLiteral("Random seed"), this);
    random_seed_->setObjectName(QStringLiteral("random_seed"));
    random_seed_->setToolTip(QStringLiteral("Pick a random 64-bit seed (a new request)"));
    grid->addWidget(seed_label, row, 0);
    grid->addWidget(seed_entry_, row, 1);
    grid->addWidget(random_seed_, row, 2, 1, 2);
    row += 1;

    greedy_ = new QCheckBox(QStringLiteral("Greedy (T = 0)"), this);
    greedy_->setObjectName(QStringLiteral("greedy"));
    greedy_->setToolTip(QStringLiteral("T = 0: the argmax is chosen and no draw is taken. Sets temperature to 0; "
                                       "unticking restores the temperature before."));
    defaults_ = new QPushButton(QStringLiteral("Reset to defaults"), this);
    defaults_->setObjectName(QStringLiteral("defaults"));
    defaults_->setToolTip(QStringLiteral("Every parameter to its default (each step off, T = 1); the seed stays."));
    grid->addWidget(greedy_, row, 0, 1, 2);
    grid->addWidget(defaults_, row, 2, 1, 2);
    row += 1;

    message_ = new MessageLine(this);
    message_->setObjectName(QStringLiteral("parameter_message"));
    grid->addWidget(message_, row, 0, 1, 4);
    row += 1;

    extras_toggle_ = new QToolButton(this);
    extras_toggle_->setObjectName(QStringLiteral("llamacpp_samplers_toggle"));
    extras_toggle_->setText(QStringLiteral("llama.cpp samplers"));
    extras_toggle_->setCheckable(true);
    extras_toggle_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    extras_toggle_->setAutoRaise(true);
    extras_toggle_->setStyleSheet(QStringLiteral("QToolButton { font-weight: bold; }"));
    extras_toggle_->setToolTip(QStringLiteral(
        "llama.cpp's extra samplers: logit bias, typical-p, top-n-sigma, min_keep, dynamic temperature, XTC, DRY and "
        "mirostat. The contract's pipeline (the Pipeline view) never runs them: see them in Compare pipelines with "
        "the llamacpp preset or a custom pipeline (its Stages tabs)."));
    extras_summary_ = new QLabel(this);
    extras_summary_->setObjectName(QStringLiteral("llamacpp_samplers_summary"));
    extras_summary_->setWordWrap(true);
    extras_summary_->setStyleSheet(QStringLiteral("color: #0072B2;"));
    grid->addWidget(extras_toggle_, row, 0, 1, 2);
    grid->addWidget(extras_summary_, row, 2, 1, 2);
    grid->addWidget(extras_, row + 1, 0, 1, 4);
    // Spare height goes below the controls, not between their rows.
    grid->setRowStretch(row + 2, 1);
    showMessage();
    connect(extras_toggle_, &QToolButton::toggled, this, &ParameterPanel::setExtrasExpanded);
    setExtrasExpanded(false);

    connect(seed_entry_, &QLineEdit::editingFinished, this, &ParameterPanel::onSeedEntry);
    connect(seed_entry_, &EntryBox::escapePressed, this, &ParameterPanel::restoreSeed);
    connect(seed_entry_, &EntryBox::focusLeft, this, [this] {
        if (seed_error_.isEmpty()) return;
        const QString typed = seed_entry_->text().trimmed();
        restoreSeed();
        kept_text_ = QStringLiteral("seed stays %1 (\"%2\" was refused)")
                         .arg(params_.seed ? QString::number(*params_.seed) : QStringLiteral("unset"), typed);
        showMessage();
    });
    connect(random_seed_, &QPushButton::clicked, this, [this] {
        params_.seed = choose_seed();
        restoreSeed();
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

void ParameterPanel::setExtrasExpanded(bool expanded) {
    {
        const QSignalBlocker block(extras_toggle_);
        extras_toggle_->setChecked(expanded);
    }
    extras_toggle_->setArrowType(expanded ? Qt::DownArrow : Qt::RightArrow);
    extras_->setVisible(expanded);
}

void ParameterPanel::setParams(const SamplingParams& params, std::size_t vocab_size) {
    params_ = params;
    vocab_size_ = vocab_size;
    for (auto* control : controls_) control->setValue(param_value(params, control->info().param));
    restoreSeed();
    kept_text_.clear();
    {
        const QSignalBlocker block(greedy_);
        greedy_->setChecked(is_greedy(params));
    }
    showListTexts();
    refreshStates();
}

// The two lists as text: the breakers as last typed while they still resolve to the parameters' ones.
void ParameterPanel::showListTexts() {
    logit_bias_->setText(QString::fromStdString(format_logit_bias(params_.logit_bias)));
    logit_bias_->showNote(QString());
    bool typed_stands = false;
    if (!breaker_text_.isEmpty()) {
        try {
            typed_stands = parseDryBreakerText(breaker_text_, token_texts_ ? token_texts_() : std::vector<std::string>{})
                               .breakers == params_.dry_sequence_breakers;
        } catch (const InputError&) {
            typed_stands = false;
        }
    }
    if (!typed_stands) {
        breaker_text_.clear();
        dry_breakers_->showNote(QString());
    }
    dry_breakers_->setText(typed_stands ? breaker_text_
                                        : QString::fromStdString(format_dry_sequence_breakers(params_.dry_sequence_breakers)));
}

void ParameterPanel::onListText(const QString& key, const QString& text) {
    auto* control = key == logit_bias_->key() ? logit_bias_ : dry_breakers_;
    SamplingParams next = params_;
    QString note;
    try {
        if (control == logit_bias_) {
            next.logit_bias = parse_logit_bias(text.trimmed().toStdString());
            if (vocab_size_ > 0) check_logit_bias(next.logit_bias, vocab_size_);
        } else {
            DryBreakerText parsed = parseDryBreakerText(text, token_texts_ ? token_texts_() : std::vector<std::string>{});
            if (vocab_size_ > 0) check_dry_sequence_breakers(parsed.breakers, vocab_size_);
            next.dry_sequence_breakers = std::move(parsed.breakers);
            note = parsed.note;
        }
    } catch (const InputError& error) {
        control->showError(QString::fromUtf8(error.what()));
        control->showNote(QString());
        return;
    }
    control->showError(QString());
    control->accept();
    control->showNote(note);
    kept_text_.clear();
    if (control == dry_breakers_) breaker_text_ = text;
    params_ = next;
    refreshStates();
    emit paramsEdited(params_);
}

void ParameterPanel::refreshStates() {
    // Every badge is its parameter's row's (the stage descriptors, engine/core/stage.h).
    QStringList on;
    const auto show = [&on](const ParamBadge& badge, auto* control) {
        control->setState(QString::fromStdString(badge.text), badge.on);
        if (!badge.summary.empty()) on << QString::fromStdString(badge.summary);
    };
    for (auto* control : controls_) show(param_badge(control->info(), params_, vocab_size_), control);
    show(list_param_badge(*list_param_from_key("logit_bias"), params_, vocab_size_), logit_bias_);
    show(list_param_badge(*list_param_from_key("dry_sequence_breakers"), params_, vocab_size_), dry_breakers_);
    on.removeDuplicates();
    extras_summary_->setText(on.isEmpty() ? QStringLiteral("all off")
                                          : QStringLiteral("on: %1").arg(on.join(QStringLiteral(", "))));
    extras_summary_->setStyleSheet(on.isEmpty() ? QStringLiteral("color: #777777; font-style: italic;")
                                                : QStringLiteral("color: #0072B2; font-weight: bold;"));
    applyKnobNotes();
}

void ParameterPanel::setKnobNotes(const KnobNotes& notes) {
    notes_ = notes;
    applyKnobNotes();
}

void ParameterPanel::applyKnobNotes() {
    bool current = false;
    if (notes_) {
        SamplingParams ran = notes_->params;
        ran.seed = params_.seed;
        current = ran == params_;
    }
    for (auto* control : controls_) {
        const auto& reason = current ? notes_->reason(control->info().param) : std::optional<std::string>{};
        control->setNote(reason ? QString::fromStdString(*reason) : QString());
    }
    showMessage();
}

void ParameterPanel::onErrorChanged(const QString& message) {
    error_text_ = message.isEmpty() ? pendingError() : message;
    if (!message.isEmpty()) kept_text_.clear();
    showMessage();
}

// A refusal still standing in some box (the line shows the newest; this finds another when that one clears).
QString ParameterPanel::pendingError() const {
    for (auto* control : controls_) {
        if (!control->error().isEmpty()) return control->error();
    }
    for (auto* list : {logit_bias_, dry_breakers_}) {
        if (!list->error().isEmpty()) return list->error();
    }
    return seed_error_;
}

void ParameterPanel::showMessage() {
    if (hovered_ && !hovered_->note().isEmpty() && hovered_->error().isEmpty()) {
        message_->setMessage(QStringLiteral("%1 has no effect now: %2").arg(hovered_->key(), hovered_->note()),
                             QColor(0x55, 0x55, 0x55));
    } else if (!error_text_.isEmpty()) {
        message_->setMessage(error_text_, QColor(0xB0, 0x00, 0x20));
    } else if (!kept_text_.isEmpty()) {
        message_->setMessage(kept_text_, QColor(0x8a, 0x2b, 0x2b), true);
    } else {
        message_->setMessage(QStringLiteral("Enter applies a typed value; Esc restores it."),
                             QColor(0x88, 0x88, 0x88), true);
    }
}

void ParameterPanel::restoreSeed() {
    const QString text = params_.seed ? QString::number(*params_.seed) : QString();
    seed_entry_->setText(text);
    seed_entry_->setCursorPosition(0);
    seed_entry_->setStyleSheet(QString());
    seed_entry_->setToolTip(QStringLiteral("<b>Seed</b> %1<br>The request's seed: the draws come from stream(seed, 4) "
                                           "(PCG32). A decimal integer in [0, 2^64 - 1]. A new seed starts a new "
                                           "request.")
                                .arg(text));
    if (!seed_error_.isEmpty()) {
        seed_error_.clear();
        onErrorChanged(QString());
    }
}

DryBreakerText parseDryBreakerText(const QString& text, const std::vector<std::string>& token_texts) {
    DryBreakerText out;
    QStringList notes;
    const std::string all = text.toStdString();
    // Ids only: the engine's parser, with its own messages.
    if (all.find('"') == std::string::npos) {
        out.breakers = parse_dry_sequence_breakers(all);
        return out;
    }
    std::size_t i = 0;
    const auto fail = [](const std::string& message) { throw InputError("dry_sequence_breakers", "dry_sequence_breakers: " + message); };
    while (i <= all.size()) {
        // One item: up to the next ';' outside quotes.
        while (i < all.size() && (all[i] == ' ' || all[i] == '\t')) ++i;
        if (i < all.size() && all[i] == '"') {
            std::string piece;
            std::size_t j = i + 1;
            bool closed = false;
            for (; j < all.size(); ++j) {
                const char c = all[j];
                if (c == '"') {
                    closed = true;
                    break;
                }
                if (c == '\\' && j + 1 < all.size()) {
                    const char e = all[++j];
                    piece += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
                } else {
                    piece += c;
                }
            }
            if (!closed) fail("unterminated string at \"" + escape_text(all.substr(i)) + "\"");
            if (piece.empty()) fail("an empty string matches every token");
            std::size_t k = j + 1;
            while (k < all.size() && (all[k] == ' ' || all[k] == '\t')) ++k;
            if (k < all.size() && all[k] != ';') fail("expected ';' after the string \"" + escape_text(piece) + "\"");
            std::size_t matched = 0;
            for (std::size_t id = 0; id < token_texts.size(); ++id) {
                if (token_texts[id].find(piece) == std::string::npos) continue;
                const std::vector<std::int64_t> single{static_cast<std::int64_t>(id)};
                if (std::find(out.breakers.begin(), out.breakers.end(), single) == out.breakers.end()) out.breakers.push_back(single);
                ++matched;
            }
            notes << QStringLiteral("\"%1\": %2 token%3").arg(QString::fromStdString(escape_text(piece))).arg(matched)
                         .arg(matched == 1 ? QString() : QStringLiteral("s"));
            i = k + 1;
            continue;
        }
        const std::size_t end = std::min(all.find(';', i), all.size());
        const std::string item = all.substr(i, end - i);
        if (item.find_first_not_of(" \t") == std::string::npos) fail("has an empty breaker in \"" + all + "\"");
        for (auto& breaker : parse_dry_sequence_breakers(item)) out.breakers.push_back(std::move(breaker));
        i = end + 1;
    }
    if (!notes.isEmpty()) {
        out.note = QStringLiteral("%1 -> %2 breakers%3")
                       .arg(notes.join(QStringLiteral(", ")))
                       .arg(out.breakers.size())
                       .arg(token_texts.empty() ? QStringLiteral(" (no vocabulary or labels: strings match nothing)") : QString());
    }
    return out;
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
    kept_text_.clear();
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
        const bool same = params_.seed == seed;
        params_.seed = seed;
        restoreSeed();
        if (same) return;
        kept_text_.clear();
        emit paramsEdited(params_);
    } catch (const InputError& error) {
        seed_error_ = QString::fromUtf8(error.what());
        seed_entry_->setStyleSheet(QStringLiteral("border: 2px solid #B00020;"));
        onErrorChanged(seed_error_);
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
    for (auto* list : {logit_bias_, dry_breakers_}) {
        if (list->key() == field) list->showError(message);
    }
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
