#include "ui/multistep/speculative_view.h"

#include <algorithm>
#include <array>

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/models/model_source.h"
#include "engine/models/ngram_model.h"
#include "ui/common/count_text.h"
#include "ui/multistep/checked_spin_box.h"
#include "ui/session/session.h"

namespace samplescope::ui {

namespace {

constexpr int kMaxRoundsPerRun = 1000;  // one Run press; more is several

QString qs(const std::string& text) { return QString::fromStdString(text); }
QString qs(std::string_view text) { return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size())); }
QString num(double value) { return QString::number(value, 'f', 3); }
QString quoted(const std::string& text) { return QStringLiteral("\u201c%1\u201d").arg(qs(text).toHtmlEscaped()); }

// Whether a token joins the word before it without a space, by join_token_texts' own rule.
bool attaches(const std::string& text) {
    const std::array<std::string, 2> pair{"w", text};
    return join_token_texts(pair).size() == 1 + text.size();
}

struct SourceStyle {
    QColor fill;
    QString mark;
    const char* words;
};

SourceStyle sourceStyle(SpecSource source) {
    switch (source) {
        case SpecSource::Residual: return {QColor(0xEB, 0xC9, 0xDC), QStringLiteral("r"), "redrawn from the residual"};
        case SpecSource::Bonus: return {QColor(0xC4, 0xDD, 0xF0), QStringLiteral("+"), "the bonus token, from p"};
        case SpecSource::Accepted: break;
    }
    return {QColor(0xBF, 0xE6, 0xD6), QString(), "the draft's, accepted"};
}

QString legendHtml() {
    QString out = QStringLiteral("Each token: ");
    for (const auto source : {SpecSource::Accepted, SpecSource::Residual, SpecSource::Bonus}) {
        const SourceStyle style = sourceStyle(source);
        out += QStringLiteral("<span style='background-color:%1;'>&nbsp;%2%3&nbsp;</span> ")
                   .arg(style.fill.name(), QString::fromUtf8(style.words),
                        style.mark.isEmpty() ? QString() : QStringLiteral(" <sup><b>%1</b></sup>").arg(style.mark));
    }
    return out + QStringLiteral("\u00b7 outlined: the round on show (click a token for its round)");
}

}  // namespace

// A prompt whose first rounds, at the window's default parameters, show accepts, a rejection and its residual.
QString SpeculativeView::defaultPrompt() { return QStringLiteral("once upon a time"); }

