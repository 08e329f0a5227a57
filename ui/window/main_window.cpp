#include "ui/window/main_window.h"

#include <algorithm>
#include <cmath>

#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDeadlineTimer>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenuBar>
#include <QMimeData>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTimer>
#include <QVBoxLayout>

#include "engine/io/token_display.h"
#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/io/logits_loader.h"
#include "engine/pipelines/pipeline_presets.h"
#include "ui/common/examples.h"
#include "ui/verify/verify_view.h"
#include "ui/window/dialog_folders.h"
#include "ui/window/export.h"
#include "ui/window/help.h"
#include "ui/common/font_scale.h"
#include "ui/common/thread_clock.h"

namespace samplescope::ui {

namespace {

QString keyText(std::string_view key) { return QString::fromUtf8(key.data(), static_cast<int>(key.size())); }

// 1600 x 1000, or nine tenths of a smaller screen's free area. The offscreen
// platform (tests, --screenshot) has no real screen and keeps 1600 x 1000.
QSize defaultWindowSize() {
    const QSize preferred(1600, 1000);
    const QScreen* screen = QGuiApplication::primaryScreen();
    if (!screen || QGuiApplication::platformName() == QLatin1String("offscreen")) return preferred;
    const QSize available = screen->availableSize();
    return preferred.boundedTo(QSize(available.width() * 9 / 10, available.height() * 9 / 10));
}

QDockWidget* makeDock(QMainWindow* window, QWidget* content, const QString& title, const QString& name) {
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName(name);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable);
    dock->setWidget(content);
    window->addDockWidget(Qt::LeftDockWidgetArea, dock);
    return dock;
}

}  // namespace

