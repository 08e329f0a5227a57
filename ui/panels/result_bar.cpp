#include "ui/panels/result_bar.h"

#include <QLocale>

#include "engine/base/input_error.h"

namespace samplescope::ui {

ResultBar::ResultBar(QWidget* parent) : QLabel(parent) {
    setObjectName(QStringLiteral("result_bar"));
    setTextFormat(Qt::RichText);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Wraps rather than holding the window wider than a 1280-pixel screen.
    setWordWrap(true);
    setStyleSheet(QStringLiteral("#result_bar { background: #EEF5FB; border: 1px solid #0072B2; padding: 6px; font-size: 11pt; }"));
}

void ResultBar::showView(const std::shared_ptr<const TraceView>& view) {
    if (!view) return;
    const SampleTrace& trace = *view->trace;
    const QString label = QString::fromStdString(view->labels->label(trace.token)).toHtmlEscaped();
    const QString how = trace.greedy ? QStringLiteral("Greedy picks") : QStringLiteral("Next draw picks");
    const QString u = trace.u ? QStringLiteral("u = %1").arg(QString::fromStdString(format_number(*trace.u)))
                              : QStringLiteral("no draw (greedy)");
    setText(QStringLiteral("%1 <b style='color:#D55E00'>%2</b> (id %3) &nbsp;·&nbsp; logprob %4 &nbsp;·&nbsp; %5 "
                           "&nbsp;·&nbsp; kept %6 of V = %7 &nbsp;·&nbsp; seed %8 &nbsp;·&nbsp; draws %9")
                .arg(how, label, QString::number(trace.token), QString::fromStdString(format_number(trace.logprob)), u,
                     QLocale(QLocale::English).toString(static_cast<qulonglong>(trace.final_kept().size())),
                     QLocale(QLocale::English).toString(static_cast<qulonglong>(trace.vocab_size)),
                     QString::number(trace.seed),
                     QStringLiteral("%1 → %2").arg(trace.draws_before).arg(trace.draws_consumed)));
}

}  // namespace samplescope::ui
