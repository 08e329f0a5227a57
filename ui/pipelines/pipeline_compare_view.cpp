#include "ui/pipelines/pipeline_compare_view.h"

#include <QAbstractScrollArea>
#include <QCoreApplication>
#include <QEvent>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "engine/base/input_error.h"
#include "engine/io/token_display.h"
#include "engine/pipelines/pipeline_presets.h"
#include "ui/common/count_text.h"
#include "ui/common/cpu_state.h"
#include "ui/common/font_scale.h"
#include "ui/pipelines/pipeline_editor.h"
#include "ui/pipelines/stage_strip.h"

namespace samplescope {

namespace {

const QColor kColorA(0x2f, 0x6f, 0xb5);
const QColor kColorB(0xd0, 0x70, 0x1c);

QString probability(double q) { return QString::number(q, 'g', 6); }

// A full-size row may keep 128,256 ids: the table and plot show the most
// probable ones (a widget item per id would freeze the window), and id lists
// name the first few.
constexpr std::size_t kMaxRows = 200;
constexpr std::size_t kMaxListedIds = 24;
constexpr std::size_t kMaxTickLabels = 30;
constexpr std::size_t kMaxValueLabels = 12;

// The tokens on show: all of them in id order while they fit, else the
// kMaxRows with the largest probability under either pipeline, largest first.
std::vector<TokenComparison> shownTokens(const std::vector<TokenComparison>& tokens) {
    if (tokens.size() <= kMaxRows) return tokens;
    std::vector<TokenComparison> top(tokens);
    const auto larger = [](const TokenComparison& x, const TokenComparison& y) {
        const double px = std::max(x.prob_a, x.prob_b);
        const double py = std::max(y.prob_a, y.prob_b);
        return px != py ? px > py : x.id < y.id;
    };
    std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(kMaxRows), top.end(), larger);
    top.resize(kMaxRows);
    return top;
}

}  // namespace

