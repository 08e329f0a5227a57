// One sampling parameter as a control: a slider over the table's convenient
// range, an exact entry box (any valid value, also outside the slider's range)
// and an "on"/"off" badge, on one grid row. A refused value never adds a row:
// the box gets a red border and the message goes to the panel's reserved
// message line (errorChanged), so no widget moves. Generated from an entry of
// kParams.
#pragma once

#include <optional>

#include <QLabel>
#include <QLineEdit>
#include <QSlider>
#include <QWidget>

#include "engine/core/sampling_params.h"

class QGridLayout;

namespace samplescope::ui {

// An entry box that reports Escape and the loss of focus (after
// QLineEdit's own editingFinished), so its owner can restore the value in force.
class EntryBox : public QLineEdit {
    Q_OBJECT
public:
    using QLineEdit::QLineEdit;

signals:
    void escapePressed();
    void focusLeft();

protected:
    void keyPressEvent(QKeyEvent* event) override;
    void focusOutEvent(QFocusEvent* event) override;
};

// One line of text that never changes its size with its text: it is elided to
// the width the layout gives it, the full text in its tooltip. Height: one line.
class MessageLine : public QWidget {
    Q_OBJECT
public:
    explicit MessageLine(QWidget* parent = nullptr);
    void setMessage(const QString& text, const QColor& color, bool italic = false);
    const QString& text() const { return text_; }
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QString text_;
    QColor color_;
    bool italic_ = false;
};

// The width of an entry box that shows `sample` whole (font metrics and the style's frame).
int entryWidthFor(const QLineEdit* entry, const QString& sample);
// The width every badge gets, so a badge's text never moves a column (the contract's knobs' badges, or
// llama.cpp's group's).
int badgeWidth(const QLabel* badge, bool contract);

class ParameterControl : public QObject {
    Q_OBJECT
public:
    // Adds its widgets to `grid` at row `row`.
    ParameterControl(const ParamInfo& info, QGridLayout* grid, int row, QWidget* parent);

    const ParamInfo& info() const { return info_; }
    QString key() const;
    void setValue(double value);  // shows a value without emitting
    double value() const { return value_; }
    void setState(const QString& text, bool active);
    // Why this knob cannot change anything now (knob_notes.h); empty: it can.
    // Shown as the badge "no effect" with the reason as its tooltip.
    void setNote(const QString& reason);
    const QString& note() const { return note_; }
    void showError(const QString& message);  // empty clears
    // The message for the text in the box while it is refused, else empty.
    const QString& error() const { return error_; }
    // Back to the value in force: the box shows it and the error is cleared.
    void restore();

    QSlider* slider() const { return slider_; }
    QLineEdit* entry() const { return entry_; }
    QLabel* stateLabel() const { return state_; }

signals:
    void valueEdited(samplescope::Param param, double value);
    void errorChanged(const QString& message);
    // Focus left a refused box: it shows the value in force again; `message` says so.
    void restoredAfterRefusal(const QString& message);
    void hovered(bool inside);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void onSlider(int position);
    void onEntry();
    void showBadge();
    QString tooltip() const;
    double step() const;
    int positionOf(double value) const;

    const ParamInfo& info_;
    QLabel* name_;
    QSlider* slider_;
    EntryBox* entry_;
    QLabel* state_;
    QString state_text_;
    bool state_active_ = false;
    QString note_;
    QString error_;
    double value_;
};

// The message for a typed value the contract refuses: param_error's words,
// quoting the text as typed ("got \"1e999\"", never the parsed "inf").
QString typedValueError(const ParamInfo& info, const QString& typed);

// A list-valued parameter (logit bias, DRY's sequence breakers) as one line
// of text: a label, an entry and a note line (what the text resolved to). A
// refused text gets a red border and its message goes to the panel's message
// line (errorChanged), like ParameterControl's.
class TextParameterControl : public QObject {
    Q_OBJECT
public:
    // Adds its widgets to `grid` at rows `row` (label, entry, badge) and `row + 1` (note).
    TextParameterControl(const QString& key, const QString& label, const QString& tooltip, QGridLayout* grid, int row,
                         QWidget* parent);

    const QString& key() const { return key_; }
    void setText(const QString& text);  // shows text (now in force) without emitting
    void accept();                      // the text in the box is now in force
    void restore();                     // back to the text in force, error cleared
    void setState(const QString& text, bool active);
    void showError(const QString& message);  // empty clears
    void showNote(const QString& note);      // empty clears
    const QString& error() const { return error_; }
    QString note() const { return note_->text(); }
    QLineEdit* entry() const { return entry_; }
    QLabel* stateLabel() const { return state_; }

signals:
    void textEdited(const QString& key, const QString& text);
    void errorChanged(const QString& message);

private:
    QString key_;
    EntryBox* entry_;
    QLabel* state_;
    MessageLine* note_;
    QString error_;
    QString shown_;
    QString in_force_;
};

// Parses a number typed by the user: the whole text (trimmed) must be a number;
// "nan" and "inf" parse, so the contract's checks answer them.
std::optional<double> parseNumberText(const QString& text);

}  // namespace samplescope::ui
