#include "ui/pipelines/empirical_histogram_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <cmath>

#include <qcustomplot.h>

#include "engine/base/input_error.h"
#include "engine/io/token_display.h"
#include "engine/pipelines/pipeline_presets.h"
#include "ui/common/cpu_state.h"

namespace samplescope {

namespace {

QString text(std::string_view view) { return QString::fromUtf8(view.data(), static_cast<qsizetype>(view.size())); }

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

    summary_ = new QLabel(tr("Press Draw to sample the final distribution."), this);
    summary_->setTextFormat(Qt::RichText);
    summary_->setWordWrap(true);
    layout->addWidget(summary_);

    plot_ = new QCustomPlot(this);
    plot_->setMinimumSize(420, 260);
    plot_->xAxis->setLabel(tr("token"));
    plot_->yAxis->setLabel(tr("frequency"));
    plot_->legend->setVisible(true);
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    layout->addWidget(plot_, 1);

    poll_ = new QTimer(this);
    poll_->setInterval(50);
    connect(poll_, &QTimer::timeout, this, &EmpiricalHistogramView::pollProgress);
    connect(draw_button_, &QPushButton::clicked, this, &EmpiricalHistogramView::start);
    connect(cancel_button_, &QPushButton::clicked, this, &EmpiricalHistogramView::cancel);
    connect(pipeline_combo_, &QComboBox::currentIndexChanged, this, [this](int index) {
        const QString name = index >= 0 ? pipeline_combo_->itemData(index).toString() : QString();
        if (!name.isEmpty() && name != text(kCustomPipelineName)) pipeline_ = preset_pipeline(name.toStdString());
    });
    connect(&watcher_, &QFutureWatcher<DrawOutcome>::finished, this, [this] {
        poll_->stop();
        const DrawOutcome outcome = watcher_.result();
        draw_button_->setEnabled(true);
        cancel_button_->setEnabled(false);
        if (outcome.result && input_serial_ != run_serial_) {
            // The input changed while drawing: the sample answers a question no longer asked.
            result_.reset();
            plot_->clearPlottables();
            plot_->replot();
            progress_->setValue(0);
            summary_->setText(tr("The input changed during the run: press Draw to sample the new final distribution."));
        } else if (outcome.result) {
            result_ = outcome.result;
            showResult();
        } else {
            result_.reset();
            showError(QString::fromStdString(outcome.error));
        }
        emit finished();
    });
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
        plot_->clearPlottables();
        plot_->replot();
        progress_->setValue(0);
        summary_->setText(tr("The input changed: press Draw to sample the new final distribution."));
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
    progress_->setValue(0);
    draw_button_->setEnabled(false);
    cancel_button_->setEnabled(true);
    summary_->setText(tr("Drawing %1 tokens with %2 ...")
                          .arg(QLocale().toString(static_cast<qulonglong>(asked_)),
                               QString::fromStdString(pipeline_.title)));
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

void EmpiricalHistogramView::showError(const QString& message) {
    summary_->setText(QStringLiteral("<span style='color:#b00020'>%1</span>").arg(message.toHtmlEscaped()));
    plot_->clearPlottables();
    plot_->replot();
}

void EmpiricalHistogramView::showResult() {
    const auto& r = *result_;
    const auto& h = r.histogram;
    const double n = static_cast<double>(h.draws);
    progress_->setValue(h.cancelled ? static_cast<int>(1000.0 * n / static_cast<double>(asked_)) : 1000);

    const auto& t = r.test;
    const QString statistic = std::isfinite(t.statistic) ? QString::number(t.statistic, 'g', 5) : tr("infinite");
    QString deviation;
    if (r.deviation.id >= 0) {
        deviation = std::isfinite(r.deviation.z)
                        ? tr("largest deviation: token %1 at %2 standard errors")
                              .arg(labelOf(r.deviation.id).toHtmlEscaped(), QString::number(r.deviation.z, 'f', 2))
                        : tr("largest deviation: token %1 drawn though q = 0").arg(labelOf(r.deviation.id).toHtmlEscaped());
    }
    const QString verdict = t.degrees_of_freedom == 0
                                ? tr("nothing to test (one outcome)")
                                : (t.p_value < 0.001 ? tr("<b style='color:#b00020'>rejects</b> the exact q at the 0.1% level")
                                                     : tr("consistent with the exact q"));
    summary_->setText(tr("%1%2 draws with %3 (seed %4). Chi-square %5 on %6 degrees of freedom (%7 bins), "
                         "<b>p = %8</b>: %9; %10.")
                          .arg(h.cancelled ? tr("Cancelled after ") : QString(),
                               QLocale().toString(static_cast<qulonglong>(h.draws)),
                               QString::fromStdString(pipeline_.title), QString::number(r.trace.trace.seed),
                               statistic, QString::number(t.degrees_of_freedom), QString::number(t.bins),
                               QString::number(t.p_value, 'g', 4), verdict, deviation));

    plot_->clearPlottables();
    QVector<double> x;
    QVector<double> observed;
    QVector<double> expected;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    // Many ids make an unreadable axis: label at most about 30 of them.
    const std::size_t every = std::max<std::size_t>(1, h.ids.size() / 30);
    for (std::size_t i = 0; i < h.ids.size(); ++i) {
        const auto xi = static_cast<double>(i);
        x << xi;
        observed << (n > 0 ? static_cast<double>(h.counts[i]) / n : 0.0);
        expected << h.expected[i];
        if (i % every == 0) ticker->addTick(xi, labelOf(h.ids[i]));
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
    plot_->xAxis->setRange(-0.7, std::max(0.7, static_cast<double>(h.ids.size()) - 0.3));
    double top = 0.0;
    for (int i = 0; i < x.size(); ++i) top = std::max({top, observed[i], expected[i]});
    plot_->yAxis->setRange(0, 1.1 * std::max(top, 1e-9));
    plot_->replot();
}

}  // namespace samplescope
