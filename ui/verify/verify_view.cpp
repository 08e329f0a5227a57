#include "ui/verify/verify_view.h"

#include <functional>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMimeData>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <qcustomplot.h>

#include "engine/base/input_error.h"
#include "engine/json/params_json.h"
#include "engine/pipelines/pipeline_presets.h"
#include "ui/common/count_text.h"

namespace samplescope {

namespace {

QString text(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

VerifyView::VerifyView(QWidget* parent) : QWidget(parent), cancel_(std::make_shared<std::atomic<bool>>(false)) {
    setAcceptDrops(true);
    auto* layout = new QVBoxLayout(this);

    auto* files = new QHBoxLayout;
    auto* open_logits = new QPushButton(tr("Open logits..."), this);
    auto* open_params = new QPushButton(tr("Open params..."), this);
    auto* open_samples = new QPushButton(tr("Open samples..."), this);
    files->addWidget(open_logits);
    files->addWidget(open_params);
    files->addWidget(open_samples);
    inputs_label_ = new QLabel(tr("Open or drop the logits, the sampler's draws and (optionally) per-row params"), this);
    inputs_label_->setWordWrap(true);
    files->addWidget(inputs_label_, 1);
    layout->addLayout(files);

    auto* controls = new QHBoxLayout;
    pipeline_combo_ = new QComboBox(this);
    for (const auto& preset : kPresets) pipeline_combo_->addItem(text(preset.title), text(preset.name));
    pipeline_combo_->setToolTip(tr("The pipeline whose semantics the sampler claims"));
    alpha_spin_ = new QDoubleSpinBox(this);
    alpha_spin_->setDecimals(6);
    alpha_spin_->setRange(1e-6, 0.5);
    alpha_spin_->setSingleStep(0.001);
    alpha_spin_->setValue(kDefaultVerifyAlpha);
    alpha_spin_->setPrefix(tr("alpha "));
    run_button_ = new QPushButton(tr("Verify"), this);
    cancel_button_ = new QPushButton(tr("Cancel"), this);
    cancel_button_->setEnabled(false);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    row_spin_ = new QSpinBox(this);
    row_spin_->setPrefix(tr("row "));
    row_spin_->setRange(0, 0);
    log_box_ = new QCheckBox(tr("Log scale"), this);
    log_box_->setChecked(true);
    controls->addWidget(new QLabel(tr("Pipeline"), this));
    controls->addWidget(pipeline_combo_);
    controls->addWidget(alpha_spin_);
    controls->addWidget(run_button_);
    controls->addWidget(cancel_button_);
    controls->addWidget(progress_, 1);
    controls->addWidget(row_spin_);
    controls->addWidget(log_box_);
    layout->addLayout(controls);

    verdict_label_ = new QLabel(this);
    verdict_label_->setWordWrap(true);
    verdict_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(verdict_label_);
    error_label_ = new QLabel(this);
    error_label_->setStyleSheet(QStringLiteral("color: #b00020"));
    error_label_->setWordWrap(true);
    error_label_->hide();
    layout->addWidget(error_label_);

    plot_widget_ = new QCustomPlot(this);
    plot_widget_->setMinimumHeight(240);
    plot_widget_->legend->setVisible(false);  // shown once a row is drawn
    plot_widget_->xAxis->setLabel(tr("ids by exact q, descending (draws outside the support at the right)"));
    plot_widget_->yAxis->setLabel(tr("probability"));
    layout->addWidget(plot_widget_, 1);

    watcher_ = new QFutureWatcher<Outcome>(this);
    connect(watcher_, &QFutureWatcher<Outcome>::finished, this, &VerifyView::finished);
    connect(open_logits, &QPushButton::clicked, this, [this]() {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open logits"));
        if (!path.isEmpty()) loadLogitsFile(path);
    });
    connect(open_params, &QPushButton::clicked, this, [this]() {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open per-row params"), {}, tr("JSON (*.json)"));
        if (!path.isEmpty()) loadParamsFile(path);
    });
    connect(open_samples, &QPushButton::clicked, this, [this]() {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open the sampler's draws"));
        if (!path.isEmpty()) loadSamplesFile(path);
    });
    connect(run_button_, &QPushButton::clicked, this, [this]() { runVerification(); });
    connect(cancel_button_, &QPushButton::clicked, this, &VerifyView::cancel);
    connect(row_spin_, &QSpinBox::valueChanged, this, [this](int row) { showRow(row); });
    connect(log_box_, &QCheckBox::toggled, this, [this]() { showRow(row_spin_->value()); });
    connect(this, &VerifyView::progressed, progress_, &QProgressBar::setValue);
    updateStatus();
    showRow(-1);
}

VerifyView::~VerifyView() {
    cancel_->store(true);
    watcher_->waitForFinished();
}

void VerifyView::showError(const QString& message) {
    error_label_->setText(message);
    error_label_->setVisible(!message.isEmpty());
}

QString VerifyView::errorText() const { return error_label_->isHidden() ? QString() : error_label_->text(); }
QString VerifyView::verdictText() const { return verdict_label_->text(); }

void VerifyView::updateStatus() {
    const auto name = [](const QString& n, const QString& none) { return n.isEmpty() ? none : n; };
    inputs_label_->setText(tr("Logits: %1 (%2 x %3) | params: %4 | draws: %5 (%6)")
                               .arg(name(logits_name_, tr("none")), ui::groupedNumber(logits_.rows),
                                    ui::groupedNumber(logits_.cols), name(params_name_, tr("the same for every row")),
                                    name(samples_name_, tr("none")),
                                    ui::countText(samples_.rows.size(), tr("row"), tr("rows"))));
}

// Runs one file's read; a refusal shows its message and changes nothing else.
bool VerifyView::load(const std::function<void()>& read) {
    try {
        read();
        showError({});
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()));
        return false;
    }
    updateStatus();
    return true;
}

bool VerifyView::loadLogitsFile(const QString& path) {
    return load([&] {
        logits_ = load_logits_file(path.toStdString());
        logits_name_ = QFileInfo(path).fileName();
        requests_.clear();
        params_name_.clear();
    });
}

bool VerifyView::loadParamsFile(const QString& path) {
    return load([&] {
        if (logits_.rows == 0) throw InputError("params", "open the logits first: the params file needs one object per row");
        requests_ = load_row_requests_file(path.toStdString(), logits_.rows);
        params_name_ = QFileInfo(path).fileName();
    });
}

bool VerifyView::loadSamplesFile(const QString& path) {
    return load([&] {
        samples_ = load_samples_file(path.toStdString());
        samples_name_ = QFileInfo(path).fileName();
    });
}

void VerifyView::setInputs(LogitsMatrix logits, std::vector<RowRequest> requests, SampleRows samples) {
    logits_ = std::move(logits);
    requests_ = std::move(requests);
    samples_ = std::move(samples);
    logits_name_ = tr("given");
    params_name_ = requests_.empty() ? QString() : tr("given");
    samples_name_ = tr("given");
    updateStatus();
}

void VerifyView::setParams(const SamplingParams& params) { params_ = params; }

void VerifyView::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

// A dropped file: integer draws (a .npy of int32/int64, or text of ids once
// logits are loaded) are the samples, a .json list once logits are loaded the
// params, anything else the logits.
void VerifyView::dropEvent(QDropEvent* event) {
    for (const QUrl& url : event->mimeData()->urls()) {
        const QString path = url.toLocalFile();
        if (path.isEmpty()) continue;
        const bool npy = path.endsWith(QStringLiteral(".npy"), Qt::CaseInsensitive);
        const bool json = path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive);
        if (logits_.rows == 0) {
            if (!(npy && loadSamplesFile(path))) loadLogitsFile(path);
        } else if (json) {
            if (!loadParamsFile(path)) loadLogitsFile(path);
        } else if (!loadSamplesFile(path)) {
            loadLogitsFile(path);
        }
    }
    event->acceptProposedAction();
}

