// A spin box that refuses out-of-range input aloud: QSpinBox's own validator
// silently swallows a typed "0" or "99" outside its range, so a user never
// learns why nothing happened. This one lets any integer-looking text stand
// while typing and, on Enter or focus loss, emits refused() with the project's
// one line (parse_int_in_range's "NAME must be an integer in [lo, hi], got
// ...") before the box goes back to its previous value.
#pragma once

#include <string>

#include <QSpinBox>

namespace samplescope::ui {

class CheckedSpinBox : public QSpinBox {
    Q_OBJECT
public:
    // `field` and `name`: the InputError's field and the name its line gives the value ("width").
    CheckedSpinBox(std::string field, std::string name, QWidget* parent = nullptr);

    // The typed text's InputError line, or "" when it is a value in range (or unchanged).
    QString check() const;

signals:
    void refused(const QString& message);

protected:
    QValidator::State validate(QString& text, int& pos) const override;
    void keyPressEvent(QKeyEvent* event) override;
    void focusOutEvent(QFocusEvent* event) override;

private:
    QString typed() const;
    void refuseIfBad();

    std::string field_;
    std::string name_;
};

}  // namespace samplescope::ui
