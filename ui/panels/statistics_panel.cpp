#include "ui/panels/statistics_panel.h"

#include <QGridLayout>
#include <QLocale>
#include <QScrollArea>
#include <QVBoxLayout>

#include "engine/base/input_error.h"

namespace samplescope::ui {

StatisticsPanel::StatisticsPanel(QWidget* parent) : QGroupBox(QStringLiteral("Statistics"), parent) {
    setObjectName(QStringLiteral("statistics_panel"));
    // The table and its footer scroll inside the box when the dock is short,
    // rather than being squeezed over each other.
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    scroll_ = new QScrollArea(this);
    scroll_->setObjectName(QStringLiteral("statistics_scroll"));
    scroll_->setFrameShape(QFrame::NoFrame);
    scroll_->setWidgetResizable(true);
    scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    outer->addWidget(scroll_);
    content_ = new QWidget(scroll_);
    content_->setObjectName(QStringLiteral("statistics_content"));
    scroll_->setWidget(content_);
    auto* grid = new QGridLayout(content_);
    grid->setVerticalSpacing(2);
    const QStringList rows{QStringLiteral("Entropy (bits)"), QStringLiteral("Perplexity"), QStringLiteral("Top-1 probability"),
                           QStringLiteral("Kept ids"), QStringLiteral("Kept mass")};
    const QStringList tips{
        QStringLiteral("-sum q log2 q over the distribution"), QStringLiteral("2^entropy: the effective number of choices"),
        QStringLiteral("max q"),
        QStringLiteral("Ids in the distribution: before truncation the candidates it receives (every id with a finite logit), "
                       "after it the final kept set. A kept id's q may round to 0, so this is not a count of q > 0."),
        QStringLiteral("Share of the pre-truncation distribution that the final kept set carries")};
    auto* before = new QLabel(QStringLiteral("<b>before truncation</b>"), content_);
    before->setToolTip(QStringLiteral("After penalties and temperature, before top-k, top-p and min-p"));
    auto* after = new QLabel(QStringLiteral("<b>after truncation</b>"), content_);
    after->setToolTip(QStringLiteral("The final distribution the draw uses"));
    grid->addWidget(before, 0, 1, Qt::AlignRight);
    grid->addWidget(after, 0, 2, Qt::AlignRight);
    for (int r = 0; r < 5; ++r) {
        auto* name = new QLabel(rows[r], content_);
        name->setToolTip(tips[r]);
        grid->addWidget(name, r + 1, 0);
        for (int c = 0; c < 2; ++c) {
            cells_[r][c] = new QLabel(QStringLiteral("-"), content_);
            cells_[r][c]->setObjectName(QStringLiteral("stat_%1_%2").arg(r).arg(c));
            cells_[r][c]->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
            cells_[r][c]->setTextInteractionFlags(Qt::TextSelectableByMouse);
            grid->addWidget(cells_[r][c], r + 1, c + 1);
        }
    }
    footer_ = new QLabel(content_);
    footer_->setObjectName(QStringLiteral("statistics_footer"));
    footer_->setWordWrap(true);
    footer_->setStyleSheet(QStringLiteral("color: #555555;"));
    grid->addWidget(footer_, 6, 0, 1, 3);
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(2, 1);
    grid->setRowStretch(7, 1);
}

void StatisticsPanel::showView(const std::shared_ptr<const TraceView>& view) {
    if (!view) return;
    const QLocale english(QLocale::English);
    const auto& stats = view->stats;
    const DistributionStats* sides[2] = {&stats.before, &stats.after};
    for (int c = 0; c < 2; ++c) {
        cells_[0][c]->setText(QString::number(sides[c]->entropy_bits, 'f', 4));
        cells_[1][c]->setText(QString::number(sides[c]->perplexity, 'g', 5));
        cells_[2][c]->setText(QString::number(sides[c]->top1_prob, 'g', 5));
        cells_[3][c]->setText(english.toString(static_cast<qulonglong>(sides[c]->count)));
    }
    cells_[4][0]->setText(QStringLiteral("1"));
    cells_[4][1]->setText(QString::number(stats.kept_mass, 'g', 5));
    for (int r = 0; r < 5; ++r) {
        for (int c = 0; c < 2; ++c) cells_[r][c]->setToolTip(cells_[r][c]->text());
    }
    cells_[4][1]->setToolTip(QString::fromStdString(format_number(stats.kept_mass)));
    footer_->setText(view->trace->greedy ? QStringLiteral("Greedy: no truncation; the argmax takes all the mass.")
                                         : QStringLiteral("Truncation kept %1 of the %2 candidates (V = %3), carrying "
                                                          "%4% of the mass.")
                                               .arg(english.toString(static_cast<qulonglong>(stats.after.count)),
                                                    english.toString(static_cast<qulonglong>(stats.before.count)),
                                                    english.toString(static_cast<qulonglong>(view->trace->vocab_size)),
                                                    QString::number(stats.kept_mass * 100.0, 'f', 2)));
}

QString StatisticsPanel::cell(int row, int column) const { return cells_[row][column]->text(); }

}  // namespace samplescope::ui