PipelineCompareView::PipelineCompareView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    // The answer first, where a laptop's screen always shows it: the distance and whether the seed draws alike.
    verdict_ = new QLabel(this);
    verdict_->setObjectName(QStringLiteral("pipeline_verdict"));
    verdict_->setTextFormat(Qt::RichText);
    verdict_->setWordWrap(true);
    verdict_->setStyleSheet(QStringLiteral("#pipeline_verdict { background: #EEF5FB; border: 1px solid #0072B2; padding: 4px 6px; }"));
    layout->addWidget(verdict_);

    editors_row_ = new QWidget(this);
    auto* editors = new QHBoxLayout(editors_row_);
    editors->setContentsMargins(0, 0, 0, 0);
    editor_a_ = new PipelineEditor(tr("Pipeline A"), editors_row_);
    editor_b_ = new PipelineEditor(tr("Pipeline B"), editors_row_);
    editors->addWidget(editor_a_);
    editors->addWidget(editor_b_);
    layout->addWidget(editors_row_);
    editors_tabs_ = new QTabWidget(this);
    editors_tabs_->setObjectName(QStringLiteral("pipeline_editor_tabs"));
    editors_tabs_->setVisible(false);
    layout->addWidget(editors_tabs_);

    strip_a_ = new StageStrip(this);
    strip_b_ = new StageStrip(this);
    layout->addWidget(strip_a_);
    layout->addWidget(strip_b_);

    kept_ = new QLabel(this);
    kept_->setTextFormat(Qt::RichText);
    kept_->setWordWrap(true);
    layout->addWidget(kept_);
    notes_ = new QLabel(this);
    notes_->setTextFormat(Qt::RichText);
    notes_->setWordWrap(true);
    notes_->setVisible(false);
    layout->addWidget(notes_);
    order_note_ = new QLabel(this);
    order_note_->setObjectName(QStringLiteral("order_note"));
    order_note_->setWordWrap(true);
    order_note_->setStyleSheet(QStringLiteral("color: #555555;"));
    order_note_->setVisible(false);
    layout->addWidget(order_note_);
    defaults_note_ = new QLabel(this);
    defaults_note_->setObjectName(QStringLiteral("engine_defaults_note"));
    defaults_note_->setWordWrap(true);
    defaults_note_->setStyleSheet(QStringLiteral("color: #0072B2;"));
    defaults_note_->setVisible(false);
    layout->addWidget(defaults_note_);

    auto* split = new QSplitter(Qt::Horizontal, this);
    plot_tabs_ = new QTabWidget(split);
    plot_ = new QCustomPlot(plot_tabs_);
    plot_tabs_->addTab(plot_, tr("Final q"));
    plot_->setMinimumSize(360, 220);
    plot_->xAxis->setLabel(tr("token"));
    plot_->yAxis->setLabel(tr("final probability q"));
    plot_->legend->setVisible(true);
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    group_ = new QCPBarsGroup(plot_);
    tabs_ = new QTabWidget(split);
    table_ = new QTableWidget(0, 5, tabs_);
    table_->setHorizontalHeaderLabels({tr("id"), tr("token"), tr("q (A)"), tr("q (B)"), tr("kept by")});
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->verticalHeader()->setVisible(false);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    logprobs_ = new QTableWidget(0, 4, tabs_);
    logprobs_->setHorizontalHeaderLabels({tr("pipeline"), tr("mode"), tr("logprob"), tr("what it is")});
    logprobs_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    logprobs_->horizontalHeader()->setStretchLastSection(true);
    logprobs_->verticalHeader()->setVisible(false);
    logprobs_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    logprobs_->setWordWrap(true);
    tabs_->addTab(table_, tr("Tokens"));
    tabs_->addTab(logprobs_, tr("Logprobs by engine"));
    split->addWidget(plot_tabs_);
    split->addWidget(tabs_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    editor_b_->setPipeline(preset_pipeline("vllm"));
    connect(editor_a_, &PipelineEditor::pipelineChanged, this, &PipelineCompareView::recompute);
    connect(editor_b_, &PipelineEditor::pipelineChanged, this, &PipelineCompareView::recompute);
    connect(editor_a_, &PipelineEditor::engineDefaultsRequested, this, &PipelineCompareView::loadEngineDefaults);
    connect(editor_b_, &PipelineEditor::engineDefaultsRequested, this, &PipelineCompareView::loadEngineDefaults);
    // Both sides' steps and rules open and close together, then the editors find their arrangement again.
    for (auto* editor : {editor_a_, editor_b_}) {
        connect(editor, &PipelineEditor::detailsToggled, this, [this](bool visible) {
            editor_a_->setDetailsVisible(visible);
            editor_b_->setDetailsVisible(visible);
            arrangeEditors(true);
        });
    }
    recompute();
}

void PipelineCompareView::setInput(std::vector<double> logits, std::vector<std::string> labels, SamplingParams params,
                                   std::vector<std::int64_t> prompt_ids, std::vector<std::int64_t> output_ids,
                                   std::optional<double> mirostat_mu) {
    logits_ = std::move(logits);
    mirostat_mu_ = mirostat_mu;
    labels_ = std::move(labels);
    params_ = params;
    if (loaded_defaults_) {
        SamplingParams loaded = *loaded_defaults_;
        loaded.seed = params.seed;
        if (!(loaded == params)) {
            loaded_defaults_.reset();
            defaults_note_->clear();
            defaults_note_->setVisible(false);
        }
    }
    // One seed for both sides and for every recomputation, so an edit changes
    // only what the edit changes.
    if (!params_.seed) params_.seed = choose_seed();
    prompt_ids_ = std::move(prompt_ids);
    output_ids_ = std::move(output_ids);
    recompute();
}

void PipelineCompareView::setPipelines(const Pipeline& a, const Pipeline& b) {
    editor_a_->setPipeline(a);
    editor_b_->setPipeline(b);
    recompute();
}

void PipelineCompareView::showExample(const PipelineExample& example) {
    editor_a_->setPipeline(preset_pipeline(example.pipeline_a));
    editor_b_->setPipeline(preset_pipeline(example.pipeline_b));
    setInput(example.logits, example.labels, example.params, example.prompt_ids, example.output_ids);
}