SpeculativeView::SpeculativeView(Session* session, ModelSlot* model, QWidget* parent)
    : QWidget(parent), session_(session), model_(model) {
    setObjectName(QStringLiteral("speculative_view"));

    prompt_ = new QLineEdit(defaultPrompt(), this);
    prompt_->setObjectName(QStringLiteral("speculative_prompt"));
    prompt_->setMaxLength(static_cast<int>(kMaxPromptBytes) + 1);
    prompt_->setToolTip(QStringLiteral("Words both models continue. Enter starts a new run from them."));
    start_ = new QPushButton(QStringLiteral("Start"), this);
    start_->setObjectName(QStringLiteral("speculative_start"));
    start_->setToolTip(QStringLiteral("A new run from this prompt with the draft, k, the rules and the window's parameters now"));
    draft_ = new QComboBox(this);
    draft_->setObjectName(QStringLiteral("speculative_draft"));
    draft_->addItem(QStringLiteral("bigram"), QStringLiteral("ngram:bigram"));
    draft_->setItemData(0, QStringLiteral("The model on the last word only: cheaper, and worse"), Qt::ToolTipRole);
    draft_->addItem(QStringLiteral("unigram"), QStringLiteral("ngram:unigram"));
    draft_->setItemData(1, QStringLiteral("The model with no context at all: word frequencies"), Qt::ToolTipRole);
    draft_->setToolTip(QStringLiteral("The draft model: the same n-gram model conditioning on fewer words (it shares the "
                                      "loaded data), or a file opened with Open draft..."));
    open_draft_ = new QPushButton(QStringLiteral("Open draft..."), this);
    open_draft_->setObjectName(QStringLiteral("speculative_open_draft"));
    open_draft_->setToolTip(QStringLiteral("Another n-gram file as the draft; it must have the model's vocabulary"));
    k_ = new CheckedSpinBox("k", "k", this);
    k_->setObjectName(QStringLiteral("speculative_k"));
    k_->setRange(1, static_cast<int>(kMaxSpeculativeK));
    k_->setValue(4);
    k_->setPrefix(QStringLiteral("k = "));
    k_->setToolTip(QStringLiteral("Draft tokens proposed per round"));
    rules_ = new QComboBox(this);
    rules_->setObjectName(QStringLiteral("speculative_rules"));
    for (const auto& preset : kSpecPresets) {
        rules_->addItem(qs(preset.name), qs(preset.name));
        rules_->setItemData(rules_->count() - 1, qs(preset.title), Qt::ToolTipRole);
    }
    rules_->setToolTip(QStringLiteral("Whose verification: the contract's (spec), vLLM's rejection sampler or "
                                      "FlashInfer's chain_speculative_sampling (docs/speculative.md)"));
    past_end_ = new QCheckBox(QStringLiteral("Past </s>"), this);
    past_end_->setObjectName(QStringLiteral("speculative_past_end"));
    past_end_->setToolTip(QStringLiteral("Go on after the end of a sentence (the model starts a new one), for long runs"));
    round_ = new QPushButton(QStringLiteral("Round"), this);
    round_->setObjectName(QStringLiteral("speculative_round"));
    round_->setToolTip(QStringLiteral("One round: the draft proposes k tokens, the target checks them left to right"));
    run_n_ = new QPushButton(QStringLiteral("Run"), this);
    run_n_->setObjectName(QStringLiteral("speculative_run"));
    run_n_->setToolTip(QStringLiteral("Run this many rounds (stopping at the end of the text)"));
    run_count_ = new CheckedSpinBox("rounds", "rounds", this);
    run_count_->setObjectName(QStringLiteral("speculative_run_count"));
    run_count_->setRange(1, kMaxRoundsPerRun);
    run_count_->setValue(10);
    run_count_->setSuffix(QStringLiteral(" rounds"));
    model_label_ = new QLabel(this);
    model_label_->setObjectName(QStringLiteral("speculative_model"));
    model_label_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    model_label_->setStyleSheet(QStringLiteral("color: #555555;"));
    open_model_ = new QPushButton(QStringLiteral("Open model..."), this);
    open_model_->setToolTip(QStringLiteral("Another n-gram model file (sphinxbase's binary trie format) as the target"));

    run_label_ = new QLabel(this);
    run_label_->setObjectName(QStringLiteral("speculative_run_label"));
    run_label_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    note_ = new QLabel(this);
    note_->setObjectName(QStringLiteral("speculative_note"));
    note_->setStyleSheet(QStringLiteral("color: #9A5B00;"));
    note_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

    text_ = new GeneratedTextView(this);
    text_->setObjectName(QStringLiteral("speculative_text"));
    text_scroll_ = new QScrollArea(this);
    text_scroll_->setWidget(text_);
    text_scroll_->setWidgetResizable(true);
    text_scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    text_scroll_->setMinimumHeight(50);
    legend_ = new QLabel(legendHtml(), this);
    legend_->setWordWrap(true);
    legend_->setStyleSheet(QStringLiteral("color: #555555;"));
    acceptance_label_ = new QLabel(this);
    acceptance_label_->setObjectName(QStringLiteral("speculative_acceptance"));
    acceptance_label_->setWordWrap(true);
    acceptance_ = new AcceptancePlot(this);

    round_box_ = new QSpinBox(this);
    round_box_->setObjectName(QStringLiteral("speculative_round_box"));
    round_box_->setPrefix(QStringLiteral("Round "));
    round_box_->setToolTip(QStringLiteral("The round on show"));
    round_label_ = new QLabel(this);
    round_label_->setObjectName(QStringLiteral("speculative_round_label"));
    round_label_->setWordWrap(true);
    round_label_->setTextFormat(Qt::RichText);
    column_legend_ = new QLabel(
        QStringLiteral("<span style='color:%1;'>\u25a0</span> q: the draft's probability &nbsp;"
                       "<span style='color:%2;'>\u25a0</span> p: the target's (one scale per column) &nbsp;\u25b8 the "
                       "proposed token &nbsp;\u00b7 strip: [0, 1), accepted when u lands in the green part &nbsp;"
                       "<span style='color:%3;'>\u25a0</span> residual")
            .arg(spec_colours::draft().name(), spec_colours::target().name(), spec_colours::residual().name()),
        this);
    column_legend_->setWordWrap(true);
    column_legend_->setStyleSheet(QStringLiteral("color: #555555;"));
    round_view_ = new SpeculativeRoundView(this);
    round_scroll_ = new QScrollArea(this);
    round_scroll_->setWidget(round_view_);
    round_scroll_->setWidgetResizable(true);
    round_scroll_->setFrameShape(QFrame::NoFrame);
    round_scroll_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    placeholder_ = new QLabel(this);
    placeholder_->setObjectName(QStringLiteral("speculative_placeholder"));
    placeholder_->setWordWrap(true);
    placeholder_->setAlignment(Qt::AlignCenter);
    placeholder_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    placeholder_->setMargin(24);

    auto* row1 = new QHBoxLayout;
    row1->addWidget(new QLabel(QStringLiteral("Prompt:"), this));
    row1->addWidget(prompt_, 3);
    row1->addWidget(start_);
    row1->addSpacing(8);
    row1->addWidget(new QLabel(QStringLiteral("Draft:"), this));
    row1->addWidget(draft_);
    row1->addWidget(open_draft_);
    row1->addWidget(k_);
    row1->addWidget(new QLabel(QStringLiteral("Rules:"), this));
    row1->addWidget(rules_);
    row1->addWidget(past_end_);
    auto* row2 = new QHBoxLayout;
    row2->addWidget(round_);
    row2->addWidget(run_n_);
    row2->addWidget(run_count_);
    row2->addSpacing(8);
    row2->addWidget(model_label_, 1);
    row2->addWidget(open_model_);

    auto* text_column = new QWidget(this);
    auto* text_layout = new QVBoxLayout(text_column);
    text_layout->setContentsMargins(0, 0, 0, 0);
    text_layout->setSpacing(2);
    text_layout->addWidget(run_label_);
    text_layout->addWidget(note_);
    text_layout->addWidget(text_scroll_, 1);
    text_layout->addWidget(legend_);
    auto* rate_column = new QWidget(this);
    auto* rate_layout = new QVBoxLayout(rate_column);
    rate_layout->setContentsMargins(0, 0, 0, 0);
    rate_layout->setSpacing(2);
    rate_layout->addWidget(acceptance_label_);
    rate_layout->addWidget(acceptance_, 1);
    auto* upper = new QSplitter(Qt::Horizontal, this);
    upper->addWidget(text_column);
    upper->addWidget(rate_column);
    upper->setStretchFactor(0, 1);
    upper->setStretchFactor(1, 1);
    upper->setChildrenCollapsible(false);

    auto* lower = new QWidget(this);
    auto* lower_layout = new QVBoxLayout(lower);
    lower_layout->setContentsMargins(0, 0, 0, 0);
    lower_layout->setSpacing(2);
    auto* round_row = new QHBoxLayout;
    round_row->addWidget(round_box_, 0, Qt::AlignTop);
    round_row->addWidget(round_label_, 1);
    lower_layout->addLayout(round_row);
    lower_layout->addWidget(column_legend_);
    lower_layout->addWidget(round_scroll_, 1);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("speculative_split"));
    split->addWidget(upper);
    split->addWidget(lower);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    split->setChildrenCollapsible(false);
    split->setSizes({170, 400});

    stack_ = new QStackedWidget(this);
    stack_->addWidget(placeholder_);
    stack_->addWidget(split);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->setSpacing(4);
    layout->addLayout(row1);
    layout->addLayout(row2);
    layout->addWidget(stack_, 1);

    connect(prompt_, &QLineEdit::returnPressed, this, [this] { start(prompt_->text()); });
    connect(start_, &QPushButton::clicked, this, [this] { start(prompt_->text()); });
    // With no run yet, Round and Run start one from the prompt.
    connect(round_, &QPushButton::clicked, this, [this] { run_ ? runRounds(1) : start(prompt_->text(), 1); });
    connect(run_n_, &QPushButton::clicked, this,
            [this] { run_ ? runRounds(run_count_->value()) : start(prompt_->text(), run_count_->value()); });
    connect(round_box_, qOverload<int>(&QSpinBox::valueChanged), this, [this](int value) {
        if (value - 1 != shown_) showRound(value - 1);
    });
    connect(text_, &GeneratedTextView::nodeClicked, this, [this](int node) {
        int at = 0;
        for (const auto& round : rounds_) {
            at += static_cast<int>(round.emitted.size());
            if (node < at) {
                showRound(static_cast<int>(round.index));
                return;
            }
        }
    });
    connect(open_draft_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open a draft n-gram model"), QString(),
                                                          QStringLiteral("n-gram models (*.lm.bin *.bin);;All files (*)"));
        if (!path.isEmpty()) openDraftFile(path);
    });
    connect(open_model_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open an n-gram model"), QString(),
                                                          QStringLiteral("n-gram models (*.lm.bin *.bin);;All files (*)"));
        if (!path.isEmpty()) model_->openFile(path);
    });
    for (QObject* control : std::initializer_list<QObject*>{draft_, rules_}) {
        connect(qobject_cast<QComboBox*>(control), qOverload<int>(&QComboBox::currentIndexChanged), this,
                &SpeculativeView::refreshControls);
    }
    // A typed k or round count out of range: the box keeps its value, the run stays, the line says why.
    for (auto* box : {k_, run_count_}) {
        connect(static_cast<CheckedSpinBox*>(box), &CheckedSpinBox::refused, this, [this](const QString& message) {
            emit errorRaised(message + QStringLiteral(". The previous run is unchanged."));
        });
    }
    connect(k_, qOverload<int>(&QSpinBox::valueChanged), this, &SpeculativeView::refreshControls);
    connect(past_end_, &QCheckBox::toggled, this, &SpeculativeView::refreshControls);
    connect(session_, &Session::paramsChanged, this, &SpeculativeView::refreshControls);
    connect(&job_watcher_, &QFutureWatcher<SpeculationOutcome>::finished, this, &SpeculativeView::onJobFinished);
    connect(&draft_watcher_, &QFutureWatcher<ModelLoad>::finished, this, &SpeculativeView::onDraftLoaded);
    connect(model_, &ModelSlot::changed, this, [this] {
        if (model_->model() && pending_) {
            const auto [prompt, rounds] = *pending_;
            pending_.reset();
            startNow(prompt, rounds);
        } else if (!model_->loading()) {
            pending_.reset();
        }
        refresh();
        emit idleChanged();
    });
    refresh();
}