bool VerifyView::isRunning() const { return watcher_->isRunning(); }

void VerifyView::cancel() { cancel_->store(true); }

bool VerifyView::runVerification() {
    if (isRunning()) return false;
    if (logits_.rows == 0 || samples_.rows.empty()) {
        showError(tr("open the logits and the sampler's draws first"));
        return false;
    }
    // The rows as the CLI pairs them: every logits row with as many rows of draws, else row 0.
    std::vector<SamplerRow> rows;
    const std::size_t verified = samples_.rows.size() == logits_.rows ? logits_.rows : 1;
    if (samples_.rows.size() != verified) {
        showError(tr("samples: %1 of draws, the logits have %2")
                      .arg(ui::countText(samples_.rows.size(), tr("row"), tr("rows")),
                           ui::countText(logits_.rows, tr("row"), tr("rows"))));
        return false;
    }
    for (std::size_t r = 0; r < verified; ++r) {
        RowRequest request = requests_.empty() ? RowRequest{params_, {}, {}, 0} : requests_[r];
        rows.push_back({logits_.row(r), std::move(request), r, samples_.rows[r]});
    }
    const std::string pipeline_name = pipeline_combo_->currentData().toString().toStdString();
    const double alpha = alpha_spin_->value();
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    progress_->setRange(0, static_cast<int>(rows.size()));
    progress_->setValue(0);
    run_button_->setEnabled(false);
    cancel_button_->setEnabled(true);
    showError({});
    verdict_label_->setText(tr("Verifying %1...").arg(ui::countText(rows.size(), tr("row"), tr("rows"))));
    QPointer<VerifyView> self(this);
    watcher_->setFuture(QtConcurrent::run([rows = std::move(rows), pipeline_name, alpha, cancel = cancel_, self]() {
        Outcome outcome;
        try {
            const Pipeline pipeline = preset_pipeline(pipeline_name);
            auto result = std::make_shared<SamplerVerification>(verify_sampler(
                pipeline, rows, alpha,
                [self](std::size_t done) {
                    if (self) QMetaObject::invokeMethod(self, "progressed", Qt::QueuedConnection, Q_ARG(int, static_cast<int>(done)));
                },
                cancel.get()));
            outcome.cancelled = result->result.cancelled;
            if (!outcome.cancelled) outcome.verification = std::move(result);
            for (const auto& row : rows) outcome.samples.push_back(row.samples);
        } catch (const InputError& error) {
            outcome.error = QString::fromUtf8(error.what());
        }
        return outcome;
    }));
    return true;
}