MainWindow::MainWindow(MainWindowOptions options, QWidget* parent)
    : QMainWindow(parent), memory_limit_(default_memory_budget()), options_(options) {
    setObjectName(QStringLiteral("main_window"));
    setAcceptDrops(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);

    parameters_ = new ParameterPanel(this);
    history_ = new HistoryPanel(this);
    statistics_ = new StatisticsPanel(this);
    pipeline_ = new PipelineView(this);
    tokens_ = new TokenTablePanel(this);
    logits_ = new LogitsEditor(&session_, this);
    banner_ = new ErrorBanner(this);
    result_ = new ResultBar(this);
    path_ = new TokenPathBar(this);
    views_ = new QTabWidget(this);
    views_->setObjectName(QStringLiteral("views"));
    views_->setDocumentMode(true);

    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->setSpacing(4);
    layout->addWidget(banner_);
    layout->addWidget(new ResultBarHolder(result_, central));
    layout->addWidget(path_);
    layout->addWidget(views_, 1);
    setCentralWidget(central);
    addView(pipeline_, QStringLiteral("Pipeline"));
    addView(tokens_, QStringLiteral("Tokens"));
    addView(logits_, QStringLiteral("Logits"));
    addInputViews();
    addGenerateView();
    addMultistepViews();
    // Short tab titles, so a laptop's 1280 px shows every tab; each tab's tooltip gives its full name.
    const std::pair<QWidget*, const char*> full_names[] = {
        {generate_, "Generate: a language model writes text through the pipeline"},
        {speculative_, "Speculative: a draft model proposes, the target verifies, round by round"},
        {beam_, "Beam: beam search on the model, drawn as a tree"},
        {pipeline_, "Pipeline: every stage of the contract's pipeline, then the draw"},
        {tokens_, "Token table: every token through every stage"},
        {logits_, "Logits input: the row, editable"},
        {compare_pipelines_, "Compare pipelines: two engines' pipelines on the same row and seed"},
        {histogram_, "Empirical sampling: many draws against the exact distribution"},
        {batch_compare_, "CPU vs batch engine: a [B, V] batch, row by row"},
        {verify_, "Verify a sampler: a sampler's own draws against the exact q"},
        {responses_, "Response: a server's response with logprobs, token by token"}};
    for (const auto& [view, name] : full_names) {
        for (int i = 0; i < views_->count(); ++i) {
            if (views_->widget(i) == view || views_->widget(i)->isAncestorOf(view)) views_->setTabToolTip(i, QString::fromUtf8(name));
        }
    }

    auto* parameters_scroll = new QScrollArea(this);
    parameters_scroll->setWidget(parameters_);
    parameters_scroll->setWidgetResizable(true);
    parameters_scroll->setFrameShape(QFrame::NoFrame);
    parameters_scroll->setObjectName(QStringLiteral("parameters_scroll"));
    parameters_scroll->setMinimumWidth(static_cast<int>(std::lround(kParametersWidth * fontScale())));
    // The llama.cpp group open needs a little more than the dock's laptop width (and then a vertical
    // bar): it scrolls sideways rather than cutting the rightmost buttons.
    parameters_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    auto* parameters_dock = makeDock(this, parameters_scroll, QStringLiteral("Parameters"), QStringLiteral("dock_parameters"));
    auto* history_dock = makeDock(this, history_, QStringLiteral("History"), QStringLiteral("dock_history"));
    auto* statistics_dock = makeDock(this, statistics_, QStringLiteral("Statistics"), QStringLiteral("dock_statistics"));
    parameters_->setTitle(QString());
    history_->setTitle(QString());
    statistics_->setTitle(QString());
    resizeDocks({parameters_dock, history_dock, statistics_dock}, {560, 200, 190}, Qt::Vertical);

    buildMenus();
    statusBar()->showMessage(QStringLiteral("Drop a logits file on the window, paste numbers, or pick an example."));

    connect(&worker_, &SamplingWorker::traceReady, this, &MainWindow::onTrace);
    connect(&worker_, &SamplingWorker::traceFailed, this, &MainWindow::onFailure);
    connect(parameters_, &ParameterPanel::paramsEdited, this, [this](const SamplingParams& params) {
        try {
            session_.setParams(params);
        } catch (const InputError& error) {
            parameters_->showEngineError(QString::fromStdString(error.field()), QString::fromUtf8(error.what()));
        }
    });
    // DRY's string breakers are matched against each token's text: the vocabulary's, else the row's own labels.
    parameters_->setTokenTexts([this] {
        std::vector<std::string> texts;
        if (const auto& vocabulary = session_.vocabulary()) {
            texts.resize(std::min(vocabulary->size(), session_.vocabSize()));
            for (std::size_t id = 0; id < texts.size(); ++id) texts[id] = token_bytes(vocabulary->pieces[id], vocabulary->encoding);
        } else {
            texts = session_.labels()->raw();
        }
        return texts;
    });
    connect(history_, &HistoryPanel::historyEdited, this,
            [this](const std::vector<std::int64_t>& prompt, const std::vector<std::int64_t>& output) {
                try {
                    session_.setHistory(prompt, output);
                } catch (const InputError& error) {
                    history_->showError(QString::fromStdString(error.field()), QString::fromUtf8(error.what()));
                }
            });
    connect(history_, &HistoryPanel::stepRequested, this, &MainWindow::step);
    connect(history_, &HistoryPanel::resetRequested, this, &MainWindow::resetRequest);
    connect(pipeline_, &PipelineView::topNChanged, this, [this](int) { scheduleSampling(); });
    // A plot switched to the whole vocabulary needs its curve: the worker makes curves only for those on show.
    connect(pipeline_, &PipelineView::plotModesChanged, this, &MainWindow::scheduleSampling);
    connect(pipeline_, &PipelineView::logScaleChanged, this, [this](bool) { redrawSelection(); });
    connect(pipeline_, &PipelineView::tokenClicked, this, &MainWindow::selectToken);
    connect(pipeline_, &PipelineView::exportPlotRequested, this, &MainWindow::exportPlotDialog);
    connect(tokens_, &TokenTablePanel::tokenSelected, this, &MainWindow::selectToken);
    connect(logits_, &LogitsEditor::openRequested, this, &MainWindow::openFileDialog);
    connect(logits_, &LogitsEditor::pasteRequested, this,
            [this] { pasteLogitsText(QApplication::clipboard()->text(), QStringLiteral("clipboard")); });
    connect(logits_, &LogitsEditor::errorRaised, this, &MainWindow::showError);

    connect(path_, &TokenPathBar::clearRequested, this, [this] { selectToken(-1); });
    connect(&session_, &Session::logitsChanged, this, [this] {
        // A selection names a token of the row it was made on: another row (an
        // example, a file, another size) clears it; an edited cell keeps it.
        if (selected_ >= 0 && (session_.source() != selected_source_ ||
                               static_cast<std::size_t>(selected_) >= session_.vocabSize())) {
            selectToken(-1);
        }
        // Accepted input makes an earlier refusal (a cell edit, a paste) stale; warnings are the new input's own.
        if (!banner_->isHidden() && !banner_->isWarning()) banner_->hide();
        parameters_->setParams(session_.params(), session_.vocabSize());
        history_->showRequest(session_.request(), *session_.labels(), session_.vocabulary().get());
        setWindowTitle(QStringLiteral("SampleScope: %1").arg(session_.source()));
        statusBar()->showMessage(QStringLiteral("Logits: %1, V = %2").arg(session_.source()).arg(session_.vocabSize()));
        scheduleSampling();
    });
    connect(&session_, &Session::paramsChanged, this, [this] {
        if (!(parameters_->params() == session_.params())) parameters_->setParams(session_.params(), session_.vocabSize());
        scheduleSampling();
    });
    connect(&session_, &Session::historyChanged, this, [this] {
        history_->showRequest(session_.request(), *session_.labels(), session_.vocabulary().get());
        scheduleSampling();
    });
    connect(&session_, &Session::labelsChanged, this, [this] {
        history_->showRequest(session_.request(), *session_.labels(), session_.vocabulary().get());
        scheduleSampling();
    });
    // Views fed with the input learn of every change; only the one on show recomputes.
    for (const auto signal : {&Session::logitsChanged, &Session::paramsChanged, &Session::historyChanged, &Session::labelsChanged}) {
        connect(&session_, signal, this, &MainWindow::inputChanged);
    }
    connect(views_, &QTabWidget::currentChanged, this, [this](int) {
        refreshShownView();
        // Only the stage plots on show are drawn at each trace; the others catch up when shown.
        if (views_->currentWidget() == pipeline_ && pipeline_stale_ && view_) {
            pipeline_stale_ = false;
            pipeline_->showView(view_, selected_);
        }
        // Curves are made for the plots on show: the other view's plots may want others.
        if (activePipelineView()->plotModes() != submitted_modes_) scheduleSampling();
    });
    tensor_chooser_ = [this](const QString& file, const QStringList& tensors) {
        bool ok = false;
        const int logits_at = static_cast<int>(tensors.indexOf(QStringLiteral("logits")));
        const QString chosen = QInputDialog::getItem(this, QStringLiteral("Choose a tensor"),
                                                     QStringLiteral("%1 holds %2 float tensors. Open which one?")
                                                         .arg(QFileInfo(file).fileName())
                                                         .arg(tensors.size()),
                                                     tensors, std::max(0, logits_at), false, &ok);
        return ok ? chosen : QString();
    };

    resize(defaultWindowSize());
    loadExample(realisticExample());
    if (options_.persist_settings) restoreSettings();
    undo_.clear();  // undo stops at the window's first input
}

MainWindow::~MainWindow() = default;

int MainWindow::addView(QWidget* view, const QString& title) { return views_->addTab(view, title); }

// In a scroll area, so a wide view never widens the window (a tab widget is
// as wide as its widest page).
QScrollArea* MainWindow::scrolledPage(QWidget* view) {
    auto* page = new QScrollArea(this);
    page->setWidget(view);
    page->setWidgetResizable(true);
    page->setFrameShape(QFrame::NoFrame);
    return page;
}

int MainWindow::addInputView(QWidget* view, const QString& title, std::function<void(const WindowInput&)> feed) {
    QScrollArea* page = scrolledPage(view);
    input_views_.push_back(InputView{page, std::move(feed), 0});
    return addView(page, title);
}

