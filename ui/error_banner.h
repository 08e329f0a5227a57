// A banner at the top of the window for errors that belong to no single field
// (a file that could not be read, a refused paste or drop). It says what was
// refused in the contract's words and that the previous input is still there.
#pragma once

#include <QFrame>
#include <QLabel>

namespace samplescope::ui {

class ErrorBanner : public QFrame {
    Q_OBJECT
public:
    explicit ErrorBanner(QWidget* parent = nullptr);
    void show_error(const QString& message);
    QString message() const { return text_->text(); }

private:
    QLabel* text_;
};

}  // namespace samplescope::ui
