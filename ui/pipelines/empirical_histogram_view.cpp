#include "ui/pipelines/empirical_histogram_view.h"

#include <QComboBox>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

#include <qcustomplot.h>

#include "engine/base/input_error.h"
#include "engine/io/token_display.h"
#include "engine/pipelines/pipeline_presets.h"
#include "ui/common/cpu_state.h"

namespace samplescope {

namespace {

QString text(std::string_view view) { return QString::fromUtf8(view.data(), static_cast<qsizetype>(view.size())); }

QString grouped(std::uint64_t n) { return QLocale(QLocale::English).toString(static_cast<qulonglong>(n)); }

// A p-value with enough digits that its text sits on the same side of alpha
// as the value (0.00996 is not shown as "0.01" beside "< alpha = 0.01").
QString pText(double p, double alpha) {
    QString shown;
    for (int digits = 2; digits <= 8; ++digits) {
        shown = QString::number(p, 'g', digits);
        const double back = shown.toDouble();
        if ((back < alpha) == (p < alpha) && back != alpha) break;
    }
    return shown;
}

const QString kRed = QStringLiteral("#b00020");

}  // namespace

EmpiricalHistogramView::EmpiricalHistogramView(QWidget* parent)
    : QWidget(parent),
      pipeline_(preset_pipeline("spec")),
      cancel_(std::make_shared<std::atomic<bool>>(false)),
      done_(std::make_shared<std::atomic<std::uint64_t>>(0)) {
    auto* layout = new QVBoxLayout(this);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Pipeline:"), this));
    pipeline_combo_ = new QComboBox(this);
    for (const auto& preset : kPresets) pipeline_combo_->addItem(text(preset.title), text(preset.name));
    controls->addWidget(pipeline_combo_);
    controls->addSpacing(12);
    controls->addWidget(new QLabel(tr("Draws:"), this));
    draws_ = new QSpinBox(this);
    draws_->setRange(1, static_cast<int>(kMaxDraws));
    draws_->setSingleStep(10000);
    draws_->setValue(100000);
    draws_->setGroupSeparatorShown(true);
    draws_->setToolTip(tr("Consecutive draws of the request's stream, 1 to 1,000,000"));
    controls->addWidget(draws_);
    draw_button_ = new QPushButton(tr("Draw"), this);
    cancel_button_ = new QPushButton(tr("Cancel"), this);
    cancel_button_->setEnabled(false);
    controls->addWidget(draw_button_);
    controls->addWidget(cancel_button_);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1000);
    progress_->setValue(0);
    progress_->setFormat(tr("%p%"));
    controls->addWidget(progress_, 1);
    layout->addLayout(controls);

    summary_ = new QLabel(this);
    summary_->setTextFormat(Qt::RichText);
    summary_->setWordWrap(true);
    layout->addWidget(summary_);

    plot_ = new QCustomPlot(this);
    plot_->setMinimumSize(420, 260);
    plot_->xAxis->setLabel(tr("token"));
    plot_->yAxis->setLabel(tr("frequency"));
    plot_->legend->setVisible(false);
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    // How the ids were binned for the test, above the axes (never over the bars).
    plot_->plotLayout()->insertRow(0);
    pooling_ = new QCPTextElement(plot_, QString(), QFont(font().family(), 9));
    pooling_->setTextColor(QColor(0x33, 0x33, 0x33));
    pooling_->setTextFlags(Qt::AlignLeft | Qt::AlignVCenter);
    pooling_->setLayer(QStringLiteral("axes"));
    plot_->plotLayout()->addElement(0, 0, pooling_);
    hint_ = new QCPItemText(plot_);
    hint_->position->setType(QCPItemPosition::ptAxisRectRatio);
    hint_->position->setCoords(0.5, 0.45);
    hint_->setPositionAlignment(Qt::AlignCenter);
    hint_->setTextAlignment(Qt::AlignCenter);
    hint_->setColor(QColor(0x55, 0x55, 0x55));
    hint_->setText(tr("Each id's observed count / N (bars) will be drawn here against its exact q (diamonds)."));
    layout->addWidget(plot_, 1);