// The Generate tab, first among the tabs: the app opens on it when its model is installed.
void MainWindow::addGenerateView() {
    generate_ = new GenerateView(&session_, this);
    views_->insertTab(0, generate_, QStringLiteral("Generate"));
    connect(generate_, &GenerateView::errorRaised, this, &MainWindow::showError);
    connect(generate_, &GenerateView::statusMessage, this, [this](const QString& message) { statusBar()->showMessage(message); });
    // Its plots have the Pipeline tab's controls: one number of bars, one scale, one view for both.
    PipelineView* plots = generate_->pipelineView();
    connect(plots->topNBox(), qOverload<int>(&QSpinBox::valueChanged), pipeline_->topNBox(), &QSpinBox::setValue);
    connect(pipeline_->topNBox(), qOverload<int>(&QSpinBox::valueChanged), plots->topNBox(), &QSpinBox::setValue);
    connect(plots->logScaleBox(), &QCheckBox::toggled, pipeline_->logScaleBox(), &QCheckBox::setChecked);
    connect(pipeline_->logScaleBox(), &QCheckBox::toggled, plots->logScaleBox(), &QCheckBox::setChecked);
    connect(plots->viewBox(), qOverload<int>(&QComboBox::currentIndexChanged), pipeline_->viewBox(), &QComboBox::setCurrentIndex);
    connect(pipeline_->viewBox(), qOverload<int>(&QComboBox::currentIndexChanged), plots->viewBox(), &QComboBox::setCurrentIndex);
    connect(plots, &PipelineView::plotModesChanged, this, &MainWindow::scheduleSampling);
    connect(plots, &PipelineView::logScaleChanged, this, [this](bool) { redrawSelection(); });
    connect(plots, &PipelineView::exportPlotRequested, this, &MainWindow::exportPlotDialog);
}

// Speculative decoding and beam search, right after the Generate tab: both write with its model.
void MainWindow::addMultistepViews() {
    multistep_model_ = new ModelSlot(this);
    multistep_model_->setBorrow([this] { return generate_->model(); });
    generate_->setModelSource([this] { return multistep_model_->sharedDefault(); });
    speculative_ = new SpeculativeView(&session_, multistep_model_, this);
    views_->insertTab(1, speculative_, QStringLiteral("Speculative"));
    beam_ = new BeamView(&session_, multistep_model_, this);
    views_->insertTab(2, beam_, QStringLiteral("Beam"));
    const auto status = [this](const QString& message) { statusBar()->showMessage(message); };
    connect(multistep_model_, &ModelSlot::errorRaised, this, &MainWindow::showError);
    connect(multistep_model_, &ModelSlot::statusMessage, this, status);
    connect(speculative_, &SpeculativeView::errorRaised, this, &MainWindow::showError);
    connect(speculative_, &SpeculativeView::statusMessage, this, status);
    connect(beam_, &BeamView::errorRaised, this, &MainWindow::showError);
    connect(beam_, &BeamView::statusMessage, this, status);
}

PipelineView* MainWindow::activePipelineView() const {
    return views_->currentWidget() == generate_ ? generate_->pipelineView() : pipeline_;
}

void MainWindow::showView(QWidget* view) {
    // A page of a tab widget inside a view (Compare pipelines' stage plots) comes to the front of its own tabs too.
    for (QWidget* page = view; page && page != this; page = page->parentWidget()) {
        auto* stack = qobject_cast<QStackedWidget*>(page->parentWidget());
        auto* tabs = stack ? qobject_cast<QTabWidget*>(stack->parentWidget()) : nullptr;
        if (tabs && tabs != views_) tabs->setCurrentWidget(page);
    }
    for (int i = 0; i < views_->count(); ++i) {
        if (views_->widget(i) == view || views_->widget(i)->isAncestorOf(view)) {
            views_->setCurrentIndex(i);
            return;
        }
    }
}

// Views over the same input as the pipeline plots. One more view (a
// CPU-versus-GPU comparison, say) is one more addInputView() call at the end
// of this function, with its library linked into samplescope_ui.
void MainWindow::addInputViews() {
    compare_pipelines_ = new PipelineCompareView(this);
    compare_pipelines_->setObjectName(QStringLiteral("compare_pipelines"));
    addInputView(compare_pipelines_, QStringLiteral("Compare"), [this](const WindowInput& input) {
        compare_pipelines_->setInput(input.logits, input.labels, input.params, input.prompt_ids, input.output_ids,
                                     input.mirostat_mu);
    });
    // Each side's stages as stage plots, beside the final q: where llama.cpp's extra stages are drawn.
    stage_plots_a_ = new PipelineStagePlots(compare_pipelines_);
    stage_plots_b_ = new PipelineStagePlots(compare_pipelines_);
    compare_pipelines_->plotTabs()->addTab(stage_plots_a_, QStringLiteral("Stages of A"));
    compare_pipelines_->plotTabs()->addTab(stage_plots_b_, QStringLiteral("Stages of B"));
    connect(compare_pipelines_, &PipelineCompareView::diffChanged, this, [this] {
        const auto& diff = compare_pipelines_->diff();
        auto labels = std::make_shared<const TokenLabels>(std::vector<std::string>{}, compare_pipelines_->labels());
        const QString none = QStringLiteral("No run: the input is missing or refused.");
        stage_plots_a_->setTrace(diff ? std::make_shared<const PipelineTrace>(diff->a) : nullptr, labels, none);
        stage_plots_b_->setTrace(diff ? std::make_shared<const PipelineTrace>(diff->b) : nullptr, labels, none);
    });
    connect(compare_pipelines_, &PipelineCompareView::defaultsLoaded, this,
            [this](const QString& changes) { statusBar()->showMessage(changes + QStringLiteral(" (Ctrl+Z undoes it)")); });
    // "Load this engine's defaults" there is a user's choice: it becomes the window's parameters.
    connect(compare_pipelines_, &PipelineCompareView::paramsChanged, this, [this](const SamplingParams& params) {
        try {
            session_.setParams(params);
        } catch (const InputError& error) {
            showError(QString::fromUtf8(error.what()));
        }
    });

    histogram_ = new EmpiricalHistogramView(this);
    histogram_->setObjectName(QStringLiteral("empirical_sampling"));
    addInputView(histogram_, QStringLiteral("Histogram"), [this](const WindowInput& input) {
        histogram_->setInput(input.logits, input.labels, input.params, input.prompt_ids, input.output_ids);
    });

    // The CPU-versus-batch-engine comparison works on its own [B, V] batch; a
    // double-clicked row opens here, in the stage view, with its stream position.
    batch_compare_ = new CompareView(this);
    batch_compare_->setObjectName(QStringLiteral("batch_compare"));
    addView(scrolledPage(batch_compare_), QStringLiteral("Batch"));
    connect(batch_compare_, &CompareView::openRowRequested, this,
            [this](std::vector<double> logits, SamplingParams params, std::vector<std::int64_t> prompt,
                   std::vector<std::int64_t> output, std::uint64_t skip_draws) {
                const Example row{"Batch row", "A row of the CPU vs batch engine tab's batch", std::move(logits), {},
                                  params, std::move(prompt), std::move(output)};
                if (!loadExample(row)) return;
                session_.skipDraws(skip_draws);
                showView(pipeline_);
            });

    // A sampler's own draws against the exact q; it opens its own files.
    auto* verify = new VerifyView(this);
    verify_ = verify;
    verify->setObjectName(QStringLiteral("verify_sampler"));
    addView(scrolledPage(verify), QStringLiteral("Verify"));

    // A server's response with logprobs; it opens its own files, and a token opens here as a row.
    responses_ = new ResponseView(this);
    responses_->setObjectName(QStringLiteral("responses"));
    addView(scrolledPage(responses_), QStringLiteral("Response"));
    connect(responses_, &ResponseView::errorRaised, this, &MainWindow::showError);
    connect(responses_, &ResponseView::openRowRequested, this, &MainWindow::openResponseRow);
    connect(responses_, &ResponseView::responseOpened, this, [this](const QString& source) {
        banner_->hide();
        statusBar()->showMessage(QStringLiteral("Response %1: %2").arg(QFileInfo(source).fileName(), responses_->summaryText().section('\n', 0, 0)));
    });
}

