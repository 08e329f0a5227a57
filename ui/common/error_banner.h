// A banner at the top of the window for messages that belong to no single
// field: errors (a file that could not be read, a refused paste or drop) in
// the contract's words, saying that the previous input is still there; and
// warnings (input accepted with a caveat, such as a vocabulary of another size).
#pragma once

#include <QFrame>
#include <QLabel>

namespace samplescope::ui {

class ErrorBanner : public QFrame {
    Q_OBJECT
public:
    explicit ErrorBanner(QWidget* parent = nullptr);
    void showError(const QString& message);
    void showWarning(const QString& message);
    QString message() const { return text_->text(); }
    bool isWarning() const { return warning_; }

private:
    void setWarningStyle(bool warning);

    QLabel* text_;
    bool warning_ = false;
};

}  // namespace samplescope::ui