SpeculativeView::~SpeculativeView() {
    job_watcher_.waitForFinished();
    draft_watcher_.waitForFinished();
}

bool SpeculativeView::idle() const { return !job_running_ && !draft_watcher_.isRunning() && !model_->loading(); }

void SpeculativeView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    model_->ensure();
}

SpeculativeView::RunConfig SpeculativeView::controls() const {
    RunConfig config;
    config.prompt = prompt_->text();
    config.draft = draft_->currentData().toString();
    config.k = k_->value();
    config.rules = rules_->currentData().toString();
    config.past_end = past_end_->isChecked();
    config.params = session_->params();
    config.pipeline = session_->request().pipeline().name;
    return config;
}

std::shared_ptr<const LanguageModel> SpeculativeView::draftModel(const QString& choice) const {
    if (choice == QStringLiteral("file")) {
        if (!draft_file_) throw InputError("draft", "no draft file is open");
        return draft_file_;
    }
    const ModelSpec spec = parse_model_spec(choice.toStdString(), "draft");
    const auto* ngram = dynamic_cast<const NgramModel*>(model_->model().get());
    if (!ngram) throw InputError("draft", "--draft " + choice.toStdString() + " restricts an n-gram model; the model is " + model_->model()->description());
    return ngram->restricted(spec.order == 0 ? ngram->file_order() : spec.order);
}