bool MainWindow::openResponseRow() {
    try {
        const ResponseRow row = responses_->selectedRow();
        const int position = responses_->selectedPosition();
        const QString approximate = row.approximate ? QStringLiteral(" (approximation: top N + rest)") : QString();
        const Example example{QStringLiteral("%1, token %2%3")
                                  .arg(QFileInfo(QString::fromStdString(responses_->response()->source)).fileName())
                                  .arg(position)
                                  .arg(approximate)
                                  .toStdString(),
                              row.note, row.logits, row.labels, row.params, {}, {}};
        if (!loadExample(example)) return false;
        compare_pipelines_->setPipelines(responses_->setup()->settings.pipeline, preset_pipeline("spec"));
        showView(pipeline_);
        if (row.token) selectToken(static_cast<std::int32_t>(*row.token));
        if (row.approximate) {
            banner_->showWarning(QStringLiteral("An approximation, %1.").arg(QString::fromStdString(row.note)));
        }
        statusBar()->showMessage(QString::fromStdString(row.note));
        return true;
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()));
    }
    return false;
}

WindowInput MainWindow::currentInput() const {
    const Request& request = session_.request();
    return WindowInput{*session_.logits(), session_.labels()->display(), session_.params(), request.prompt_ids(),
                       request.output_ids(), session_.mirostatMu()};
}

void MainWindow::inputChanged() {
    ++input_generation_;
    if (refresh_scheduled_) return;
    refresh_scheduled_ = true;
    // A burst of changes (an example sets logits, parameters and history; a
    // slider drag) becomes one refresh.
    QTimer::singleShot(0, this, [this] {
        refresh_scheduled_ = false;
        refreshShownView();
    });
}