QStringList paramChanges(const SamplingParams& before, const SamplingParams& after) {
    QStringList changes;
    const auto number = [](double x) { return QString::fromStdString(format_number(x)); };
    for (const auto& info : kParams) {
        const double old_value = param_value(before, info.param);
        const double new_value = param_value(after, info.param);
        if (old_value == new_value) continue;
        changes << QStringLiteral("%1 %2 -> %3").arg(QString::fromUtf8(info.key.data(), static_cast<int>(info.key.size())),
                                                     number(old_value), number(new_value));
    }
    const auto list = [](const std::string& text) {
        return text.empty() ? QStringLiteral("none") : QString::fromStdString(text);
    };
    if (before.logit_bias != after.logit_bias) {
        changes << QStringLiteral("logit_bias %1 -> %2")
                       .arg(list(format_logit_bias(before.logit_bias)), list(format_logit_bias(after.logit_bias)));
    }
    if (before.dry_sequence_breakers != after.dry_sequence_breakers) {
        changes << QStringLiteral("dry_sequence_breakers %1 -> %2")
                       .arg(list(format_dry_sequence_breakers(before.dry_sequence_breakers)),
                            list(format_dry_sequence_breakers(after.dry_sequence_breakers)));
    }
    return changes;
}

void PipelineCompareView::loadEngineDefaults(const QString& preset) {
    const SamplingParams before = params_;
    params_ = engine_defaults(preset.toStdString()).params;
    params_.seed = before.seed;
    const QStringList changes = paramChanges(before, params_);
    const QString title = QString::fromStdString(preset_pipeline(preset.toStdString()).title);
    const QString summary = changes.isEmpty()
                                ? tr("Loaded %1 defaults: every parameter already had its value.").arg(title)
                                : tr("Loaded %1 defaults: %2.")
                                      .arg(title, changes.join(QStringLiteral(", ")));
    loaded_defaults_ = params_;
    defaults_note_->setText(summary);
    defaults_note_->setVisible(true);
    recompute();
    emit paramsChanged(params_);
    emit defaultsLoaded(summary);
}

// A pipeline that divides by T after a truncation step keeps the same ids at any T: say so once per side.
void PipelineCompareView::showOrderNote() {
    QStringList lines;
    const auto side = [&lines, this](const QString& name, const Pipeline& pipeline) {
        bool truncated = false;
        QString first;
        for (const auto& step : pipeline.steps) {
            if (!step.enabled) continue;
            if (stage_info(step.stage).truncates && !truncated) {
                truncated = true;
                first = QString::fromUtf8(stage_info(step.stage).title.data(),
                                          static_cast<int>(stage_info(step.stage).title.size()));
            }
            if (step.stage == Stage::Temperature && truncated) {
                lines << tr("%1 (%2) applies temperature after truncation: %3 and the steps after it see the T = 1 "
                            "distribution, so T changes the kept tokens' q but not which tokens are kept "
                            "(here T = %4).")
                             .arg(name, QString::fromStdString(pipeline.title), first,
                                  QString::fromStdString(format_number(params_.temperature)));
                return;
            }
        }
    };
    side(tr("A"), editor_a_->pipeline());
    side(tr("B"), editor_b_->pipeline());
    order_note_->setText(lines.join(QLatin1Char('\n')));
    order_note_->setVisible(!lines.isEmpty());
}

bool PipelineCompareView::event(QEvent* event) {
    // In a scroll area the view's parent is its viewport, whose width is the space there is.
    if (event->type() == QEvent::ParentAboutToChange && parentWidget()) parentWidget()->removeEventFilter(this);
    if (event->type() == QEvent::ParentChange && parentWidget()) {
        parentWidget()->installEventFilter(this);
        arrangeEditors();
    }
    return QWidget::event(event);
}

bool PipelineCompareView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == parentWidget() && event->type() == QEvent::Resize) arrangeEditors();
    return QWidget::eventFilter(watched, event);
}

void PipelineCompareView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    arrangeEditors();
}

