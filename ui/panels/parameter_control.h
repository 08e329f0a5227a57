// One sampling parameter as a control: a slider over the table's convenient
// range, an exact entry box (any valid value, also outside the slider's range),
// an "on"/"off" badge and an error line that shows the contract's message in
// place when a typed value is refused. Generated from an entry of kParams.
#pragma once

#include <optional>

#include <QLabel>
#include <QLineEdit>
#include <QSlider>
#include <QWidget>

#include "engine/core/sampling_params.h"

class QGridLayout;

namespace samplescope::ui {

class ParameterControl : public QObject {
    Q_OBJECT
public:
    // Adds its widgets to `grid` at rows `row` (controls) and `row + 1` (error line).
    ParameterControl(const ParamInfo& info, QGridLayout* grid, int row, QWidget* parent);

    const ParamInfo& info() const { return info_; }
    void setValue(double value);  // shows a value without emitting
    void setState(const QString& text, bool active);
    void showError(const QString& message);  // empty clears
    QString error() const { return error_->isVisible() ? error_->text() : QString(); }

    QSlider* slider() const { return slider_; }
    QLineEdit* entry() const { return entry_; }
    QLabel* stateLabel() const { return state_; }

signals:
    void valueEdited(samplescope::Param param, double value);

private:
    void onSlider(int position);
    void onEntry();
    double step() const;
    int positionOf(double value) const;

    const ParamInfo& info_;
    QLabel* name_;
    QSlider* slider_;
    QLineEdit* entry_;
    QLabel* state_;
    QLabel* error_;
    double value_;
};

// A list-valued parameter (logit bias, DRY's sequence breakers) as one line
// of text: a label, an entry, a note line (what the text resolved to) and an
// error line that shows the engine's message in place when the text is refused.
class TextParameterControl : public QObject {
    Q_OBJECT
public:
    // Adds its widgets to `grid` at rows `row` (label, entry, badge) and `row + 1` (note and error).
    TextParameterControl(const QString& key, const QString& label, const QString& tooltip, QGridLayout* grid, int row,
                         QWidget* parent);

    const QString& key() const { return key_; }
    void setText(const QString& text);  // shows text without emitting
    void setState(const QString& text, bool active);
    void showError(const QString& message);  // empty clears
    void showNote(const QString& note);      // empty clears
    QString error() const { return error_->isHidden() ? QString() : error_->text(); }
    QString note() const { return note_->isHidden() ? QString() : note_->text(); }
    QLineEdit* entry() const { return entry_; }
    QLabel* stateLabel() const { return state_; }

signals:
    void textEdited(const QString& key, const QString& text);

private:
    QString key_;
    QLineEdit* entry_;
    QLabel* state_;
    QLabel* note_;
    QLabel* error_;
    QString shown_;
};

// Parses a number typed by the user: the whole text (trimmed) must be a number;
// "nan" and "inf" parse, so the contract's checks answer them.
std::optional<double> parseNumberText(const QString& text);

}  // namespace samplescope::ui