void MainWindow::refreshShownView() {
    for (auto& view : input_views_) {
        if (view.widget != views_->currentWidget() || view.fed_generation == input_generation_) continue;
        view.fed_generation = input_generation_;
        view.feed(currentInput());
    }
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
    file->addAction(QStringLiteral("&Open logits..."), QKeySequence::Open, this, &MainWindow::openFileDialog);
    file->addAction(QStringLiteral("Open logits, reading <u2 as &bfloat16..."), this, &MainWindow::openU2AsBf16Dialog);
    file->addAction(QStringLiteral("Open &vocabulary..."), this, &MainWindow::openVocabularyDialog);
    file->addAction(QStringLiteral("C&lear vocabulary"), this, &MainWindow::clearVocabulary);
    file->addAction(QStringLiteral("Open &response..."), this, [this] {
        showView(responses_);
        responses_->openResponseDialog();
    })->setObjectName(QStringLiteral("action_open_response"));
    file->addAction(QStringLiteral("&Memory limit for files..."), this, [this] {
        bool ok = false;
        const QString text = QInputDialog::getText(
            this, QStringLiteral("Memory limit for files"),
            QStringLiteral("The most a logits file may need as doubles, as --max-memory takes it: 4G, 512M, 64K or "
                           "bytes, at least 1M; empty for the default (%1 MiB).")
                .arg(default_memory_budget() >> 20),
            QLineEdit::Normal, QStringLiteral("%1M").arg(memory_limit_ >> 20), &ok);
        if (ok) setMemoryLimitText(text);
    });
    file->addSeparator();
    file->addAction(QStringLiteral("Export trace as &JSON..."), this, &MainWindow::exportTraceDialog);
    file->addAction(QStringLiteral("Export token table as &CSV..."), this, &MainWindow::exportTableDialog);
    file->addAction(QStringLiteral("Export all &plots (PNG or PDF)..."), this, &MainWindow::exportAllPlotsDialog);
    file->addAction(QStringLiteral("Save &window image..."), this, [this] {
        const DialogFolders folders(options_.persist_settings);
        const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Save window image"),
                                                          folders.startPath(QStringLiteral("window_image"), QStringLiteral("samplescope.png")),
                                                          QStringLiteral("PNG (*.png)"));
        if (path.isEmpty()) return;
        folders.remember(QStringLiteral("window_image"), path);
        try {
            exportWidgetPng(*this, path);
        } catch (const InputError& error) {
            showError(QString::fromUtf8(error.what()));
        }
    });
    file->addSeparator();
    file->addAction(QStringLiteral("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu(QStringLiteral("&Edit"));
    QAction* undo = undo_.stack()->createUndoAction(this, QStringLiteral("&Undo"));
    undo->setObjectName(QStringLiteral("action_undo"));
    undo->setShortcuts(QKeySequence::Undo);
    QAction* redo = undo_.stack()->createRedoAction(this, QStringLiteral("&Redo"));
    redo->setObjectName(QStringLiteral("action_redo"));
    redo->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    edit->addAction(QStringLiteral("&Paste logits"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_V), this,
                    [this] { pasteLogitsText(QApplication::clipboard()->text(), QStringLiteral("clipboard")); });
    edit->addAction(QStringLiteral("&Add token row"), logits_, &LogitsEditor::addRow);
    edit->addAction(QStringLiteral("&Delete selected token rows"), logits_, &LogitsEditor::deleteSelectedRows);

    QMenu* examples = menuBar()->addMenu(QStringLiteral("E&xamples"));
    for (const auto& make : {&workedExample, &abcdExample, &realisticExample}) {
        const Example example = make();
        QAction* action = examples->addAction(QString::fromStdString(example.name), this, [this, make] { loadExample(make()); });
        action->setStatusTip(QString::fromStdString(example.description));
    }
    QMenu* engines = examples->addMenu(QStringLiteral("Where engines differ"));
    engines->setObjectName(QStringLiteral("engines_menu"));
    for (const PipelineExample& example : pipeline_examples()) {
        QAction* action = engines->addAction(QString::fromStdString(example.title), this,
                                             [this, &example] { loadPipelineExample(example); });
        action->setStatusTip(QString::fromStdString(example.description));
        action->setData(QString::fromStdString(example.key));
    }
    QMenu* samplers = examples->addMenu(QStringLiteral("llama.cpp samplers"));
    samplers->setObjectName(QStringLiteral("samplers_menu"));
    samplers->setToolTipsVisible(true);
    for (const SamplerExample& example : samplerExamples()) {
        QAction* action = samplers->addAction(QString::fromStdString(example.title), this,
                                              [this, &example] { loadSamplerExample(example); });
        action->setStatusTip(QString::fromStdString(example.description));
        action->setToolTip(QString::fromStdString(example.description));
        action->setData(QString::fromStdString(example.key));
    }

    QMenu* sampling = menuBar()->addMenu(QStringLiteral("&Sampling"));
    sampling->addAction(QStringLiteral("&Step (accept the drawn token)"), QKeySequence(Qt::CTRL | Qt::Key_Return), this, &MainWindow::step);
    sampling->addAction(QStringLiteral("&Reset request"), QKeySequence(Qt::CTRL | Qt::Key_R), this, &MainWindow::resetRequest);
    sampling->addAction(QStringLiteral("Random &seed"), parameters_->randomSeedButton(), &QPushButton::click);
    sampling->addAction(QStringLiteral("Reset parameters to &defaults"), parameters_->defaultsButton(), &QPushButton::click);

    QMenu* view = menuBar()->addMenu(QStringLiteral("&View"));
    QAction* log_scale = view->addAction(QStringLiteral("&Log scale"));
    log_scale->setCheckable(true);
    connect(log_scale, &QAction::toggled, pipeline_->logScaleBox(), &QCheckBox::setChecked);
    connect(pipeline_->logScaleBox(), &QCheckBox::toggled, log_scale, &QAction::setChecked);
    QAction* presentation = view->addAction(QStringLiteral("&Presentation font size"));
    presentation->setObjectName(QStringLiteral("action_presentation_font"));
    presentation->setCheckable(true);
    presentation->setChecked(fontScale() != 1.0);
    presentation->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    presentation->setStatusTip(QStringLiteral("Every font and plot label %1 times larger, for a projector (--font-scale sets any factor)")
                                   .arg(kPresentationFontScale));
    connect(presentation, &QAction::toggled, this, [this](bool on) { setFontScale(on ? kPresentationFontScale : 1.0); });
    // Ctrl++ and Ctrl+- step the factor by a fifth, within its range.
    const auto step_font = [this](double by) {
        setFontScale(std::clamp(std::round(fontScale() * by * 100.0) / 100.0, kMinFontScale, kMaxFontScale));
    };
    QAction* larger = view->addAction(QStringLiteral("&Larger text"));
    larger->setObjectName(QStringLiteral("action_larger_text"));
    larger->setShortcuts(QKeySequence::ZoomIn);
    connect(larger, &QAction::triggered, this, [step_font] { step_font(1.2); });
    QAction* smaller = view->addAction(QStringLiteral("&Smaller text"));
    smaller->setObjectName(QStringLiteral("action_smaller_text"));
    smaller->setShortcuts(QKeySequence::ZoomOut);
    connect(smaller, &QAction::triggered, this, [step_font] { step_font(1.0 / 1.2); });
    // Ctrl+Tab and Ctrl+Shift+Tab cycle the views wherever the focus is (a table or a text box keeps its own Tab).
    QAction* next_tab = view->addAction(QStringLiteral("&Next tab"));
    next_tab->setObjectName(QStringLiteral("action_next_tab"));
    next_tab->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Tab), QKeySequence(Qt::CTRL | Qt::Key_PageDown)});
    connect(next_tab, &QAction::triggered, this, [this] { views_->setCurrentIndex((views_->currentIndex() + 1) % views_->count()); });
    QAction* previous_tab = view->addAction(QStringLiteral("P&revious tab"));
    previous_tab->setObjectName(QStringLiteral("action_previous_tab"));
    previous_tab->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Backtab), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Tab),
                                QKeySequence(Qt::CTRL | Qt::Key_PageUp)});
    connect(previous_tab, &QAction::triggered, this,
            [this] { views_->setCurrentIndex((views_->currentIndex() + views_->count() - 1) % views_->count()); });
    view->addSeparator();
    for (auto* dock : findChildren<QDockWidget*>()) view->addAction(dock->toggleViewAction());

    QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
    help->addAction(QStringLiteral("&How sampling works here"), QKeySequence::HelpContents, this,
                    [this] { showHelpDialog(this, QStringLiteral("How sampling works here"), howSamplingWorksHtml()); });
    help->addAction(QStringLiteral("&Glossary"), this, [this] {
        showHelpDialog(this, QStringLiteral("Glossary"), glossaryHtml());
    })->setObjectName(QStringLiteral("action_glossary"));
    help->addAction(QStringLiteral("&About SampleScope"), this,
                    [this] { showHelpDialog(this, QStringLiteral("About SampleScope"), aboutHtml()); });
}

void MainWindow::setFontScale(double factor) {
    ui::setFontScale(factor);  // throws InputError out of range: nothing changed
    // The parameters' dock is as wide as their text needs: its buttons are never cut.
    if (auto* scroll = findChild<QScrollArea*>(QStringLiteral("parameters_scroll"))) {
        scroll->setMinimumWidth(static_cast<int>(std::lround(kParametersWidth * factor)));
    }
    if (auto* action = findChild<QAction*>(QStringLiteral("action_presentation_font"))) {
        const QSignalBlocker block(action);
        action->setChecked(factor != 1.0);
    }
    statusBar()->showMessage(factor == 1.0 ? QStringLiteral("Font size: normal")
                                           : QStringLiteral("Font size: %1 times normal").arg(factor));
}