void SpeculativeView::start(const QString& prompt, int rounds) {
    if (!model_->model()) {
        pending_ = std::pair{prompt, rounds};
        if (!model_->ensureForRun()) {
            pending_.reset();
            emit errorRaised(missingModelMessage());
        }
        return;
    }
    startNow(prompt, rounds);
}

bool SpeculativeView::startNow(const QString& prompt, int rounds) {
    if (job_running_) return false;
    RunConfig config = controls();
    config.prompt = prompt;
    std::shared_ptr<Speculation> run;
    try {
        auto words = model_->model()->tokenize(prompt.toStdString());
        SpeculativeOptions options;
        options.k = static_cast<std::size_t>(config.k);
        options.preset = &spec_preset(config.rules.toStdString(), "rules");
        options.stop_at_end = !config.past_end;
        run = std::make_shared<Speculation>(model_->model(), draftModel(config.draft), session_->request().pipeline(),
                                            config.params, std::move(words), options);
    } catch (const InputError& error) {
        emit errorRaised(QString::fromUtf8(error.what()) + QStringLiteral(". The previous run is unchanged."));
        return false;
    }
    run_ = std::move(run);
    config.params.seed = run_->seed();
    run_config_ = config;
    rounds_.clear();
    shown_ = -1;
    if (prompt_->text() != prompt) prompt_->setText(prompt);
    refresh();
    if (rounds > 0) runRounds(rounds);
    return true;
}

