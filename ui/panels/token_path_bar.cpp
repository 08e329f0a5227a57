#include "ui/panels/token_path_bar.h"

#include "ui/common/count_text.h"
#include "ui/common/token_path.h"

namespace samplescope::ui {

TokenPathBar::TokenPathBar(QWidget* parent) : QLabel(parent) {
    setObjectName(QStringLiteral("token_path"));
    setWordWrap(true);
    setTextFormat(Qt::RichText);
    setContentsMargins(6, 2, 6, 2);
    setStyleSheet(QStringLiteral("QLabel#token_path { background: #F2F6FA; border-left: 3px solid #0072B2; }"));
    setToolTip(QStringLiteral("The selected token's number at each stage that changed it, and whether each truncation "
                              "kept it. Click a bar or a table row to select another token."));
    connect(this, &QLabel::linkActivated, this, [this](const QString&) { emit clearRequested(); });
    hide();
}

void TokenPathBar::showToken(const std::shared_ptr<const TraceView>& view, std::int32_t id) {
    if (!view || id < 0 || static_cast<std::size_t>(id) >= view->trace->vocab_size) {
        plain_.clear();
        clear();
        hide();
        return;
    }
    const auto steps = tokenPath(*view->trace, id);
    const QString name = QString::fromStdString(view->labels->label(id));
    QString html = QStringLiteral("<b>Selected %1</b> (id %2): ").arg(name.toHtmlEscaped(), groupedNumber(id));
    plain_ = QStringLiteral("Selected %1 (id %2): ").arg(name, groupedNumber(id));
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const QString text = QString::fromStdString(steps[i].text);
        if (i > 0) {
            html += QStringLiteral(" &rarr; ");
            plain_ += QStringLiteral(" -> ");
        }
        html += steps[i].dropped ? QStringLiteral("<span style='color:#B00020'><b>%1</b></span>").arg(text.toHtmlEscaped())
                                 : text.toHtmlEscaped();
        plain_ += text;
    }
    html += QStringLiteral("&nbsp;&nbsp;<a href='clear'>clear</a>");
    setText(html);
    show();
}

}  // namespace samplescope::ui
