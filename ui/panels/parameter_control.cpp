#include "ui/panels/parameter_control.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <QGridLayout>
#include <QVBoxLayout>

#include "engine/base/input_error.h"

namespace samplescope::ui {

std::optional<double> parseNumberText(const QString& text) {
    const std::string trimmed = text.trimmed().toStdString();
    if (trimmed.empty()) return std::nullopt;
    char* end = nullptr;
    const double value = std::strtod(trimmed.c_str(), &end);
    if (end != trimmed.c_str() + trimmed.size()) return std::nullopt;
    return value;
}

namespace {

QString viewOf(std::string_view text) { return QString::fromUtf8(text.data(), static_cast<int>(text.size())); }

}  // namespace

ParameterControl::ParameterControl(const ParamInfo& info, QGridLayout* grid, int row, QWidget* parent)
    : QObject(parent), info_(info), value_(info.default_value) {
    const QString tooltip = QStringLiteral("<b>%1</b> (%2)<br>%3<br>Valid: %4. Default: %5.")
                                .arg(viewOf(info.label), viewOf(info.key), viewOf(info.formula).toHtmlEscaped(),
                                     viewOf(info.valid_range).toHtmlEscaped(),
                                     QString::fromStdString(format_number(info.default_value)));
    name_ = new QLabel(viewOf(info.label), parent);
    name_->setToolTip(tooltip);
    slider_ = new QSlider(Qt::Horizontal, parent);
    slider_->setObjectName(QStringLiteral("slider_%1").arg(viewOf(info.key)));
    slider_->setRange(0, positionOf(info.slider_max));
    slider_->setToolTip(tooltip);
    slider_->setMinimumWidth(70);
    entry_ = new QLineEdit(parent);
    entry_->setObjectName(QStringLiteral("entry_%1").arg(viewOf(info.key)));
    entry_->setToolTip(tooltip);
    entry_->setMaximumWidth(80);
    state_ = new QLabel(parent);
    state_->setObjectName(QStringLiteral("state_%1").arg(viewOf(info.key)));
    state_->setMinimumWidth(48);
    state_->setToolTip(QStringLiteral("Whether this step changes anything (the contract's off values)."));
    error_ = new QLabel(parent);
    error_->setObjectName(QStringLiteral("error_%1").arg(viewOf(info.key)));
    error_->setWordWrap(true);
    error_->setStyleSheet(QStringLiteral("color: #B00020;"));
    error_->setVisible(false);
    grid->addWidget(name_, row, 0);
    grid->addWidget(slider_, row, 1);
    grid->addWidget(entry_, row, 2);
    grid->addWidget(state_, row, 3);
    grid->addWidget(error_, row + 1, 0, 1, 4);
    connect(slider_, &QSlider::valueChanged, this, &ParameterControl::onSlider);
    connect(entry_, &QLineEdit::editingFinished, this, &ParameterControl::onEntry);
    setValue(info.default_value);
}

double ParameterControl::step() const { return info_.integer ? 1.0 : 0.01; }

int ParameterControl::positionOf(double value) const {
    const double clamped = std::clamp(value, info_.slider_min, info_.slider_max);
    return static_cast<int>(std::lround((clamped - info_.slider_min) / step()));
}

void ParameterControl::setValue(double value) {
    value_ = value;
    const QSignalBlocker block(slider_);
    slider_->setValue(positionOf(value));
    entry_->setText(QString::fromStdString(format_number(value)));
    showError(QString());
}

void ParameterControl::setState(const QString& text, bool active) {
    state_->setText(text);
    state_->setStyleSheet(active ? QStringLiteral("color: #0072B2; font-weight: bold;")
                                 : QStringLiteral("color: #777777; font-style: italic;"));
}

void ParameterControl::showError(const QString& message) {
    error_->setText(message);
    error_->setVisible(!message.isEmpty());
    entry_->setStyleSheet(message.isEmpty() ? QString() : QStringLiteral("border: 2px solid #B00020;"));
}

void ParameterControl::onSlider(int position) {
    // Round to the step so a slider never produces 0.30000000000000004.
    const double raw = info_.slider_min + static_cast<double>(position) * step();
    const double value = info_.integer ? std::round(raw) : std::round(raw * 100.0) / 100.0;
    value_ = value;
    entry_->setText(QString::fromStdString(format_number(value)));
    showError(QString());
    emit valueEdited(info_.param, value);
}

void ParameterControl::onEntry() {
    const QString text = entry_->text();
    const auto value = parseNumberText(text);
    if (!value) {
        showError(QStringLiteral("%1 must be a number, got \"%2\"").arg(viewOf(info_.key), text.trimmed()));
        return;
    }
    if (const auto error = param_error(info_.param, *value)) {
        showError(QString::fromStdString(*error));
        return;
    }
    showError(QString());
    if (*value == value_) return;
    value_ = *value;
    {
        const QSignalBlocker block(slider_);
        slider_->setValue(positionOf(*value));
    }
    emit valueEdited(info_.param, *value);
}

TextParameterControl::TextParameterControl(const QString& key, const QString& label, const QString& tooltip,
                                           QGridLayout* grid, int row, QWidget* parent)
    : QObject(parent), key_(key) {
    auto* name = new QLabel(label, parent);
    name->setToolTip(tooltip);
    entry_ = new QLineEdit(parent);
    entry_->setObjectName(QStringLiteral("entry_%1").arg(key));
    entry_->setToolTip(tooltip);
    entry_->setClearButtonEnabled(true);
    state_ = new QLabel(parent);
    state_->setObjectName(QStringLiteral("state_%1").arg(key));
    state_->setMinimumWidth(48);
    state_->setToolTip(QStringLiteral("Whether this step changes anything (off when empty)."));
    note_ = new QLabel(parent);
    note_->setObjectName(QStringLiteral("note_%1").arg(key));
    note_->setWordWrap(true);
    note_->setStyleSheet(QStringLiteral("color: #555555;"));
    note_->setVisible(false);
    error_ = new QLabel(parent);
    error_->setObjectName(QStringLiteral("error_%1").arg(key));
    error_->setWordWrap(true);
    error_->setStyleSheet(QStringLiteral("color: #B00020;"));
    error_->setVisible(false);
    auto* lines = new QVBoxLayout;
    lines->setContentsMargins(0, 0, 0, 0);
    lines->setSpacing(0);
    lines->addWidget(note_);
    lines->addWidget(error_);
    grid->addWidget(name, row, 0);
    grid->addWidget(entry_, row, 1, 1, 2);
    grid->addWidget(state_, row, 3);
    grid->addLayout(lines, row + 1, 0, 1, 4);
    connect(entry_, &QLineEdit::editingFinished, this, [this] {
        // editingFinished also fires on focus loss: an unchanged text is no edit.
        if (entry_->text() == shown_ && error().isEmpty()) return;
        shown_ = entry_->text();
        emit textEdited(key_, entry_->text());
    });
}

void TextParameterControl::setText(const QString& text) {
    shown_ = text;
    entry_->setText(text);
    showError(QString());
}

void TextParameterControl::setState(const QString& text, bool active) {
    state_->setText(text);
    state_->setStyleSheet(active ? QStringLiteral("color: #0072B2; font-weight: bold;")
                                 : QStringLiteral("color: #777777; font-style: italic;"));
}

void TextParameterControl::showError(const QString& message) {
    error_->setText(message);
    error_->setVisible(!message.isEmpty());
    entry_->setStyleSheet(message.isEmpty() ? QString() : QStringLiteral("border: 2px solid #B00020;"));
}

void TextParameterControl::showNote(const QString& note) {
    note_->setText(note);
    note_->setVisible(!note.isEmpty());
}

}  // namespace samplescope::ui