void MainWindow::scheduleSampling() {
    if (submit_scheduled_) return;
    submit_scheduled_ = true;
    // Several changes in one event (an example sets logits, parameters and history) become one request.
    QMetaObject::invokeMethod(this, &MainWindow::submitNow, Qt::QueuedConnection);
}

void MainWindow::submitNow() {
    submit_scheduled_ = false;
    const PipelineView* plots = activePipelineView();
    submitted_modes_ = plots->plotModes();
    worker_.submit(SamplingJob{session_.logits(), session_.labels(), session_.request(), plots->topN(), submitted_modes_, 0});
}

bool MainWindow::isDrawn() const {
    return !submit_scheduled_ && worker_.idle() && finished_generation_ == worker_.latestGeneration() &&
           (!generate_ || generate_->idle()) && (!speculative_ || speculative_->idle()) && (!beam_ || beam_->idle());
}

bool MainWindow::waitUntilDrawn(int timeout_ms) {
    QDeadlineTimer deadline(timeout_ms);
    while (!isDrawn() && !deadline.hasExpired()) {
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents, 5);
    }
    return isDrawn();
}

void MainWindow::onTrace(std::shared_ptr<const TraceView> view) {
    QElapsedTimer timer;
    timer.start();
    const double cpu_start = threadCpuMs();
    view_ = std::move(view);
    last_failure_.clear();
    finished_generation_ = view_->generation;
    if (selected_ >= 0 && static_cast<std::size_t>(selected_) >= view_->trace->vocab_size) selected_ = -1;
    if (views_->currentWidget() == generate_) {
        pipeline_stale_ = true;
    } else {
        pipeline_->showView(view_, selected_);
        pipeline_stale_ = false;
    }
    generate_->showTrace(view_, selected_);
    path_->showToken(view_, selected_);
    tokens_->setView(view_);
    statistics_->showView(view_);
    result_->showView(view_);
    parameters_->clearEngineErrors();
    parameters_->setKnobNotes(knob_notes(*view_->trace));
    last_display_ms_ = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    last_display_cpu_ms_ = threadCpuMs() - cpu_start;
    emit traceDisplayed(view_->generation);
}

void MainWindow::onFailure(std::uint64_t generation, const QString& field, const QString& message) {
    finished_generation_ = generation;
    last_failure_ = message;
    if (param_from_key(field.toStdString())) {
        parameters_->showEngineError(field, message);
    } else if (field == QStringLiteral("prompt_ids") || field == QStringLiteral("output_ids")) {
        history_->showError(field, message);
    } else {
        showError(message);
    }
}

void MainWindow::selectToken(std::int32_t id) {
    if (id == selected_) return;
    selected_ = id;
    selected_source_ = session_.source();
    tokens_->selectToken(id);
    redrawSelection();
    path_->showToken(view_, selected_);
    if (view_ && id >= 0) {
        statusBar()->showMessage(QStringLiteral("Selected %1 (id %2)").arg(QString::fromStdString(view_->labels->label(id))).arg(id));
    }
}

void MainWindow::redrawSelection() {
    // Each plot ranks the selected token in the trace it shows.
    if (!view_) return;
    if (views_->currentWidget() == generate_) {
        pipeline_stale_ = true;
    } else {
        pipeline_->showView(view_, selected_);
    }
    generate_->showTrace(view_, selected_);
}

void MainWindow::showError(const QString& message) { banner_->showError(message); }

bool MainWindow::openLogitsFile(const QString& path, const QString& tensor, bool u2AsBf16) {
    try {
        LoadOptions options;
        options.memory_limit_bytes = memory_limit_;
        options.tensor = tensor.toStdString();
        options.u2_as_bfloat16 = u2AsBf16;
        options.u2_as_bfloat16_option = "File > \"Open logits, reading <u2 as bfloat16...\"";
        if (tensor.isEmpty() && path.endsWith(QStringLiteral(".safetensors"), Qt::CaseInsensitive)) {
            QStringList names;
            for (const auto& name : safetensors_float_tensors(path.toStdString())) names << QString::fromStdString(name);
            if (names.size() > 1) {
                const QString chosen = tensor_chooser_(path, names);
                if (chosen.isEmpty()) return false;  // cancelled: nothing changes
                options.tensor = chosen.toStdString();
            }
        }
        LogitsMatrix matrix = load_logits_file(path.toStdString(), options);
        QStringList notes;
        for (const auto& note : matrix.notes) notes << QString::fromStdString(note);
        session_.setMatrix(std::move(matrix), QFileInfo(path).fileName());
        showLabelWarningsOrHideBanner();
        statusBar()->showMessage(notes.isEmpty() ? QStringLiteral("Opened %1").arg(path)
                                                 : QStringLiteral("Opened %1: %2").arg(path, notes.join(QStringLiteral("; "))));
        return true;
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()) + QStringLiteral(". The previous logits are unchanged."));
    } catch (const std::bad_alloc&) {
        showError(path + QStringLiteral(": out of memory while loading it. The previous logits are unchanged."));
    } catch (const std::exception& error) {
        showError(path + QStringLiteral(": ") + QString::fromUtf8(error.what()) + QStringLiteral(". The previous logits are unchanged."));
    }
    return false;
}

bool MainWindow::setMemoryLimitText(const QString& text) {
    try {
        memory_limit_ = parse_memory_budget(text.trimmed().toStdString());
        statusBar()->showMessage(QStringLiteral("Files may need up to %1 MiB as doubles").arg(memory_limit_ >> 20));
        return true;
    } catch (const InputError& error) {
        // The library names the CLI's flag; a GUI user set the limit through the menu entry.
        QString message = QString::fromUtf8(error.what());
        message.replace(QStringLiteral("--max-memory"), QStringLiteral("File > \"Memory limit for files...\""));
        showError(message + QStringLiteral(". The memory limit stays %1 MiB.").arg(memory_limit_ >> 20));
    }
    return false;
}