    poll_ = new QTimer(this);
    poll_->setInterval(50);
    connect(poll_, &QTimer::timeout, this, &EmpiricalHistogramView::pollProgress);
    connect(draw_button_, &QPushButton::clicked, this, &EmpiricalHistogramView::start);
    connect(cancel_button_, &QPushButton::clicked, this, &EmpiricalHistogramView::cancel);
    connect(pipeline_combo_, &QComboBox::currentIndexChanged, this, [this](int index) {
        const QString name = index >= 0 ? pipeline_combo_->itemData(index).toString() : QString();
        if (!name.isEmpty() && name != text(kCustomPipelineName)) pipeline_ = preset_pipeline(name.toStdString());
        if (idle_) updateHint();
    });
    connect(draws_, &QSpinBox::valueChanged, this, [this] {
        if (idle_) updateHint();
    });
    connect(&watcher_, &QFutureWatcher<DrawOutcome>::finished, this, [this] {
        poll_->stop();
        const DrawOutcome outcome = watcher_.result();
        draw_button_->setEnabled(true);
        cancel_button_->setEnabled(false);
        if (outcome.result && input_serial_ != run_serial_) {
            // The input changed while drawing: the sample answers a question no longer asked.
            result_.reset();
            progress_->setValue(0);
            showIdle(tr("The input changed during the run, so its sample was set aside"));
        } else if (outcome.result) {
            result_ = outcome.result;
            showResult();
        } else {
            result_.reset();
            showError(QString::fromStdString(outcome.error));
        }
        emit finished();
    });
    showIdle();
}

EmpiricalHistogramView::~EmpiricalHistogramView() {
    cancel_->store(true);
    watcher_.waitForFinished();
}

void EmpiricalHistogramView::setInput(std::vector<double> logits, std::vector<std::string> labels,
                                      SamplingParams params, std::vector<std::int64_t> prompt_ids,
                                      std::vector<std::int64_t> output_ids) {
    logits_ = std::move(logits);
    labels_ = std::move(labels);
    params_ = params;
    if (!params_.seed) params_.seed = choose_seed();  // one seed, so a second run replays the first
    prompt_ids_ = std::move(prompt_ids);
    output_ids_ = std::move(output_ids);
    ++input_serial_;
    // A finished run belongs to the old input: say so rather than show it as
    // this input's sample (a new run starts only on Draw).
    if (result_ && !running()) {
        result_.reset();
        progress_->setValue(0);
        showIdle(tr("The input changed, so the last sample was withdrawn"));
    }
}

void EmpiricalHistogramView::setPipeline(const Pipeline& pipeline) {
    pipeline_ = pipeline;
    int index = pipeline_combo_->findData(QString::fromStdString(pipeline.name));
    if (index < 0) {
        // A custom pipeline: one extra entry stands for it.
        index = pipeline_combo_->findData(text(kCustomPipelineName));
        if (index < 0) {
            pipeline_combo_->addItem(tr("Custom"), text(kCustomPipelineName));
            index = pipeline_combo_->count() - 1;
        }
    }
    pipeline_combo_->blockSignals(true);
    pipeline_combo_->setCurrentIndex(index);
    pipeline_combo_->blockSignals(false);
    if (idle_) updateHint();
}

void EmpiricalHistogramView::setDraws(int draws) { draws_->setValue(draws); }

bool EmpiricalHistogramView::running() const { return watcher_.isRunning(); }