void PipelineCompareView::arrangeEditors(bool force) {
    const QMargins margins = layout()->contentsMargins();
    const int spacing = std::max(0, editors_row_->layout()->spacing());
    const int side_by_side = editor_a_->minimumSizeHint().width() + editor_b_->minimumSizeHint().width() + spacing +
                             margins.left() + margins.right();
    const int available = parentWidget() && qobject_cast<QAbstractScrollArea*>(parentWidget()->parentWidget())
                              ? parentWidget()->width()
                              : width();
    const bool tabbed = available < side_by_side;
    if (tabbed == editors_tabbed_ && !force) return;
    editors_tabbed_ = tabbed;
    editors_tabs_->clear();  // the pages stay alive: they move into the tabs or back into the row
    if (tabbed) {
        editors_tabs_->addTab(editor_a_, tr("Pipeline A"));
        editors_tabs_->addTab(editor_b_, tr("Pipeline B"));
    } else {
        editors_row_->layout()->removeWidget(editor_a_);
        editors_row_->layout()->removeWidget(editor_b_);
        editors_row_->layout()->addWidget(editor_a_);
        editors_row_->layout()->addWidget(editor_b_);
        editor_a_->show();  // a tab page that was not current is hidden
        editor_b_->show();
    }
    editors_row_->setVisible(!tabbed);
    editors_tabs_->setVisible(tabbed);
    updateGeometry();
    // A scroll area holding the view sizes it on a layout request of its own (the view's goes to the viewport).
    if (auto* area = parentWidget() ? qobject_cast<QAbstractScrollArea*>(parentWidget()->parentWidget()) : nullptr) {
        QCoreApplication::postEvent(area, new QEvent(QEvent::LayoutRequest));
    }
}

QString PipelineCompareView::labelOf(std::int32_t id) const {
    return QString::fromStdString(token_display_label(labels_, id));
}

QString PipelineCompareView::idList(const IdList& ids) const {
    QStringList parts;
    for (std::size_t i = 0; i < ids.size() && i < kMaxListedIds; ++i) parts << labelOf(ids[i]).toHtmlEscaped();
    if (ids.size() > kMaxListedIds) parts << tr("... %1 more").arg(QLocale().toString(static_cast<qulonglong>(ids.size() - kMaxListedIds)));
    return QStringLiteral("{") + parts.join(QStringLiteral(", ")) + QStringLiteral("}");
}