bool MainWindow::pasteLogitsText(const QString& text, const QString& source) {
    try {
        LogitsMatrix matrix = parse_logits_text(text.toStdString(), source.toStdString());
        session_.setLogits(std::move(matrix.values), std::move(matrix.labels), source);
        showLabelWarningsOrHideBanner();
        return true;
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()) + QStringLiteral(". The previous logits are unchanged."));
    }
    return false;
}

bool MainWindow::loadExample(const Example& example) {
    try {
        session_.loadExample(example);
        showLabelWarningsOrHideBanner();
        statusBar()->showMessage(QString::fromStdString(example.description));
        return true;
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()));
    }
    return false;
}

bool MainWindow::loadPipelineExample(const PipelineExample& example) {
    const Example as_row{example.title,  example.description, example.logits,    example.labels,
                         example.params, example.prompt_ids,  example.output_ids};
    if (!loadExample(as_row)) return false;
    compare_pipelines_->showExample(example);
    // The tab then refreshes from the window's input (the same row, plus a vocabulary's labels if one is loaded).
    showView(compare_pipelines_);
    refreshShownView();
    return true;
}

bool MainWindow::loadSamplerExample(const SamplerExample& example) {
    Pipeline a;
    Pipeline b;
    try {
        a = samplerExamplePipeline(example.pipeline_a);
        b = samplerExamplePipeline(example.pipeline_b);
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()));
        return false;
    }
    const Example as_row{example.title,  example.description, example.logits,    example.labels,
                         example.params, example.prompt_ids,  example.output_ids};
    if (!loadExample(as_row)) return false;
    compare_pipelines_->setPipelines(a, b);
    // The side that runs the sampler, as stage plots; the tab refreshes from the window's input.
    showView(pipelineStagePlots(example.stages_side));
    refreshShownView();
    return true;
}

bool MainWindow::openVocabularyFile(const QString& path) {
    try {
        setVocabulary(load_vocabulary(path.toStdString()));
        return true;
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()) + QStringLiteral(". The previous labels are unchanged."));
    } catch (const std::exception& error) {
        showError(path + QStringLiteral(": ") + QString::fromUtf8(error.what()) + QStringLiteral(". The previous labels are unchanged."));
    }
    return false;
}

void MainWindow::setVocabulary(Vocabulary vocabulary) {
    const QString name = QFileInfo(QString::fromStdString(vocabulary.source)).fileName();
    const auto size = vocabulary.size();
    const QString format = QString::fromUtf8(vocabulary_format_name(vocabulary.format));
    const QString encoding = QString::fromUtf8(token_encoding_name(vocabulary.encoding));
    session_.setVocabulary(std::make_shared<const Vocabulary>(std::move(vocabulary)));
    showLabelWarningsOrHideBanner();
    statusBar()->showMessage(QStringLiteral("Vocabulary %1: %2 tokens (%3, %4 pieces)").arg(name).arg(size).arg(format, encoding));
}

void MainWindow::clearVocabulary() {
    session_.clearVocabulary();
    showLabelWarningsOrHideBanner();
    statusBar()->showMessage(QStringLiteral("Vocabulary cleared: tokens are named by the row's own labels or ids."));
}

// After accepted input: the vocabulary's warnings for the current V, else a clear banner.
void MainWindow::showLabelWarningsOrHideBanner() {
    QStringList warnings;
    for (const auto& warning : session_.labelWarnings()) warnings << QString::fromStdString(warning);
    if (warnings.isEmpty()) {
        banner_->hide();
    } else {
        banner_->showWarning(warnings.join(QStringLiteral("; ")));
    }
}

// The mu after this input's step on Compare pipelines' side that runs mirostat
// (A first), from a run on the window's current input; nothing when neither does.
std::optional<MirostatStep> MainWindow::pipelineMirostatStep() {
    const WindowInput input = currentInput();
    compare_pipelines_->setInput(input.logits, input.labels, input.params, input.prompt_ids, input.output_ids,
                                 input.mirostat_mu);
    const auto& diff = compare_pipelines_->diff();
    if (!diff) return std::nullopt;
    return diff->a.mirostat ? diff->a.mirostat : diff->b.mirostat;
}

void MainWindow::step() {
    // On a generation's step, a step writes the token into its text (and asks the model for the next row).
    if (generate_->attached()) {
        generate_->step();
        return;
    }
    try {
        // Mirostat's mu moves with each step of the pipeline that runs it (llama.cpp's
        // accept): taken before the history grows, kept only when the step succeeds.
        bool carried = false;
        double mu_from = 0.0;
        double mu_to = 0.0;
        if (uses_mirostat(session_.params())) {
            if (const std::optional<MirostatStep> mirostat = pipelineMirostatStep()) {
                carried = true;
                mu_from = mirostat->mu_before;
                mu_to = mirostat->mu_after;
            }
        }
        const std::optional<double> mu_before = session_.mirostatMu();
        if (carried) session_.setMirostatMu(mu_to);
        SampleTrace trace;
        try {
            trace = session_.step();
        } catch (const InputError&) {
            session_.setMirostatMu(mu_before);
            throw;
        }
        QString message = QStringLiteral("Accepted %1 (id %2); draws consumed %3.")
                              .arg(QString::fromStdString(session_.labels()->label(trace.token)))
                              .arg(trace.token)
                              .arg(trace.draws_consumed);
        if (carried) {
            message += QStringLiteral(" Mirostat mu %1 -> %2 (the pipeline's own token).")
                           .arg(QString::number(mu_from, 'g', 6), QString::number(mu_to, 'g', 6));
        }
        statusBar()->showMessage(message);
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()));
    }
}

void MainWindow::resetRequest() {
    if (generate_->attached()) {
        generate_->goToStart();
        statusBar()->showMessage(QStringLiteral("Back to the step after the prompt; the text stays in the Generate tab's tree."));
        return;
    }
    session_.resetRequest();
    QString message = QStringLiteral("Request reset: back to the seed's first draw.");
    if (uses_mirostat(session_.params())) {
        message += QStringLiteral(" Mirostat mu back to 2 tau = %1.").arg(QString::number(session_.mirostatMuNow(), 'g', 6));
    }
    statusBar()->showMessage(message);
}

void MainWindow::saveScreenshot(const QString& path) {
    if (!isVisible()) show();
    if (!waitUntilDrawn()) throw InputError("screenshot", "the window was not drawn in time");
    QCoreApplication::processEvents();
    exportWidgetPng(*this, path);
}

