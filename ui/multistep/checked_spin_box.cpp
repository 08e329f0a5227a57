#include "ui/multistep/checked_spin_box.h"

#include <QKeyEvent>
#include <QLineEdit>
#include <QRegularExpression>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"

namespace samplescope::ui {

CheckedSpinBox::CheckedSpinBox(std::string field, std::string name, QWidget* parent)
    : QSpinBox(parent), field_(std::move(field)), name_(std::move(name)) {
    // The value moves at Enter, not at each digit: "99" typed into [1, 32] must not leave 9 behind.
    setKeyboardTracking(false);
}

QString CheckedSpinBox::typed() const {
    QString text = lineEdit()->text();
    if (text.startsWith(prefix())) text.remove(0, prefix().size());
    if (text.endsWith(suffix())) text.chop(suffix().size());
    return text.trimmed();
}

QString CheckedSpinBox::check() const {
    try {
        parse_int_in_range(typed().toStdString(), field_, name_, minimum(), maximum());
    } catch (const InputError& error) {
        return QString::fromUtf8(error.what());
    }
    return {};
}

QValidator::State CheckedSpinBox::validate(QString& text, int& pos) const {
    const QValidator::State state = QSpinBox::validate(text, pos);
    if (state != QValidator::Invalid) return state;
    // An integer out of range stays while typing; Enter refuses it with the message.
    QString bare = text;
    if (bare.startsWith(prefix())) bare.remove(0, prefix().size());
    if (bare.endsWith(suffix())) bare.chop(suffix().size());
    static const QRegularExpression integer(QStringLiteral("^\\s*[-+]?\\d{1,12}\\s*$"));
    return integer.match(bare).hasMatch() ? QValidator::Intermediate : QValidator::Invalid;
}

void CheckedSpinBox::refuseIfBad() {
    const QString message = check();
    if (!message.isEmpty()) emit refused(message);
}

void CheckedSpinBox::keyPressEvent(QKeyEvent* event) {
    if (event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) refuseIfBad();
    QSpinBox::keyPressEvent(event);
}

void CheckedSpinBox::focusOutEvent(QFocusEvent* event) {
    refuseIfBad();
    QSpinBox::focusOutEvent(event);
}

}  // namespace samplescope::ui