void EmpiricalHistogramView::start() {
    if (running()) return;
    if (logits_.empty()) {
        showError(tr("No row yet: open an example or load logits."));
        emit finished();
        return;
    }
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    done_ = std::make_shared<std::atomic<std::uint64_t>>(0);
    asked_ = static_cast<std::uint64_t>(draws_->value());
    run_serial_ = input_serial_;
    idle_ = false;  // the summary says what is being drawn until the run ends
    progress_->setValue(0);
    draw_button_->setEnabled(false);
    cancel_button_->setEnabled(true);
    summary_->setText(tr("Drawing %1 tokens with %2 ...").arg(grouped(asked_), QString::fromStdString(pipeline_.title)));
    // The worker owns copies of everything it reads.
    const Pipeline pipeline = pipeline_;
    const auto logits = logits_;
    const auto params = params_;
    const auto prompt = prompt_ids_;
    const auto output = output_ids_;
    const auto draws = asked_;
    const auto cancel = cancel_;
    const auto done = done_;
    watcher_.setFuture(QtConcurrent::run([=]() {
        DrawOutcome outcome;
        ui::clearUpperVectorState();  // a pool thread may carry a dirty AVX state: exp would crawl
        try {
            outcome.result = sample_empirically(
                pipeline, PipelineInput{logits, params, prompt, output}, draws, 0,
                [done](std::uint64_t n) { done->store(n, std::memory_order_relaxed); }, cancel.get());
        } catch (const InputError& error) {
            outcome.error = error.what();
        }
        return outcome;
    }));
    poll_->start();
}

void EmpiricalHistogramView::cancel() { cancel_->store(true); }

void EmpiricalHistogramView::pollProgress() {
    if (asked_ == 0) return;
    const auto done = done_->load(std::memory_order_relaxed);
    progress_->setValue(static_cast<int>(1000.0 * static_cast<double>(done) / static_cast<double>(asked_)));
}

QString EmpiricalHistogramView::labelOf(std::int32_t id) const {
    return QString::fromStdString(token_display_label(labels_, id));
}

QString EmpiricalHistogramView::hint() const {
    return tr("Press Draw to sample %1 tokens from the final distribution of %2 and compare them with the exact q "
              "(Pearson's chi-square at \u03b1 = %3).")
        .arg(grouped(static_cast<std::uint64_t>(draws_->value())), QString::fromStdString(pipeline_.title),
             QString::number(kEmpiricalAlpha));
}

QString EmpiricalHistogramView::poolingNote() const { return pooling_->text(); }

void EmpiricalHistogramView::updateHint() {
    QString line = hint().toHtmlEscaped();
    if (!idle_why_.isEmpty()) line = idle_why_ + QStringLiteral(": ") + line.front().toLower() + line.mid(1);
    summary_->setText(line);
}

void EmpiricalHistogramView::showIdle(const QString& why) {
    idle_ = true;
    idle_why_ = why.toHtmlEscaped();
    plot_->clearPlottables();
    plot_->legend->setVisible(false);
    plot_->xAxis->setVisible(false);
    plot_->yAxis->setVisible(false);
    pooling_->setText(QString());
    hint_->setVisible(true);
    plot_->replot();
    updateHint();
}

void EmpiricalHistogramView::showError(const QString& message) {
    showIdle();
    summary_->setText(QStringLiteral("<span style='color:%1'>%2</span>").arg(kRed, message.toHtmlEscaped()));
}

