#include "ui/common/error_banner.h"

#include <QHBoxLayout>
#include <QToolButton>

namespace samplescope::ui {

ErrorBanner::ErrorBanner(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("error_banner"));
    text_ = new QLabel(this);
    text_->setObjectName(QStringLiteral("error_text"));
    text_->setWordWrap(true);
    text_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* close = new QToolButton(this);
    close->setText(QStringLiteral("Dismiss"));
    close->setAutoRaise(true);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 4, 4, 4);
    layout->addWidget(text_, 1);
    layout->addWidget(close);
    connect(close, &QToolButton::clicked, this, &QWidget::hide);
    setWarningStyle(false);
    hide();
}

// Red for refused input, amber for accepted input with a caveat; the words
// ("Refused:" / "Warning:") say it too, for readers who cannot tell the colours apart.
void ErrorBanner::setWarningStyle(bool warning) {
    warning_ = warning;
    setStyleSheet(warning ? QStringLiteral("#error_banner { background: #FFF4DC; border: 1px solid #B26B00; border-left: 6px solid #B26B00; }"
                                           "#error_banner QLabel { color: #5C3700; }")
                          : QStringLiteral("#error_banner { background: #FDECEA; border: 1px solid #B00020; border-left: 6px solid #B00020; }"
                                           "#error_banner QLabel { color: #6B0012; }"));
}

void ErrorBanner::showError(const QString& message) {
    setWarningStyle(false);
    text_->setText(QStringLiteral("<b>Refused:</b> %1").arg(message.toHtmlEscaped()));
    show();
}

void ErrorBanner::showWarning(const QString& message) {
    setWarningStyle(true);
    text_->setText(QStringLiteral("<b>Warning:</b> %1").arg(message.toHtmlEscaped()));
    show();
}

}  // namespace samplescope::ui