void PipelineCompareView::recompute() {
    showOrderNote();
    diff_.reset();
    table_->setRowCount(0);
    plot_->clearPlottables();
    plot_->clearItems();
    if (logits_.empty()) {
        strip_a_->clear(tr("No row yet: open an example or load logits."));
        strip_b_->clear();
        kept_->clear();
        verdict_->clear();
        notes_->clear();
        notes_->setVisible(false);
        logprobs_->setRowCount(0);
        plot_->replot();
        emit diffChanged();
        return;
    }
    try {
        ui::clearUpperVectorState();  // the GUI thread's painting may have left it dirty: exp would crawl
        diff_ = diff_pipelines(editor_a_->pipeline(), editor_b_->pipeline(),
                               PipelineInput{logits_, params_, prompt_ids_, output_ids_, std::nullopt, mirostat_mu_});
    } catch (const InputError& error) {
        strip_a_->clear();
        strip_b_->clear();
        kept_->clear();
        notes_->clear();
        notes_->setVisible(false);
        logprobs_->setRowCount(0);
        verdict_->setText(QStringLiteral("<span style='color:#b00020'>%1</span>")
                              .arg(QString::fromStdString(error.what()).toHtmlEscaped()));
        plot_->replot();
        emit diffChanged();
        return;
    }
    const auto& d = *diff_;
    const auto title = [](const PipelineEditor* editor) {
        return QString::fromStdString(editor->pipeline().title);
    };
    strip_a_->setTrace(tr("A: %1").arg(title(editor_a_)), d.a);
    strip_b_->setTrace(tr("B: %1").arg(title(editor_b_)), d.b);

    const auto kept_line = [this](const QString& name, const PipelineTrace& t) {
        QString line = QStringLiteral("<b>%1</b> keeps %2").arg(name, idList(t.trace.final_kept()));
        if (t.mirostat) {
            line += tr(" (mirostat %1: mu %2 -> %3 after this token)")
                        .arg(t.mirostat->version)
                        .arg(QString::number(t.mirostat->mu_before, 'g', 6), QString::number(t.mirostat->mu_after, 'g', 6));
        }
        if (t.xtc) {
            line += tr(" (XTC coin %1 %2 p = %3)")
                        .arg(QString::number(t.xtc->coin, 'g', 4), t.xtc->fired ? QStringLiteral("&lt;") : QStringLiteral("&ge;"),
                             QString::number(t.xtc->probability, 'g', 4));
        }
        if (!t.trace.ignored_params.empty()) {
            QStringList ignored;
            for (const auto& key : t.trace.ignored_params) ignored << QString::fromStdString(key);
            line += tr(" <i>(ignores %1)</i>").arg(ignored.join(QStringLiteral(", ")));
        }
        return line;
    };
    const std::vector<TokenComparison> tokens = shownTokens(d.tokens);
    const QString shown = tokens.size() < d.tokens.size()
                              ? tr("<br><i>Table and plot: the %1 most probable of the %2 tokens either keeps.</i>")
                                    .arg(tokens.size())
                                    .arg(QLocale().toString(static_cast<qulonglong>(d.tokens.size())))
                              : QString();
    kept_->setText(kept_line(tr("A"), d.a) + QStringLiteral(" &nbsp; ") + kept_line(tr("B"), d.b) +
                   QStringLiteral("<br>") +
                   tr("Only A: %1 &nbsp; Only B: %2").arg(idList(d.only_a), idList(d.only_b)) + shown);
    // A token named with its id, so a label such as "for" or "," never reads as part of the sentence.
    const auto named = [&](std::int32_t id) {
        return tr("<b>%1</b> (id %2)").arg(labelOf(id).toHtmlEscaped(), ui::groupedNumber(id));
    };
    const QString draw = d.same_token
                             ? tr("<b>Same token</b>: seed %1 draws %2 under both")
                                   .arg(QString::number(d.a.trace.seed), named(d.a.trace.token))
                             : tr("<b style='color:#b00020'>Different tokens</b>: seed %1 draws %2 under A, %3 under B")
                                   .arg(QString::number(d.a.trace.seed), named(d.a.trace.token), named(d.b.trace.token));
    verdict_->setText(tr("%1 &nbsp;·&nbsp; total-variation distance <b>%2</b>")
                          .arg(draw, QString::number(d.total_variation, 'g', 4)));
    verdict_->setToolTip(tr("Total-variation distance: half the sum over ids of |q_A - q_B| (exact: %1). 0 when the "
                            "two final distributions are equal, 1 when they share no id; no event's probability "
                            "differs by more. The token: what one draw with the window's seed and history picks "
                            "under each pipeline.")
                             .arg(QString::fromStdString(format_number(d.total_variation))));
    showEngineDetails(d);

    QVector<double> x;
    QVector<double> qa;
    QVector<double> qb;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    table_->setRowCount(static_cast<int>(tokens.size()));
    // Labels a bar apart only where they fit side by side (the plot's width over the widest label).
    const QFontMetrics tick_metrics(plot_->xAxis->tickLabelFont());
    int widest = 1;
    for (const auto& token : tokens) widest = std::max(widest, tick_metrics.horizontalAdvance(labelOf(token.id)) + 6);
    const auto fitting = static_cast<std::size_t>(std::max(2, std::max(plot_->width(), 400) - 80) / widest);
    const std::size_t labels = std::min(kMaxTickLabels, std::max<std::size_t>(1, fitting));
    const std::size_t every = std::max<std::size_t>(1, (tokens.size() + labels - 1) / labels);
    int row = 0;
    for (const auto& token : tokens) {
        x << row;
        qa << token.prob_a;
        qb << token.prob_b;
        if (static_cast<std::size_t>(row) % every == 0) ticker->addTick(row, labelOf(token.id));
        const bool in_a = d.a.trace.stage(Stage::Softmax).keeps(token.id);
        const bool in_b = d.b.trace.stage(Stage::Softmax).keeps(token.id);
        const QStringList cells{ui::groupedNumber(token.id), labelOf(token.id), probability(token.prob_a),
                                probability(token.prob_b),
                                in_a && in_b ? tr("both") : (in_a ? tr("A only") : tr("B only"))};
        for (int column = 0; column < cells.size(); ++column) {
            auto* item = new QTableWidgetItem(cells[column]);
            if (!(in_a && in_b)) item->setBackground(QColor(0xff, 0xf1, 0xd6));
            table_->setItem(row, column, item);
        }
        ++row;
    }
    auto* bars_a = new QCPBars(plot_->xAxis, plot_->yAxis);
    auto* bars_b = new QCPBars(plot_->xAxis, plot_->yAxis);
    bars_a->setName(tr("A: %1").arg(title(editor_a_)));
    bars_b->setName(tr("B: %1").arg(title(editor_b_)));
    bars_a->setBrush(kColorA);
    bars_b->setBrush(kColorB);
    bars_a->setPen(QPen(kColorA.darker(130)));
    bars_b->setPen(QPen(kColorB.darker(130)));
    for (auto* bars : {bars_a, bars_b}) {
        bars->setWidth(0.38);
        bars->setBarsGroup(group_);
    }
    bars_a->setData(x, qa);
    bars_b->setData(x, qb);
    plot_->xAxis->setTicker(ticker);
    plot_->xAxis->setRange(-0.7, std::max(0.7, static_cast<double>(row) - 0.3));
    const double top = std::max(*std::max_element(qa.begin(), qa.end()), *std::max_element(qb.begin(), qb.end()));
    plot_->yAxis->setRange(0, 1.18 * top);
    // Each bar's q over it while the bars are few enough to read them.
    if (row <= static_cast<int>(kMaxValueLabels)) {
        QFont small = ui::scaledFont(plot_->font(), 7.5);
        for (int i = 0; i < row; ++i) {
            for (const auto& [side, values, color] : {std::tuple{-1.0, &qa, kColorA}, std::tuple{1.0, &qb, kColorB}}) {
                auto* label = new QCPItemText(plot_);
                label->setObjectName(QStringLiteral("value_label"));
                label->position->setCoords(i + side * 0.2, (*values)[i]);
                label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
                label->setText(QString::number((*values)[i], 'g', 3));
                label->setFont(small);
                label->setColor(color.darker(150));
                label->setPadding(QMargins(0, 0, 0, 2));
            }
        }
    }
    plot_->replot();
    emit diffChanged();
}