void EmpiricalHistogramView::showResult() {
    const auto& r = *result_;
    const auto& h = r.histogram;
    const double n = static_cast<double>(h.draws);
    progress_->setValue(h.cancelled ? static_cast<int>(1000.0 * n / static_cast<double>(asked_)) : 1000);
    idle_ = false;
    idle_why_.clear();
    hint_->setVisible(false);
    plot_->legend->setVisible(true);
    plot_->xAxis->setVisible(true);
    plot_->yAxis->setVisible(true);

    // The verdict follows p at the stated alpha (engine/stats/empirical_sampling.h).
    const auto& t = r.test;
    const double alpha = kEmpiricalAlpha;
    const QString alpha_text = QString::number(alpha);
    const QString fit = tr("Pearson's chi-square %1 on %2 degrees of freedom")
                            .arg(std::isfinite(t.statistic) ? QString::number(t.statistic, 'g', 5) : tr("infinite"),
                                 grouped(t.degrees_of_freedom));
    QString verdict;
    if (t.impossible_draws > 0) {
        verdict = tr("<b style='color:%1'>%2 of the draws fell on ids whose exact q is 0: the draws do not follow the "
                     "exact q</b> (p = 0).")
                      .arg(kRed, grouped(t.impossible_draws));
    } else if (t.degrees_of_freedom == 0) {
        verdict = tr("Nothing to test: every draw falls in one bin.");
    } else if (rejects(t, alpha)) {
        verdict = tr("<b style='color:%1'>p = %2 &lt; \u03b1 = %3: the draws do not follow the exact q</b> (%4). "
                     "A correct sampler lands here in %5% of runs.")
                      .arg(kRed, pText(t.p_value, alpha), alpha_text, fit, QString::number(100.0 * alpha));
    } else {
        verdict = tr("<b>p = %1 \u2265 \u03b1 = %2: no evidence against the exact q</b> (%3).")
                      .arg(pText(t.p_value, alpha), alpha_text, fit);
    }

    // Token by token, Holm-corrected over the ids tested alone.
    const auto& d = r.tokens;
    QString tokens;
    if (d.tested == 0) {
        tokens = tr("No id is expected %1 times, so none is tested alone.").arg(kMinExpectedCount);
    } else {
        const QString who = tr("%1 (id %2)").arg(labelOf(d.id).toHtmlEscaped(), grouped(static_cast<std::uint64_t>(d.id)));
        const QString over = d.tested == 1 ? tr("the one id tested alone")
                                           : tr("the %1 ids tested alone").arg(grouped(d.tested));
        tokens = d.p_holm < alpha
                     ? tr("<b style='color:%1'>%2 deviates</b>: %3 standard errors from its expected count, p = %4, "
                          "%5 after Holm's correction over %6.")
                           .arg(kRed, who, QString::number(d.z, 'f', 2), pText(d.p, alpha), pText(d.p_holm, alpha), over)
                     : tr("No single token deviates after Holm's correction over %1 (largest: %2 at %3 standard "
                          "errors, adjusted p = %4).")
                           .arg(over, who, QString::number(d.z, 'f', 2), pText(d.p_holm, alpha));
    }
    summary_->setText(tr("%1%2 draws with %3 (seed %4).<br>%5<br>%6")
                          .arg(h.cancelled ? tr("Cancelled after ") : QString(), grouped(h.draws),
                               QString::fromStdString(pipeline_.title).toHtmlEscaped(),
                               QString::number(r.trace.trace.seed), verdict, tokens));

    // The pooling, on the plot: what the chi-square's bins are.
    const std::size_t own = t.pooled_cells > 0 && !t.pooled_merged ? t.bins - 1 : t.bins;
    const QString ids_alone = own == 1 ? tr("1 id expected \u2265 %1 draws has its own bin").arg(kMinExpectedCount)
                                       : tr("%1 ids expected \u2265 %2 draws have one bin each")
                                             .arg(grouped(own))
                                             .arg(kMinExpectedCount);
    QString pooling;
    if (t.pooled_cells == 0) {
        pooling = tr("Chi-square over %1 bins: every id with q > 0 is expected at least %2 times and has its own bin.")
                      .arg(grouped(t.bins))
                      .arg(kMinExpectedCount);
    } else {
        const QString pooled = t.pooled_cells == 1 ? tr("1 id expected < %1 draws").arg(kMinExpectedCount)
                                                   : tr("%1 ids expected < %2 draws each")
                                                         .arg(grouped(t.pooled_cells))
                                                         .arg(kMinExpectedCount);
        const QString where = t.pooled_merged
                                  ? tr("pooled (%1 draws expected together, still < %2) and added to the smallest bin")
                                        .arg(QString::number(t.pooled_expected, 'g', 4))
                                        .arg(kMinExpectedCount)
                                  : tr("pooled into one bin (%1 draws expected)").arg(QString::number(t.pooled_expected, 'g', 4));
        pooling = tr("Chi-square over %1 bins: %2;\n%3 %4.").arg(grouped(t.bins), ids_alone, pooled, where);
    }
    pooling_->setText(pooling);

    plot_->clearPlottables();
    // The bars: every id in id order while they fit; past kMaxBars, the
    // likeliest ids by exact q (ties to the lower id) and one bar for the others
    // together, so 128,256 kept ids never make a comb of slivers.
    std::vector<std::size_t> shown(h.ids.size());
    for (std::size_t i = 0; i < shown.size(); ++i) shown[i] = i;
    const bool with_rest = h.ids.size() > kMaxBars;
    double rest_observed = 0.0;
    double rest_expected = 0.0;
    if (with_rest) {
        std::partial_sort(shown.begin(), shown.begin() + static_cast<std::ptrdiff_t>(kMaxBars), shown.end(),
                          [&h](std::size_t a, std::size_t b) {
                              return h.expected[a] != h.expected[b] ? h.expected[a] > h.expected[b] : a < b;
                          });
        std::vector<char> is_shown(h.ids.size(), 0);
        for (std::size_t i = 0; i < kMaxBars; ++i) is_shown[shown[i]] = 1;
        for (std::size_t i = 0; i < h.ids.size(); ++i) {  // in id order
            if (is_shown[i]) continue;
            rest_observed += n > 0 ? static_cast<double>(h.counts[i]) / n : 0.0;
            rest_expected += h.expected[i];
        }
        shown.resize(kMaxBars);
        pooling_->setText(pooling + tr("\nThe plot: the %1 likeliest ids by exact q, then the other %2 together.")
                                        .arg(kMaxBars)
                                        .arg(grouped(h.ids.size() - kMaxBars)));
    }
    QVector<double> x;
    QVector<double> observed;
    QVector<double> expected;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    QStringList names;
    for (const auto i : shown) names << labelOf(h.ids[i]);
    // Short: QCustomPlot drops a tick label the plot's edge would cut, and the rest is the last bar
    // (the note above says how many ids it holds).
    if (with_rest) names << tr("rest");
    // Many bars make an unreadable axis: label only as many as fit side by side.
    const QFontMetrics metrics(plot_->xAxis->tickLabelFont());
    int widest = 1;
    for (const auto& name : names) widest = std::max(widest, metrics.horizontalAdvance(name));
    const int axis_width = std::max(200, plot_->axisRect()->width() > 0 ? plot_->axisRect()->width() : plot_->width() - 80);
    const auto fitting = static_cast<std::size_t>(std::max(1, axis_width / (widest + 12)));
    const std::size_t every = std::max<std::size_t>(1, (names.size() + fitting - 1) / fitting);
    for (std::size_t k = 0; k < shown.size(); ++k) {
        const auto xi = static_cast<double>(k);
        x << xi;
        observed << (n > 0 ? static_cast<double>(h.counts[shown[k]]) / n : 0.0);
        expected << h.expected[shown[k]];
        // A label needs `every` bars of room; the rest's own label takes the last ones.
        const bool room = !with_rest || shown.size() - k >= every;
        if (k % every == 0 && room) ticker->addTick(xi, names[static_cast<qsizetype>(k)]);
    }
    if (with_rest) {
        const auto xi = static_cast<double>(shown.size());
        x << xi;
        observed << rest_observed;
        expected << rest_expected;
        ticker->addTick(xi, names.back());  // the rest is always named
    }
    auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
    bars->setName(tr("observed count / N"));
    bars->setBrush(QColor(0x2f, 0x6f, 0xb5, 170));
    bars->setPen(QPen(QColor(0x1f, 0x4f, 0x85)));
    bars->setWidth(0.7);
    bars->setData(x, observed);
    auto* exact = plot_->addGraph();
    exact->setName(tr("exact q"));
    exact->setLineStyle(QCPGraph::lsNone);
    exact->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDiamond, QColor(0x8a, 0x3e, 0x00), QColor(0xf0, 0x90, 0x30), 12));
    exact->setData(x, expected);
    plot_->xAxis->setTicker(ticker);
    plot_->xAxis->setLabel(with_rest ? tr("token, likeliest first, then the rest") : tr("token (id order)"));
    plot_->xAxis->setRange(-0.7, std::max(0.7, static_cast<double>(x.size()) - 0.3));
    double top = 0.0;
    for (int i = 0; i < x.size(); ++i) top = std::max({top, observed[i], expected[i]});
    plot_->yAxis->setRange(0, 1.1 * std::max(top, 1e-9));
    plot_->replot();
}

}  // namespace samplescope
