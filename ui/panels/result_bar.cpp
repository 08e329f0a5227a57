#include "ui/panels/result_bar.h"

#include <QApplication>
#include <QCursor>
#include <QEvent>
#include <QResizeEvent>
#include <QToolTip>

#include "engine/base/input_error.h"
#include "ui/common/count_text.h"

namespace samplescope::ui {

namespace {


// A term of the line: hovering it shows its tip (the link is never followed).
QString term(const QString& key, const QString& text) {
    return QStringLiteral("<a href='%1' style='color:#1a1a1a; text-decoration:none'>%2</a>").arg(key, text);
}

}  // namespace

ResultBar::ResultBar(QWidget* parent) : QLabel(parent) {
    setObjectName(QStringLiteral("result_bar"));
    setTextFormat(Qt::RichText);
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
    // Wraps rather than holding the window wider than a 1280-pixel screen.
    setWordWrap(true);
    setStyleSheet(QStringLiteral("#result_bar { background: #EEF5FB; border: 1px solid #0072B2; padding: 4px 6px; }"));
    applyFont();
    connect(this, &QLabel::linkHovered, this, [this](const QString& key) {
        if (key.isEmpty()) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(QCursor::pos(), tips_.value(key), this);
        }
    });
}

// A little larger than the window's text, following its size (View > Presentation font size).
void ResultBar::applyFont() {
    QFont larger = QApplication::font();
    larger.setPointSizeF(larger.pointSizeF() * 1.15);
    setFont(larger);
}

bool ResultBar::event(QEvent* event) {
    const bool handled = QLabel::event(event);
    if (event->type() == QEvent::ApplicationFontChange) applyFont();
    return handled;
}

void ResultBar::showView(const std::shared_ptr<const TraceView>& view) {
    if (!view) return;
    const SampleTrace& trace = *view->trace;
    const QString label = QString::fromStdString(view->labels->label(trace.token)).toHtmlEscaped();
    const QString id = groupedNumber(trace.token);
    const double q = trace.stage(Stage::Softmax).prob_of(trace.token);
    tips_.clear();
    tips_[QStringLiteral("token")] =
        trace.greedy ? QStringLiteral("Greedy (T = 0): the largest logit after the penalties, ties to the lowest id. "
                                      "%1, id %2.").arg(label, id)
                     : QStringLiteral("The token the next draw picks: the first id, in ascending id order, whose "
                                      "cumulative final q passes u. %1, id %2.").arg(label, id);
    tips_[QStringLiteral("q")] = QStringLiteral("Its probability in the final distribution, after every stage: the "
                                                "chance that a draw picks it.<br>Exact: %1").arg(exactNumber(q));
    tips_[QStringLiteral("logprob")] =
        QStringLiteral("The contract's logprob: log-softmax over all V ids of the logits after the penalties, "
                       "<b>before</b> temperature and truncation (docs/contract.md, section 2). Engines report "
                       "other modes: Compare pipelines, Logprobs by engine.<br>Exact: %1").arg(exactNumber(trace.logprob));
    if (trace.u) {
        tips_[QStringLiteral("u")] = QStringLiteral("The uniform in [0, 1) this draw takes from the seed's stream (draw "
                                                    "number %1 of the request).<br>Exact: %2")
                                         .arg(trace.draws_before + 1)
                                         .arg(exactNumber(*trace.u));
    }
    tips_[QStringLiteral("kept")] = QStringLiteral("The final kept set: the ids every truncation stage kept, out of the "
                                                   "V ids of the row. Only these can be drawn.");
    tips_[QStringLiteral("seed")] = QStringLiteral("The request's seed: its draws come from stream(seed, 4) (PCG32).");
    tips_[QStringLiteral("draws")] = QStringLiteral("Uniforms taken before and after this step: one per sampled token, "
                                                    "none when greedy (the contract's draw accounting).");

    const QString how = trace.greedy ? QStringLiteral("Greedy picks") : QStringLiteral("Next draw picks");
    QString first = QStringLiteral("%1 %2 (id %3) &nbsp;·&nbsp; %4")
                        .arg(how, term(QStringLiteral("token"), QStringLiteral("<b style='color:#D55E00'>%1</b>").arg(label)), id,
                             term(QStringLiteral("q"), QStringLiteral("q %1").arg(QString::number(q, 'g', 4))));
    first += trace.u ? QStringLiteral(" &nbsp;·&nbsp; %1").arg(term(QStringLiteral("u"), QStringLiteral("u %1").arg(QString::number(*trace.u, 'g', 5))))
                     : QStringLiteral(" &nbsp;·&nbsp; no draw (greedy)");
    const QString second =
        QStringLiteral("%1 &nbsp;·&nbsp; %2 &nbsp;·&nbsp; %3 &nbsp;·&nbsp; %4")
            .arg(term(QStringLiteral("logprob"), QStringLiteral("logprob %1 <i>(after penalties, before T)</i>")
                                                     .arg(QString::number(trace.logprob, 'g', 5))),
                 term(QStringLiteral("kept"), QStringLiteral("kept %1 of V = %2").arg(groupedNumber(trace.final_kept().size()),
                                                                                       groupedNumber(trace.vocab_size))),
                 term(QStringLiteral("seed"), QStringLiteral("seed %1").arg(trace.seed)),
                 term(QStringLiteral("draws"), QStringLiteral("draws %1 → %2").arg(trace.draws_before).arg(trace.draws_consumed)));
    setText(first + QStringLiteral("<br><span style='color:#333333'>") + second + QStringLiteral("</span>"));
    emit lineChanged();
}

ResultBarHolder::ResultBarHolder(ResultBar* bar, QWidget* parent) : QWidget(parent), bar_(bar) {
    bar_->setParent(this);  // which hides it: shown again below
    bar_->show();
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
    // The bar's own updateGeometry() stops here (no layout to invalidate): a
    // new height is asked of the window's layout only when the text needs one.
    connect(bar_, &ResultBar::lineChanged, this, &ResultBarHolder::checkHeight);
}

void ResultBarHolder::checkHeight() {
    if (bar_->heightForWidth(width()) != height()) updateGeometry();
}

bool ResultBarHolder::event(QEvent* event) {
    // Posted by the bar's updateGeometry() to a parent without a layout: a new
    // font (View > Presentation font size) may need a new height.
    if (event->type() == QEvent::LayoutRequest) checkHeight();
    return QWidget::event(event);
}

void ResultBarHolder::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    bar_->setGeometry(rect());
}

}  // namespace samplescope::ui
