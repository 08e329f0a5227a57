#include "ui/pipelines/stage_strip.h"

#include <algorithm>

#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>

namespace samplescope {

namespace {

QString text(std::string_view view) { return QString::fromUtf8(view.data(), static_cast<qsizetype>(view.size())); }

}  // namespace

StageStrip::StageStrip(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    heading_ = new QLabel(this);
    heading_->setStyleSheet(QStringLiteral("font-weight: bold;"));
    layout->addWidget(heading_);
    // The boxes scroll sideways where they do not fit, so a long pipeline never
    // widens the view past a laptop's screen.
    area_ = new QScrollArea(this);
    area_->setFrameShape(QFrame::NoFrame);
    area_->setWidgetResizable(true);
    area_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    area_->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    content_ = new QWidget(area_);
    boxes_ = new QHBoxLayout(content_);
    boxes_->setContentsMargins(0, 0, 0, 0);
    boxes_->setSpacing(4);
    area_->setWidget(content_);
    layout->addWidget(area_);
    fitHeight();
}

void StageStrip::fitHeight() {
    // The boxes' height when each is as narrow as it may be (long rule names wrap), plus room for the scroll bar.
    int boxes = content_->minimumSizeHint().height();
    for (const auto* label : labels_) boxes = std::max(boxes, label->heightForWidth(label->minimumWidth()));
    area_->setFixedHeight(boxes + area_->horizontalScrollBar()->sizeHint().height() + 2);
}

void StageStrip::clear(const QString& message) {
    // Hidden at once: deletion waits for the event loop, which a screenshot
    // taken before exec() never reaches.
    for (auto* label : labels_) {
        label->hide();
        label->deleteLater();
    }
    labels_.clear();
    titles_.clear();
    while (auto* item = boxes_->takeAt(0)) {
        if (item->widget()) {
            item->widget()->hide();
            item->widget()->deleteLater();
        }
        delete item;
    }
    heading_->setText(message);
    fitHeight();
}

void StageStrip::setTrace(const QString& heading, const PipelineTrace& trace) {
    clear();
    heading_->setText(heading);
    const auto& stages = trace.trace.stages;
    for (std::size_t i = 0; i < stages.size(); ++i) {
        const auto& stage = stages[i];
        const auto& report = trace.reports[i];
        QString body = QStringLiteral("<b>%1</b>").arg(text(stage_info(stage.stage).title).toHtmlEscaped());
        if (report.rule) body += QStringLiteral("<br><small>%1</small>").arg(text(rule_info(*report.rule).title).toHtmlEscaped());
        body += QStringLiteral("<br>%1 %2")
                    .arg(QLocale(QLocale::English).toString(static_cast<qulonglong>(stage.kept_count())), tr("kept"));
        QStringList flags;
        if (report.joint) flags << tr("joint");
        if (report.tie_at_boundary) flags << tr("tie at the boundary");
        if (report.near_boundary) flags << tr("near boundary");
        if (!flags.isEmpty()) body += QStringLiteral("<br><small><i>%1</i></small>").arg(flags.join(QStringLiteral(", ")));
        auto* label = new QLabel(body, content_);
        label->setTextFormat(Qt::RichText);
        label->setAlignment(Qt::AlignCenter);
        label->setWordWrap(true);  // a rule's long name wraps rather than widening the strip
        titles_.append({text(stage_info(stage.stage).title), report.rule ? text(rule_info(*report.rule).title) : QString()});
        QString tip = text(stage_info(stage.stage).summary);
        if (report.rule) tip += QStringLiteral("\n") + text(rule_info(*report.rule).summary);
        if (!report.note.empty()) tip += QStringLiteral("\n") + QString::fromStdString(report.note);
        label->setToolTip(tip);
        const bool flagged = report.tie_at_boundary || report.near_boundary;
        label->setStyleSheet(QStringLiteral("QLabel { border: 1px solid %1; border-radius: 4px; padding: 3px; "
                                            "background: %2; color: %3; }")
                                 .arg(flagged ? QStringLiteral("#c77700") : QStringLiteral("#8a9bb0"),
                                      stage.active ? QStringLiteral("#e8f0fb") : QStringLiteral("#f4f4f4"),
                                      stage.active ? QStringLiteral("#111") : QStringLiteral("#999")));
        if (!labels_.isEmpty()) {
            auto* arrow = new QLabel(QStringLiteral("\u2192"), content_);
            arrow->setStyleSheet(QStringLiteral("color: #777;"));
            boxes_->addWidget(arrow);
        }
        boxes_->addWidget(label);
        labels_.append(label);
    }
    boxes_->addStretch(1);
    fitBoxes();
}

// Each box never narrower than its longest word: a word cannot wrap, and a narrower box cuts it ("Temperatu").
void StageStrip::fitBoxes() {
    for (qsizetype i = 0; i < labels_.size() && i < titles_.size(); ++i) {
        QLabel* label = labels_[i];
        QFont bold = label->font();
        bold.setBold(true);
        const QFontMetrics title_metrics(bold);
        const QFontMetrics text_metrics(label->font());
        int widest = 0;
        for (const QString& word : titles_[i].first.split(QLatin1Char(' '))) widest = std::max(widest, title_metrics.horizontalAdvance(word));
        for (const QString& word : titles_[i].second.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            widest = std::max(widest, text_metrics.horizontalAdvance(word));
        }
        // The style sheet's padding and border, and a little air.
        label->setMinimumWidth(std::max(78, widest + 2 * 3 + 2 + 8));
    }
    fitHeight();
}

void StageStrip::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) fitBoxes();
}

QStringList StageStrip::boxTexts() const {
    QStringList texts;
    for (const auto* label : labels_) {
        QString plain = label->text();
        plain.replace(QStringLiteral("<br>"), QStringLiteral(" / "));
        plain.remove(QRegularExpression(QStringLiteral("<[^>]*>")));
        texts << plain;
    }
    return texts;
}

}  // namespace samplescope