void SpeculativeView::runRounds(int rounds) {
    if (!run_ || job_running_ || run_->ended()) return;
    job_running_ = true;
    const int n = std::clamp(rounds, 1, kMaxRoundsPerRun);
    job_watcher_.setFuture(QtConcurrent::run([from = run_, n] { return runSpeculationRounds(*from, n); }));
    if (n > 1) emit statusMessage(QStringLiteral("Running %1...").arg(countText(n, QStringLiteral("round"), QStringLiteral("rounds"))));
    refreshControls();
    emit idleChanged();
}

void SpeculativeView::onJobFinished() {
    SpeculationOutcome outcome = job_watcher_.result();
    job_running_ = false;
    if (!outcome.rounds.empty()) {
        run_ = std::move(outcome.speculation);
        for (auto& round : outcome.rounds) rounds_.push_back(std::move(round));
        shown_ = static_cast<int>(rounds_.size()) - 1;
        emit statusMessage(QStringLiteral("%1 rounds: %2").arg(rounds_.size()).arg(qs(run_->generated_text())));
    }
    if (!outcome.error.isEmpty()) emit errorRaised(outcome.error);
    refresh();
    emit idleChanged();
}

void SpeculativeView::openDraftFile(const QString& path) {
    if (draft_watcher_.isRunning()) return;
    const std::string file = path.toStdString();
    const std::uint64_t budget = default_memory_budget();
    draft_file_name_ = QFileInfo(path).fileName();
    draft_watcher_.setFuture(QtConcurrent::run([file, budget] { return loadModel(file, budget); }));
    emit idleChanged();
}

void SpeculativeView::onDraftLoaded() {
    ModelLoad loaded = draft_watcher_.result();
    try {
        if (!loaded.model) throw InputError("draft", loaded.error.toStdString());
        if (!model_->model()) throw InputError("draft", "open the model before a draft");
        check_same_vocabulary(*model_->model(), *loaded.model);
        draft_file_ = std::move(loaded.model);
        int at = draft_->findData(QStringLiteral("file"));
        if (at < 0) {
            draft_->addItem(QString(), QStringLiteral("file"));
            at = draft_->count() - 1;
        }
        draft_->setItemText(at, QStringLiteral("file: %1").arg(draft_file_name_));
        draft_->setItemData(at, qs(draft_file_->description()), Qt::ToolTipRole);
        draft_->setCurrentIndex(at);
        emit statusMessage(QStringLiteral("Draft: %1 (Start uses it)").arg(qs(draft_file_->description())));
    } catch (const InputError& error) {
        emit errorRaised(QString::fromUtf8(error.what()) + QStringLiteral(". The draft is unchanged."));
    }
    refresh();
    emit idleChanged();
}

void SpeculativeView::showRound(int index) {
    if (index < 0 || static_cast<std::size_t>(index) >= rounds_.size()) return;
    shown_ = index;
    refreshText();
    refreshRound();
    refreshAcceptance();
}