void PipelineCompareView::showEngineDetails(const PipelineDiff& d) {
    QStringList notes;
    const auto side_notes = [&notes](const QString& side, const PipelineTrace& t) {
        for (const auto& refusal : t.engine_refusals) {
            notes << QStringLiteral("<span style='color:#b00020'><b>%1</b>: %2</span>")
                         .arg(side, QString::fromStdString(refusal).toHtmlEscaped());
        }
        if (t.engine_f32) {
            notes << QStringLiteral("<span style='color:#8a5a00'><b>%1</b>: %2 (the f64 model is shown)</span>")
                         .arg(side, QString::fromStdString(t.engine_f32->note).toHtmlEscaped());
        }
    };
    side_notes(tr("A"), d.a);
    side_notes(tr("B"), d.b);
    notes_->setText(notes.join(QStringLiteral("<br>")));
    notes_->setVisible(!notes.isEmpty());

    logprobs_->setRowCount(0);
    const auto add_rows = [this](const QString& side, const QString& title, const PipelineTrace& t) {
        const auto add = [this](const QStringList& cells, bool emphasised) {
            const int row = logprobs_->rowCount();
            logprobs_->insertRow(row);
            for (int column = 0; column < cells.size(); ++column) {
                auto* item = new QTableWidgetItem(cells[column]);
                if (emphasised) {
                    QFont font = item->font();
                    font.setBold(true);
                    item->setFont(font);
                }
                logprobs_->setItem(row, column, item);
            }
        };
        const auto number = [](double x) {
            return std::isfinite(x) ? QString::number(x, 'g', 8) : QStringLiteral("-inf");
        };
        add({QStringLiteral("%1: %2").arg(side, title), tr("contract"), number(t.trace.logprob),
             tr("log_softmax over all V ids after the penalties, before temperature (the contract's logprob)")},
            false);
        for (const auto& mode : t.engine_logprobs) {
            add({QStringLiteral("%1: %2").arg(side, title), QString::fromStdString(mode.mode) +
                                                                 (mode.is_default ? tr(" (default)") : QString()),
                 number(mode.value), QString::fromStdString(mode.meaning)},
                mode.is_default);
        }
    };
    add_rows(tr("A"), QString::fromStdString(editor_a_->pipeline().title), d.a);
    add_rows(tr("B"), QString::fromStdString(editor_b_->pipeline().title), d.b);
}

}  // namespace samplescope
