#include "ui/error_banner.h"

#include <QHBoxLayout>
#include <QToolButton>

namespace samplescope::ui {

ErrorBanner::ErrorBanner(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("error_banner"));
    setStyleSheet(QStringLiteral("#error_banner { background: #FDECEA; border: 1px solid #B00020; border-left: 6px solid #B00020; }"
                                 "#error_banner QLabel { color: #6B0012; }"));
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
    hide();
}

void ErrorBanner::show_error(const QString& message) {
    text_->setText(QStringLiteral("<b>Refused:</b> %1").arg(message.toHtmlEscaped()));
    show();
}

}  // namespace samplescope::ui