QString SpeculativeView::pendingChanges() const {
    if (!run_) return {};
    const RunConfig now = controls();
    QStringList changed;
    if (now.draft != run_config_.draft) changed << QStringLiteral("the draft");
    if (now.k != run_config_.k) changed << QStringLiteral("k");
    if (now.rules != run_config_.rules) changed << QStringLiteral("the rules");
    if (now.past_end != run_config_.past_end) changed << QStringLiteral("past </s>");
    SamplingParams params = now.params;
    if (!params.seed) params.seed = run_config_.params.seed;
    if (!(params == run_config_.params) || now.pipeline != run_config_.pipeline) changed << QStringLiteral("the window's parameters");
    if (changed.isEmpty()) return {};
    return QStringLiteral("Changed since Start: %1. Start runs with them.").arg(changed.join(QStringLiteral(", ")));
}

void SpeculativeView::refresh() {
    refreshControls();
    if (!model_->model()) {
        placeholder_->setText(model_->placeholderHtml());
        stack_->setCurrentIndex(0);
        return;
    }
    stack_->setCurrentIndex(1);
    refreshText();
    refreshRound();
    refreshAcceptance();
}

void SpeculativeView::refreshControls() {
    const bool ready = model_->model() && !job_running_ && !model_->loading();
    start_->setEnabled(!job_running_ && model_->state() != ModelSlot::State::Missing);
    prompt_->setEnabled(!job_running_);
    const bool more = ready && (!run_ || !run_->ended());
    round_->setEnabled(more);
    run_n_->setEnabled(more);
    open_draft_->setEnabled(ready && !draft_watcher_.isRunning());
    open_model_->setEnabled(!job_running_ && !model_->loading());
    const QString line = model_->modelLine();
    model_label_->setToolTip(line);
    model_label_->setText(model_label_->fontMetrics().elidedText(line, Qt::ElideRight, std::max(60, model_label_->width())));
    if (run_) {
        const std::string settings = changedSettings(run_config_.params);
        const QString text =
            QStringLiteral("Run: draft %1, k = %2, rules %3, pipeline %4, seed %5; parameters: %6")
                .arg(draft_->itemText(std::max(0, draft_->findData(run_config_.draft))), QString::number(run_config_.k),
                     run_config_.rules, qs(run_config_.pipeline), QString::number(run_->seed()),
                     settings.empty() ? QStringLiteral("the defaults") : qs(settings));
        run_label_->setToolTip(text);
        run_label_->setText(run_label_->fontMetrics().elidedText(text, Qt::ElideRight, std::max(100, run_label_->width())));
    } else {
        run_label_->setText(QStringLiteral("No run yet: Round starts one from the prompt."));
    }
    const QString pending = pendingChanges();
    note_->setText(pending);
    note_->setVisible(!pending.isEmpty());
}

void SpeculativeView::refreshText() {
    if (!run_) {
        text_->setPieces({}, -1, QString(), QString());
        return;
    }
    std::vector<GeneratedTextView::Piece> pieces;
    for (const auto& word : run_->prompt()) {
        GeneratedTextView::Piece piece;
        piece.text = qs(word.text);
        piece.attached = !pieces.empty() && attaches(word.text);
        piece.unknown = word.id == kUnknownWord;
        piece.tooltip = piece.unknown ? QStringLiteral("\u201c%1\u201d is not in the model's vocabulary").arg(piece.text.toHtmlEscaped())
                                      : QStringLiteral("prompt word \u201c%1\u201d").arg(piece.text.toHtmlEscaped());
        pieces.push_back(std::move(piece));
    }
    int node = 0;
    for (const auto& round : rounds_) {
        for (const auto& token : round.emitted) {
            const SourceStyle style = sourceStyle(token.source);
            GeneratedTextView::Piece piece;
            piece.text = qs(token.text);
            piece.node = node++;
            piece.attached = !pieces.empty() && attaches(token.text);
            piece.fill = style.fill;
            piece.ink = Qt::black;
            piece.mark = style.mark;
            piece.rank = 1;
            piece.probability = token.p;
            piece.outlined = static_cast<int>(round.index) == shown_;
            QString tip = QStringLiteral("<b>%1</b> (id %2): round %3, position %4, %5")
                              .arg(piece.text.toHtmlEscaped())
                              .arg(token.id)
                              .arg(round.index + 1)
                              .arg(token.position)
                              .arg(QString::fromUtf8(style.words));
            if (token.source == SpecSource::Accepted) {
                const auto& at = round.positions[token.position];
                if (at.u) tip += QStringLiteral("<br>u = %1 against min(1, p/q) = %2").arg(num(*at.u), num(at.acceptance));
            } else if (round.final.u) {
                tip += QStringLiteral("<br>u = %1 over %2 ids").arg(num(*round.final.u)).arg(round.final.kept);
            }
            tip += QStringLiteral("<br>p = %1 at its position<br><i>click to show its round</i>").arg(num(token.p));
            piece.tooltip = tip;
            pieces.push_back(std::move(piece));
        }
    }
    QString next;
    QString next_tip;
    if (run_->ended()) {
        next = QStringLiteral("(end of text)");
        next_tip = QStringLiteral("The text ended with </s>: Start again, or tick Past </s> before Start for longer runs.");
    }
    text_->setPieces(std::move(pieces), -1, next, next_tip);
}