void MainWindow::openFileDialog() {
    const DialogFolders folders(options_.persist_settings);
    const QString path = QFileDialog::getOpenFileName(
        this, QStringLiteral("Open logits"), folders.startPath(QStringLiteral("logits")),
        QStringLiteral("Logits (*.npy *.safetensors *.json *.txt *.csv *.tsv);;All files (*)"));
    if (path.isEmpty()) return;
    folders.remember(QStringLiteral("logits"), path);
    openLogitsFile(path);
}

// The CLI's --u2-as-bf16: .npy files whose uint16 data are bfloat16 bits.
void MainWindow::openU2AsBf16Dialog() {
    const DialogFolders folders(options_.persist_settings);
    const QString path = QFileDialog::getOpenFileName(
        this, QStringLiteral("Open logits, reading <u2 as bfloat16"), folders.startPath(QStringLiteral("logits")),
        QStringLiteral("NumPy arrays (*.npy);;All files (*)"));
    if (path.isEmpty()) return;
    folders.remember(QStringLiteral("logits"), path);
    openLogitsFile(path, {}, true);
}

void MainWindow::openVocabularyDialog() {
    const DialogFolders folders(options_.persist_settings);
    const QString path = QFileDialog::getOpenFileName(
        this, QStringLiteral("Open vocabulary"), folders.startPath(QStringLiteral("vocabulary")),
        QStringLiteral("Vocabularies (tokenizer.json vocab.json *.json *.txt *.gguf);;All files (*)"));
    if (path.isEmpty()) return;
    folders.remember(QStringLiteral("vocabulary"), path);
    openVocabularyFile(path);
}

void MainWindow::exportPlotDialog(QCustomPlot* plot) {
    const DialogFolders folders(options_.persist_settings);
    const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export plot"),
                                                      folders.startPath(QStringLiteral("export_plot"), plot->objectName() + QStringLiteral(".png")),
                                                      QStringLiteral("PNG (*.png);;PDF (*.pdf)"));
    if (path.isEmpty()) return;
    folders.remember(QStringLiteral("export_plot"), path);
    try {
        exportPlot(*plot, path);
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()));
    }
}

void MainWindow::exportAllPlotsDialog() {
    const DialogFolders folders(options_.persist_settings);
    const QString folder = QFileDialog::getExistingDirectory(this, QStringLiteral("Export every plot to a folder"),
                                                             folders.startPath(QStringLiteral("export_plots")));
    if (folder.isEmpty()) return;
    folders.remember(QStringLiteral("export_plots"), folder);
    if (pipeline_stale_ && view_) {  // drawn only while its tab is on show
        pipeline_->showView(view_, selected_);
        pipeline_stale_ = false;
    }
    try {
        for (QCustomPlot* plot : pipeline_->allPlots()) {
            for (const char* suffix : {".png", ".pdf"}) {
                exportPlot(*plot, QDir(folder).filePath(plot->objectName() + QLatin1String(suffix)));
            }
        }
        statusBar()->showMessage(QStringLiteral("Exported %1 plots to %2").arg(pipeline_->allPlots().size()).arg(folder));
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()));
    }
}

void MainWindow::exportTraceDialog() {
    if (!view_) return;
    const DialogFolders folders(options_.persist_settings);
    const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export trace"),
                                                      folders.startPath(QStringLiteral("export_trace"), QStringLiteral("trace.json")),
                                                      QStringLiteral("JSON (*.json)"));
    if (path.isEmpty()) return;
    folders.remember(QStringLiteral("export_trace"), path);
    try {
        exportTraceJson(*view_->trace, path);
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()));
    }
}

void MainWindow::exportTableDialog() {
    const DialogFolders folders(options_.persist_settings);
    const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export token table"),
                                                      folders.startPath(QStringLiteral("export_table"), QStringLiteral("tokens.csv")),
                                                      QStringLiteral("CSV (*.csv)"));
    if (path.isEmpty()) return;
    folders.remember(QStringLiteral("export_table"), path);
    try {
        exportTableCsv(*tokens_->model(), path);
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()));
    }
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls() || event->mimeData()->hasText()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QMimeData* mime = event->mimeData();
    if (mime->hasUrls() && !mime->urls().isEmpty() && mime->urls().front().isLocalFile()) {
        openLogitsFile(mime->urls().front().toLocalFile());
    } else if (mime->hasText()) {
        pasteLogitsText(mime->text(), QStringLiteral("dropped text"));
    } else {
        showError(QStringLiteral("only local files and text can be dropped here"));
    }
    event->acceptProposedAction();
}

void MainWindow::restoreSettings() {
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    pipeline_->topNBox()->setValue(settings.value(QStringLiteral("view/top_n"), 30).toInt());
    pipeline_->logScaleBox()->setChecked(settings.value(QStringLiteral("view/log_scale"), false).toBool());
    parameters_->setExtrasExpanded(settings.value(QStringLiteral("view/llamacpp_samplers_open"), false).toBool());
    if (!settings.contains(QStringLiteral("params/temperature"))) return;
    SamplingParams params = session_.params();
    try {
        for (const auto& info : kParams) {
            const QVariant value = settings.value(QStringLiteral("params/") + keyText(info.key));
            if (value.isValid()) set_param(params, info.param, value.toDouble());
        }
        const QString seed = settings.value(QStringLiteral("params/seed")).toString();
        if (!seed.isEmpty()) params.seed = parse_seed(seed.toStdString());
        session_.setParams(params);
    } catch (const InputError&) {
        statusBar()->showMessage(QStringLiteral("The saved parameters were not valid; using the example's."));
    }
}

void MainWindow::saveSettings() const {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("view/top_n"), pipeline_->topNBox()->value());
    settings.setValue(QStringLiteral("view/log_scale"), pipeline_->logScale());
    settings.setValue(QStringLiteral("view/llamacpp_samplers_open"), parameters_->extrasExpanded());
    const SamplingParams& params = session_.params();
    for (const auto& info : kParams) settings.setValue(QStringLiteral("params/") + keyText(info.key), param_value(params, info.param));
    if (params.seed) settings.setValue(QStringLiteral("params/seed"), QString::number(*params.seed));
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (options_.persist_settings) saveSettings();
    QMainWindow::closeEvent(event);
}

}  // namespace samplescope::ui