void VerifyView::finished() {
    const Outcome outcome = watcher_->result();
    run_button_->setEnabled(true);
    cancel_button_->setEnabled(false);
    if (!outcome.error.isEmpty()) {
        showError(outcome.error);
        verdict_label_->clear();
        emit verificationFinished(false);
        return;
    }
    if (outcome.cancelled) {
        verdict_label_->setText(tr("Cancelled: no verdict."));
        emit verificationFinished(false);
        return;
    }
    verification_ = outcome.verification;
    verified_samples_ = outcome.samples;
    progress_->setValue(progress_->maximum());
    row_spin_->setRange(0, static_cast<int>(verification_->result.rows.size()) - 1);
    showRow(row_spin_->value());
    emit verificationFinished(verification_->result.pass);
}

void VerifyView::showRow(int row) {
    plot_widget_->clearGraphs();
    plot_widget_->clearItems();
    plot_widget_->clearPlottables();
    if (!verification_ || row < 0 || static_cast<std::size_t>(row) >= verification_->result.rows.size()) {
        // Nothing verified yet: say what to do instead of drawing empty axes.
        plot_widget_->legend->setVisible(false);
        // No axes either: empty 0-to-5 scales read as data.
        for (QCPAxis* axis : plot_widget_->axisRect()->axes()) axis->setVisible(false);
        auto* hint = new QCPItemText(plot_widget_);
        hint->position->setType(QCPItemPosition::ptAxisRectRatio);
        hint->position->setCoords(0.5, 0.5);
        hint->setText(tr("Open the logits, the parameters and the sampler's draws, then press Verify:\n"
                         "each row's observed frequencies are drawn here against the exact q."));
        hint->setColor(QColor(0x55, 0x55, 0x55));
        plot_widget_->replot();
        return;
    }
    plot_widget_->legend->setVisible(true);
    plot_widget_->xAxis->setVisible(true);
    plot_widget_->yAxis->setVisible(true);
    const auto r = static_cast<std::size_t>(row);
    const RowVerification& v = verification_->result.rows[r];
    plot_ = verifyPlotData(verification_->exact[r], verified_samples_[r]);
    const bool log = log_box_->isChecked();

    QVector<double> x, q, observed, vx, vy;
    for (std::size_t i = 0; i < plot_.ids.size(); ++i) {
        const double at = static_cast<double>(i);
        if (plot_.violation[i]) {
            vx.push_back(at);
            vy.push_back(plot_.observed[i]);
            continue;
        }
        x.push_back(at);
        q.push_back(plot_.q[i]);
        observed.push_back(plot_.observed[i]);
    }
    auto* exact = plot_widget_->addGraph();
    exact->setName(tr("exact q"));
    exact->setPen(QPen(QColor(0x1f, 0x77, 0xb4), 2));
    exact->setData(x, q, true);
    auto* seen = plot_widget_->addGraph();
    seen->setName(tr("observed frequency"));
    seen->setLineStyle(QCPGraph::lsNone);
    seen->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(0xff, 0x7f, 0x0e), 4));
    seen->setData(x, observed, true);
    if (!vx.isEmpty()) {
        auto* outside = new QCPBars(plot_widget_->xAxis, plot_widget_->yAxis);
        outside->setName(tr("outside the support"));
        outside->setBrush(QColor(0xd6, 0x27, 0x28));
        outside->setPen(QPen(QColor(0xd6, 0x27, 0x28)));
        outside->setData(vx, vy);
    }
    if (plot_.tail_first < plot_.kept) {
        auto* band = new QCPItemRect(plot_widget_);
        band->topLeft->setTypeX(QCPItemPosition::ptPlotCoords);
        band->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
        band->bottomRight->setTypeX(QCPItemPosition::ptPlotCoords);
        band->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
        band->topLeft->setCoords(static_cast<double>(plot_.tail_first) - 0.5, 0.0);
        band->bottomRight->setCoords(static_cast<double>(plot_.kept) - 0.5, 1.0);
        band->setBrush(QColor(0x9e, 0x9e, 0x9e, 60));
        band->setPen(Qt::NoPen);
        band->setLayer(QStringLiteral("background"));
    }
    if (log) {
        plot_widget_->yAxis->setScaleType(QCPAxis::stLogarithmic);
        plot_widget_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    } else {
        plot_widget_->yAxis->setScaleType(QCPAxis::stLinear);
        plot_widget_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    }
    plot_widget_->rescaleAxes();
    if (log) {
        double smallest = 1.0;
        for (const double v_q : plot_.q) {
            if (v_q > 0.0) smallest = std::min(smallest, v_q);
        }
        plot_widget_->yAxis->setRange(smallest / 2.0, 1.0);
    }
    plot_widget_->xAxis->setRange(-1.0, static_cast<double>(plot_.ids.size()));
    plot_widget_->replot();

    const bool pass = v.pass;
    QString verdict = tr("<b>Batch: %1</b> at \u03b1 = %2 after Holm's correction. Row %3: <b>%4</b>. %5, %6.")
                          .arg(verification_->result.pass ? tr("pass") : tr("fail"))
                          .arg(verification_->result.alpha, 0, 'g', 6)
                          .arg(ui::groupedNumber(verification_->row[r]))
                          .arg(pass ? tr("pass") : tr("fail"))
                          .arg(ui::countText(v.samples, tr("draw"), tr("draws")),
                               ui::countText(verified_ids(verification_->exact[r]).size(), tr("kept id"),
                                             tr("kept ids")));
    if (!v.support_violations.empty()) {
        QStringList ids;
        for (std::size_t i = 0; i < v.support_violations.size() && i < 8; ++i) {
            ids << QStringLiteral("%1 (x%2)").arg(ui::groupedNumber(v.support_violations[i].id),
                                                  ui::groupedNumber(v.support_violations[i].count));
        }
        verdict += tr(" <span style='color:#d62728'><b>%1 outside the support</b>: %2</span>.")
                       .arg(ui::countText(v.outside_count, tr("draw"), tr("draws")), ids.join(QStringLiteral(", ")));
    }
    verdict += tr(" G = %1, %2 dof, p = %3 (Holm-adjusted %4). Tail (%5, shaded): %6 observed vs %7 expected, p = %8.")
                   .arg(v.g.statistic, 0, 'g', 5)
                   .arg(ui::groupedNumber(v.g.degrees_of_freedom))
                   .arg(v.g.p_value, 0, 'g', 3)
                   .arg(v.g_p_holm, 0, 'g', 3)
                   .arg(ui::countText(v.tail.ids, tr("id"), tr("ids")))
                   .arg(ui::groupedNumber(v.tail.observed))
                   .arg(v.tail.expected, 0, 'g', 4)
                   .arg(v.tail.p_value, 0, 'g', 3);
    verdict += v.detectable_tv < 1.0
                   ? tr(" It vouches for a total-variation distance above %1 (power 0.9); it cannot vouch for "
                        "smaller errors, nor for differences inside one pooled bin.")
                         .arg(v.detectable_tv, 0, 'g', 3)
                   : tr(" Too few draws to vouch for anything but the support.");
    verdict_label_->setText(verdict);
}

}  // namespace samplescope