void SpeculativeView::refreshRound() {
    const SpecPreset& preset = run_ ? run_->preset() : kSpecPresets[0];
    const SpecRoundRecord* round =
        shown_ >= 0 && static_cast<std::size_t>(shown_) < rounds_.size() ? &rounds_[static_cast<std::size_t>(shown_)] : nullptr;
    {
        const QSignalBlocker block(round_box_);
        round_box_->setRange(rounds_.empty() ? 0 : 1, static_cast<int>(rounds_.size()));
        round_box_->setValue(shown_ + 1);
        round_box_->setSuffix(QStringLiteral(" of %1").arg(rounds_.size()));
        round_box_->setEnabled(rounds_.size() > 1);
    }
    round_view_->showRound(round, preset);
    column_legend_->setVisible(round != nullptr);
    if (!round) {
        round_label_->setText(run_ ? QStringLiteral("Press <b>Round</b>: the draft proposes k = %1 tokens one after another "
                                                    "from its q, and the target checks them left to right against its p.")
                                         .arg(run_config_.k)
                                   : QString());
        return;
    }
    QStringList proposed;
    for (const auto& at : round->positions) proposed << quoted(at.text);
    QStringList emitted;
    for (const auto& token : round->emitted) emitted << qs(token.text).toHtmlEscaped();
    QString what;
    if (round->final.bonus) {
        what = QStringLiteral("all %1 accepted; the bonus token %2 comes from p").arg(round->k).arg(quoted(round->final.text));
    } else {
        what = QStringLiteral("%1 accepted, %2 rejected at position %3; the residual gave %4")
                   .arg(round->final.position)
                   .arg(quoted(round->positions[round->final.position].text))
                   .arg(round->final.position)
                   .arg(quoted(round->final.text));
    }
    QString text = QStringLiteral("k = %1, the draft proposed %2: %3. <b>Emitted %4</b> (%5); uniforms %6 \u2192 %7")
                       .arg(round->k)
                       .arg(proposed.join(QStringLiteral(" ")), what, emitted.join(QStringLiteral(" ")),
                            countText(round->emitted.size(), QStringLiteral("token"), QStringLiteral("tokens")))
                       .arg(round->draws_before)
                       .arg(round->draws_after);
    if (round->unused_bonus_u) text += QStringLiteral(" (vLLM drew the bonus token's u = %1 first, unused)").arg(num(*round->unused_bonus_u));
    round_label_->setText(text);
}

void SpeculativeView::refreshAcceptance() {
    acceptance_->showRounds(rounds_, shown_);
    if (rounds_.empty()) {
        acceptance_label_->setText(QStringLiteral("<b>Acceptance</b>: no round yet"));
        return;
    }
    const SpeculativeStats& stats = rounds_.back().stats;
    acceptance_label_->setText(QStringLiteral("<b>Accepted %1 of %2</b> tested: %3 &nbsp;\u00b7&nbsp; expected %4 "
                                              "(SE %5, z = %6) over %7")
                                   .arg(stats.accepted)
                                   .arg(stats.tested)
                                   .arg(num(stats.rate()), num(stats.expected_rate()), num(stats.standard_error()),
                                        QString::number(stats.z(), 'f', 2),
                                        countText(stats.rounds, QStringLiteral("round"), QStringLiteral("rounds"))));
}

}  // namespace samplescope::ui
