#include "ui/generate/generate_view.h"

#include <algorithm>
#include <array>

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/models/model_source.h"
#include "ui/common/count_text.h"
#include "ui/generate/token_colours.h"
#include "ui/session/session.h"
#include "ui/stages/pipeline_view.h"

namespace samplescope::ui {

namespace {

constexpr int kMaxSteps = 1000;          // one Generate press; a longer text is several
constexpr std::size_t kFedRowsKept = 256;  // rows remembered for undo's sake (weak: the undo stack holds them)

QString qs(const std::string& text) { return QString::fromStdString(text); }

// Whether a token joins the word before it without a space, by join_token_texts' own rule.
bool attaches(const std::string& text) {
    const std::array<std::string, 2> pair{"w", text};
    return join_token_texts(pair).size() == 1 + text.size();
}

QString number(double value, int digits = 4) { return QString::number(value, 'g', digits); }

QString legendHtml() {
    QString swatches;
    for (const auto& band : probabilityBands()) {
        swatches += QStringLiteral("<span style='background-color:%1; color:%2;'>&nbsp;%3&nbsp;</span> ")
                        .arg(band.background.name(), band.text.name(), QString::fromUtf8(band.label).toHtmlEscaped());
    }
    return QStringLiteral("Probability at its step: %1&nbsp;· small number: its rank there (none: first) · "
                          "\u00d7: not kept · dashed: clicked · outlined: on show")
        .arg(swatches);
}

}  // namespace

QString GenerateView::defaultPrompt() { return QStringLiteral("once upon a time"); }

GenerateView::GenerateView(Session* session, QWidget* parent) : QWidget(parent), session_(session) {
    setObjectName(QStringLiteral("generate_view"));

    prompt_ = new QLineEdit(this);
    prompt_->setObjectName(QStringLiteral("generate_prompt"));
    prompt_->setPlaceholderText(QStringLiteral("The start of a text, e.g. %1").arg(defaultPrompt()));
    prompt_->setText(defaultPrompt());
    // Longer than any prompt the model takes, so a paste is refused with its size rather than cut.
    prompt_->setMaxLength(static_cast<int>(kMaxPromptBytes) + 1);
    prompt_->setToolTip(QStringLiteral("Words the model continues. Enter starts a new text from them; the old one is "
                                       "replaced (Edit > Undo brings its step back)."));
    start_ = new QPushButton(QStringLiteral("Start"), this);
    start_->setObjectName(QStringLiteral("generate_start"));
    start_->setToolTip(QStringLiteral("A new text from this prompt: the plots show the next word's distribution"));
    model_label_ = new QLabel(this);
    model_label_->setObjectName(QStringLiteral("generate_model"));
    model_label_->setMinimumWidth(60);
    model_label_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    model_label_->setStyleSheet(QStringLiteral("color: #555555;"));
    model_label_->installEventFilter(this);  // elided to its width at each resize
    open_model_ = new QPushButton(QStringLiteral("Open model..."), this);
    open_model_->setObjectName(QStringLiteral("generate_open_model"));
    open_model_->setToolTip(QStringLiteral("Another n-gram model file (sphinxbase's binary trie format, .lm.bin)"));

    step_ = new QPushButton(QStringLiteral("Step"), this);
    step_->setObjectName(QStringLiteral("generate_step"));
    step_->setToolTip(QStringLiteral("Write the word the draw picks (the answer line's token) and show the next step "
                                     "(Sampling > Step, Ctrl+Return)"));
    generate_ = new QPushButton(QStringLiteral("Generate"), this);
    generate_->setObjectName(QStringLiteral("generate_n"));
    count_ = new QSpinBox(this);
    count_->setObjectName(QStringLiteral("generate_count"));
    count_->setRange(1, kMaxSteps);
    count_->setValue(10);
    count_->setSuffix(QStringLiteral(" tokens"));
    generate_->setToolTip(QStringLiteral("Write this many tokens, stopping at the end of a sentence (</s>)"));
    undo_ = new QPushButton(QStringLiteral("Undo token"), this);
    undo_->setObjectName(QStringLiteral("generate_undo"));
    undo_->setToolTip(QStringLiteral("Take back the text's last token: the stream, the history and mirostat's mu go "
                                     "back to where they were before it"));
    regenerate_ = new QPushButton(QStringLiteral("Regenerate from here"), this);
    regenerate_->setObjectName(QStringLiteral("generate_regenerate"));
    regenerate_->setToolTip(QStringLiteral("Write the tokens after the outlined one again with the parameters now "
                                           "(the old ones stay as a branch)"));

    write_selected_ = new QPushButton(this);
    write_selected_->setObjectName(QStringLiteral("generate_write_selected"));
    write_selected_->setToolTip(QStringLiteral("Write the token selected in the token table (or another tab's plot) at "
                                               "the step on show, instead of the drawn one: a new branch"));
    write_selected_->hide();
    text_ = new GeneratedTextView(this);
    text_scroll_ = new QScrollArea(this);
    text_scroll_->setWidget(text_);
    text_scroll_->setWidgetResizable(true);
    text_scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    text_scroll_->setMinimumHeight(60);
    legend_ = new QLabel(legendHtml(), this);
    legend_->setObjectName(QStringLiteral("generate_legend"));
    legend_->setWordWrap(true);
    legend_->setStyleSheet(QStringLiteral("color: #555555;"));
    branches_ = new BranchTreeView(this);
    branches_->setMinimumWidth(160);

    info_ = new QLabel(this);
    info_->setObjectName(QStringLiteral("generate_step_label"));
    info_->setWordWrap(true);
    placeholder_ = new QLabel(this);
    placeholder_->setObjectName(QStringLiteral("generate_placeholder"));
    placeholder_->setWordWrap(true);
    placeholder_->setAlignment(Qt::AlignCenter);
    placeholder_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    placeholder_->setMargin(24);
    pipeline_ = new PipelineView(this);
    pipeline_->setObjectName(QStringLiteral("generate_pipeline_view"));
    stack_ = new QStackedWidget(this);
    stack_->addWidget(placeholder_);
    stack_->addWidget(pipeline_);

    auto* prompt_row = new QHBoxLayout;
    prompt_row->addWidget(new QLabel(QStringLiteral("Prompt:"), this));
    prompt_row->addWidget(prompt_, 3);
    prompt_row->addWidget(start_);
    prompt_row->addSpacing(12);
    prompt_row->addWidget(model_label_, 2);
    prompt_row->addWidget(open_model_);
    auto* action_row = new QHBoxLayout;
    action_row->addWidget(step_);
    action_row->addWidget(generate_);
    action_row->addWidget(count_);
    action_row->addWidget(undo_);
    action_row->addWidget(regenerate_);
    action_row->addWidget(write_selected_);
    action_row->addStretch(1);

    auto* text_column = new QWidget(this);
    auto* text_layout = new QVBoxLayout(text_column);
    text_layout->setContentsMargins(0, 0, 0, 0);
    text_layout->setSpacing(2);
    text_layout->addWidget(text_scroll_, 1);
    text_layout->addWidget(legend_);
    auto* upper = new QSplitter(Qt::Horizontal, this);
    upper->addWidget(text_column);
    upper->addWidget(branches_);
    upper->setStretchFactor(0, 3);
    upper->setStretchFactor(1, 1);
    upper->setChildrenCollapsible(false);

    auto* lower = new QWidget(this);
    auto* lower_layout = new QVBoxLayout(lower);
    lower_layout->setContentsMargins(0, 0, 0, 0);
    lower_layout->setSpacing(2);
    lower_layout->addWidget(info_);
    lower_layout->addWidget(stack_, 1);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("generate_split"));
    split->addWidget(upper);
    split->addWidget(lower);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    split->setChildrenCollapsible(false);
    split->setSizes({105, 500});

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->setSpacing(4);
    layout->addLayout(prompt_row);
    layout->addLayout(action_row);
    layout->addWidget(split, 1);

    connect(prompt_, &QLineEdit::returnPressed, this, [this] { start(prompt_->text()); });
    connect(start_, &QPushButton::clicked, this, [this] { start(prompt_->text()); });
    connect(open_model_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open an n-gram model"), QString(),
                                                          QStringLiteral("n-gram models (*.lm.bin *.bin);;All files (*)"));
        if (!path.isEmpty()) openModelFile(path);
    });
    connect(step_, &QPushButton::clicked, this, &GenerateView::step);
    connect(generate_, &QPushButton::clicked, this, [this] { generate(count_->value()); });
    connect(undo_, &QPushButton::clicked, this, &GenerateView::undoToken);
    connect(write_selected_, &QPushButton::clicked, this, [this] {
        if (showsCursorStep() && shown_selected_ >= 0) writeToken(shown_selected_);
    });
    connect(regenerate_, &QPushButton::clicked, this, &GenerateView::regenerateFromHere);
    connect(text_, &GeneratedTextView::nodeClicked, this, &GenerateView::showStepOf);
    connect(text_, &GeneratedTextView::nextClicked, this, &GenerateView::showNextStep);
    connect(branches_, &BranchTreeView::stretchClicked, this, &GenerateView::showStepOf);
    // A word clicked in a plot of the step on show is written there instead of the drawn one.
    connect(pipeline_, &PipelineView::tokenClicked, this, [this](std::int32_t id) {
        if (showsCursorStep()) writeToken(id);
    });
    connect(&load_watcher_, &QFutureWatcher<ModelLoad>::finished, this, &GenerateView::onModelLoaded);
    connect(&job_watcher_, &QFutureWatcher<GenerationOutcome>::finished, this, &GenerateView::onJobFinished);
    for (const auto signal : {&Session::logitsChanged, &Session::historyChanged, &Session::labelsChanged}) {
        connect(session_, signal, this, &GenerateView::onSessionChanged);
    }
    refresh();
}

GenerateView::~GenerateView() {
    load_watcher_.waitForFinished();
    job_watcher_.waitForFinished();
}

bool GenerateView::idle() const { return !job_running_ && model_state_ != ModelState::Loading; }

void GenerateView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    ensureModel();
    if (plots_stale_ && shown_view_) {
        plots_stale_ = false;
        pipeline_->showView(shown_view_, shown_selected_);
    }
}

void GenerateView::ensureModel() {
    if (model_ || model_state_ == ModelState::Loading || model_state_ == ModelState::Failed) return;
    if (!default_ngram_model_installed()) {
        model_state_ = ModelState::Missing;
        refresh();
        return;
    }
    if (model_source_) {
        if (ModelLoad shared = model_source_(); shared.model) {
            loading_path_.clear();
            acceptModel(std::move(shared));
            return;
        }
    }
    startLoading(QString());
}

void GenerateView::openModelFile(const QString& path) {
    if (!idle()) return;
    if (tree_) pending_ = PendingStart{prompt_text_, 0};  // the text starts again on the new model
    startLoading(path);
}

void GenerateView::startLoading(const QString& path) {
    model_state_ = ModelState::Loading;
    loading_path_ = path;
    const std::string file = path.toStdString();
    const std::uint64_t budget = default_memory_budget();
    load_watcher_.setFuture(QtConcurrent::run([file, budget] { return loadModel(file, budget); }));
    emit statusMessage(QStringLiteral("Loading the language model %1...")
                           .arg(qs(file.empty() ? default_ngram_model_path() : file)));
    refresh();
    emit idleChanged();
}

void GenerateView::onModelLoaded() { acceptModel(load_watcher_.result()); }

void GenerateView::setModel(ModelLoad loaded) {
    if (!idle()) return;
    loading_path_.clear();
    acceptModel(std::move(loaded));
}

void GenerateView::acceptModel(ModelLoad loaded) {
    if (!loaded.model) {
        pending_.reset();
        if (model_) {
            model_state_ = ModelState::Ready;
            emit errorRaised(loaded.error + QStringLiteral(". The previous model and text are unchanged."));
        } else {
            model_state_ = ModelState::Failed;
            model_error_ = loaded.error;
            emit errorRaised(loaded.error);
        }
    } else {
        model_ = std::move(loaded.model);
        labels_ = std::move(loaded.labels);
        model_path_ = loading_path_;
        model_state_ = ModelState::Ready;
        model_error_.clear();
        tree_.reset();
        fed_rows_.clear();
        attached_ = false;
        emit statusMessage(QStringLiteral("Model: %1").arg(qs(model_->description())));
        if (pending_) {
            const PendingStart start = *pending_;
            pending_.reset();
            startNow(start.prompt, start.steps);
        }
    }
    refresh();
    emit idleChanged();
}

void GenerateView::start(const QString& prompt, int steps) {
    if (!model_) {
        pending_ = PendingStart{prompt, steps};
        if (model_state_ == ModelState::Failed) model_state_ = ModelState::NotLoaded;  // a new try
        ensureModel();
        if (model_state_ == ModelState::Missing) {
            pending_.reset();
            emit errorRaised(missingModelMessage());
        }
        return;
    }
    startNow(prompt, steps);
}

bool GenerateView::startNow(const QString& prompt, int steps) {
    if (job_running_) return false;
    std::vector<PromptWord> words;
    try {
        words = model_->tokenize(prompt.toStdString());
    } catch (const InputError& error) {
        emit errorRaised(QString::fromUtf8(error.what()) + QStringLiteral(". The previous text is unchanged."));
        return false;
    }
    // The new text replaces the old only once its first step is in the session.
    auto old_words = std::exchange(prompt_words_, std::move(words));
    auto old_tree = std::exchange(tree_, std::make_unique<GenerationTree>());
    auto old_rows = std::exchange(fed_rows_, decltype(fed_rows_){});
    const int old_cursor = std::exchange(cursor_, GenerationTree::kRoot);
    const bool old_attached = attached_;
    if (!feed(GenerationTree::kRoot)) {
        prompt_words_ = std::move(old_words);
        tree_ = std::move(old_tree);
        fed_rows_ = std::move(old_rows);
        cursor_ = old_cursor;
        attached_ = old_attached;
        refresh();
        return false;
    }
    prompt_text_ = prompt;
    if (prompt_->text() != prompt) prompt_->setText(prompt);
    refresh();
    if (steps > 0) generate(steps);
    return true;
}

QString GenerateView::contextTail(int node) const {
    std::vector<std::string> texts;
    for (const auto& word : prompt_words_) texts.push_back(word.text);
    for (const int n : tree_->path(node)) texts.push_back(tree_->node(n).token.text);
    const QString text = qs(join_token_texts(texts));
    constexpr int kTail = 48;
    return text.size() <= kTail ? text : QChar(0x2026) + text.right(kTail - 1);
}

bool GenerateView::feed(int node) {
    try {
        const GenerationState state = tree_->state(node);
        // The row as the engine's generation asks for it (its context rule, its checks).
        Generation generation(model_, session_->request().pipeline(), session_->params(), prompt_words_, {}, state);
        auto row = std::make_shared<const std::vector<double>>(generation.next_row());
        feeding_ = true;
        session_->showGenerationStep(row, labels_, QStringLiteral("Generate: %1").arg(contextTail(node)),
                                     known_prompt_ids(prompt_words_), state.generated, state.draws);
        feeding_ = false;
        if (fed_rows_.size() >= kFedRowsKept) std::erase_if(fed_rows_, [](const auto& entry) { return entry.second.expired(); });
        fed_rows_[node] = row;
        cursor_ = node;
        attached_ = true;
        refresh();
        return true;
    } catch (const InputError& error) {
        feeding_ = false;
        emit errorRaised(QString::fromUtf8(error.what()) + QStringLiteral(". The step on show is unchanged."));
    }
    return false;
}

// The session changed without the tab: it may still show one of the tab's
// steps (an undo or redo brought it back), the same step on a new seed's
// stream (which then starts where the text stands), or something else.
void GenerateView::onSessionChanged() {
    if (feeding_ || !tree_) return;
    int node = -1;
    for (const auto& [n, row] : fed_rows_) {
        if (tree_->contains(n) && row.lock() == session_->logits()) node = n;
    }
    const Request& request = session_->request();
    if (node < 0 || session_->labels() != labels_ || request.prompt_ids() != known_prompt_ids(prompt_words_) ||
        request.output_ids() != tree_->state(node).generated) {
        setAttached(false);
        return;
    }
    if (request.draws_consumed() != tree_->node(node).draws) {
        feed(node);
        return;
    }
    tree_->setLineThrough(node);
    cursor_ = node;
    setAttached(true);
}

void GenerateView::setAttached(bool attached) {
    attached_ = attached;
    refresh();
}

// Whether the plots on show are the trace of the step on show (a click on them names a word of that step).
bool GenerateView::showsCursorStep() const {
    if (!tree_ || !attached_ || !shown_view_) return false;
    const auto fed = fed_rows_.find(cursor_);
    return fed != fed_rows_.end() && fed->second.lock() == shown_view_->raw_logits;
}

int GenerateView::markedNode() const {
    if (!tree_ || cursor_ == tree_->lineEnd()) return -1;
    return tree_->node(cursor_).line_child;
}

void GenerateView::step() { runJob(1, std::nullopt, After::Advance); }

void GenerateView::generate(int steps) { runJob(std::clamp(steps, 1, kMaxSteps), std::nullopt, After::Advance); }

void GenerateView::writeToken(std::int64_t id) { runJob(1, id, After::Advance); }

void GenerateView::regenerateFromHere() {
    if (!tree_) return;
    const std::vector<int> line = tree_->line();
    const auto at = std::find(line.begin(), line.end(), cursor_);
    const auto rest = static_cast<int>(cursor_ == GenerationTree::kRoot ? line.size() : line.end() - at - 1);
    if (rest > 0) runJob(rest, std::nullopt, After::Regenerate);
}

void GenerateView::runJob(int steps, std::optional<std::int64_t> forced, After after) {
    if (!tree_ || !model_ || job_running_) return;
    GenerationJob job{model_, session_->request().pipeline(), session_->params(), prompt_words_, tree_->state(cursor_),
                      steps, forced};
    job_start_ = cursor_;
    after_ = after;
    job_attached_ = attached_;
    job_running_ = true;
    job_watcher_.setFuture(QtConcurrent::run([job = std::move(job)] { return runGeneration(job); }));
    if (steps > 1) emit statusMessage(QStringLiteral("Writing %1...").arg(countText(steps, QStringLiteral("token"), QStringLiteral("tokens"))));
    refreshControls();
    emit idleChanged();
}

void GenerateView::onJobFinished() {
    GenerationOutcome outcome = job_watcher_.result();
    int at = job_start_;
    for (auto& written : outcome.steps) at = tree_->add(at, std::move(written.token), written.draws, written.mirostat_mu);
    // The tokens join the tree; their step is shown unless the window moved to another row meanwhile.
    if (!outcome.steps.empty() && (attached_ || !job_attached_)) {
        feed(after_ == After::Advance ? at : job_start_);
        emit statusMessage(QStringLiteral("Wrote %1: %2")
                               .arg(countText(outcome.steps.size(), QStringLiteral("token"), QStringLiteral("tokens")),
                                    contextTail(at)));
    }
    job_running_ = false;
    if (!outcome.error.isEmpty()) emit errorRaised(outcome.error);
    refresh();
    emit idleChanged();
}

void GenerateView::undoToken() {
    if (!tree_ || job_running_) return;
    const int end = tree_->lineEnd();
    if (end == GenerationTree::kRoot) return;
    const int parent = tree_->node(end).parent;
    const bool showing_it = cursor_ == end;
    tree_->removeLeaf(end);
    fed_rows_.erase(end);
    if (showing_it || !attached_) {
        feed(parent);
    } else {
        refresh();
    }
}

void GenerateView::goToStart() {
    if (tree_ && !job_running_) feed(GenerationTree::kRoot);
}

void GenerateView::showStepOf(int node) {
    if (!tree_ || job_running_ || !tree_->contains(node)) return;
    if (node == GenerationTree::kRoot) {
        feed(GenerationTree::kRoot);
        return;
    }
    tree_->setLineThrough(node);
    feed(tree_->node(node).parent);
}

void GenerateView::showNextStep() {
    if (tree_ && !job_running_) feed(tree_->lineEnd());
}

void GenerateView::showTrace(const std::shared_ptr<const TraceView>& view, std::int32_t selected) {
    if (!view || !tree_ || !attached_) return;
    const auto fed = fed_rows_.find(cursor_);
    if (fed == fed_rows_.end() || fed->second.lock() != view->raw_logits) return;  // another step's trace
    shown_view_ = view;
    shown_selected_ = selected;
    if (isVisible()) {
        plots_stale_ = false;
        pipeline_->showView(view, selected);
    } else {
        plots_stale_ = true;
    }
    refreshNextSlot();
    refreshControls();
}

QString GenerateView::lineText() const {
    if (!tree_) return {};
    std::vector<std::string> texts;
    for (const auto& word : prompt_words_) texts.push_back(word.text);
    for (const int n : tree_->line()) texts.push_back(tree_->node(n).token.text);
    return qs(join_token_texts(texts));
}

QString GenerateView::tokenTooltip(int node) const {
    const GenerationNode& n = tree_->node(node);
    const WrittenToken& t = n.token;
    QStringList lines;
    lines << QStringLiteral("<b>%1</b> (id %2), token %3 of the text")
                 .arg(qs(t.text).toHtmlEscaped(), groupedNumber(t.id), groupedNumber(tree_->depth(node)));
    if (t.rank == 0) {
        lines << QStringLiteral("q = 0 at its step: outside the %1 kept").arg(groupedNumber(t.kept));
    } else {
        lines << QStringLiteral("q %1 at its step, rank %2 of the %3 kept").arg(number(t.probability), groupedNumber(t.rank),
                                                                             groupedNumber(t.kept));
    }
    if (t.logprob) lines << QStringLiteral("logprob %1 (the contract's: after penalties, before temperature)").arg(number(*t.logprob, 5));
    lines << (t.u ? QStringLiteral("u = %1 (seed %2, draw %3)").arg(number(*t.u, 5)).arg(t.seed).arg(t.draws_before + 1)
                  : QStringLiteral("greedy: no draw (seed %1)").arg(t.seed));
    lines << QStringLiteral("V = %1; parameters: %2")
                 .arg(groupedNumber(t.vocab), t.settings.empty() ? QStringLiteral("the defaults") : qs(t.settings));
    if (t.clicked) {
        lines << QStringLiteral("<i>written by a click; the draw picked \u201c%1\u201d</i>")
                     .arg(qs(model_->token_text(t.drawn)).toHtmlEscaped());
    }
    lines << QStringLiteral("<i>click to show this step's plots</i>");
    return lines.join(QStringLiteral("<br>"));
}

void GenerateView::refreshText() {
    if (!tree_) {
        text_->setPieces({}, -1, QString(), QString());
        return;
    }
    std::vector<GeneratedTextView::Piece> pieces;
    for (const auto& word : prompt_words_) {
        GeneratedTextView::Piece piece;
        piece.text = qs(word.text);
        piece.attached = !pieces.empty() && attaches(word.text);
        piece.unknown = word.id == kUnknownWord;
        piece.tooltip = piece.unknown ? QStringLiteral("\u201c%1\u201d is not in the model's vocabulary: the model cannot "
                                                       "condition on it and backs off to the words after it")
                                            .arg(piece.text.toHtmlEscaped())
                                      : QStringLiteral("prompt word \u201c%1\u201d (id %2)")
                                            .arg(piece.text.toHtmlEscaped(), groupedNumber(word.id));
        pieces.push_back(std::move(piece));
    }
    for (const int node : tree_->line()) {
        const WrittenToken& t = tree_->node(node).token;
        GeneratedTextView::Piece piece;
        piece.text = qs(t.text);
        piece.node = node;
        piece.attached = !pieces.empty() && attaches(t.text);
        piece.clicked = t.clicked;
        piece.probability = t.probability;
        piece.rank = t.rank;
        piece.tooltip = tokenTooltip(node);
        pieces.push_back(std::move(piece));
    }
    const bool at_end = cursor_ == tree_->lineEnd();
    text_->setPieces(std::move(pieces), at_end ? GeneratedTextView::kNextSlot : markedNode(), QString(), QString());
    refreshNextSlot();
    // The step on show stays in view.
    const QRect marked = text_->nodeRect(at_end ? GeneratedTextView::kNextSlot : markedNode());
    if (marked.isValid()) text_scroll_->ensureVisible(marked.center().x(), marked.center().y(), 0, marked.height());
}

// The last slot: the word the next draw picks while the next step is on show (the answer line's token).
void GenerateView::refreshNextSlot() {
    if (!tree_) return;
    const int end = tree_->lineEnd();
    QString next = QStringLiteral("next...");
    QString tip = QStringLiteral("Click to show the step after the text's last token");
    if (tree_->node(end).token.ends) {
        next = QStringLiteral("(end of text)");
        tip = QStringLiteral("The text ended with </s>: Step does not go on. Undo the token, or click an earlier word to "
                             "branch there.");
    } else if (cursor_ == end && attached_ && shown_view_) {
        next = QStringLiteral("next: %1?").arg(qs(model_->token_text(shown_view_->trace->token)));
        tip = QStringLiteral("The word the next draw picks with the parameters now (the answer line's token): Step "
                             "writes it. Click a word in a plot to write another.");
    }
    if (next != text_->nextText()) text_->setNext(next, tip);
}

void GenerateView::refreshControls() {
    const bool ready = model_ && !job_running_ && model_state_ != ModelState::Loading;
    start_->setEnabled(!job_running_ && model_state_ != ModelState::Missing);
    prompt_->setEnabled(!job_running_);
    open_model_->setEnabled(!job_running_ && model_state_ != ModelState::Loading);
    const bool text = ready && tree_;
    const bool ended = text && tree_->node(tree_->lineEnd()).token.ends && cursor_ == tree_->lineEnd();
    step_->setEnabled(text && !ended);
    generate_->setEnabled(text && !ended);
    count_->setEnabled(text);
    undo_->setEnabled(text && tree_->lineEnd() != GenerationTree::kRoot);
    regenerate_->setEnabled(text && cursor_ != tree_->lineEnd());
    const bool selected = text && attached_ && shown_view_ && shown_selected_ >= 0 &&
                          static_cast<std::size_t>(shown_selected_) < model_->vocab_size();
    write_selected_->setVisible(selected);
    if (selected) {
        write_selected_->setText(QStringLiteral("Write \u201c%1\u201d here").arg(qs(model_->token_text(shown_selected_))));
    }
    const QString& path = model_state_ == ModelState::Ready ? model_path_ : loading_path_;
    const QString file = QFileInfo(path.isEmpty() ? qs(default_ngram_model_path()) : path).fileName();
    switch (model_state_) {
        case ModelState::Ready:
            model_text_ = QStringLiteral("Model: %1, %2").arg(file, qs(model_->description()));
            break;
        case ModelState::Loading:
            model_text_ = QStringLiteral("Loading %1...").arg(file);
            break;
        case ModelState::Missing:
            model_text_ = QStringLiteral("No model: apt install %1").arg(QString::fromUtf8(kNgramModelPackage));
            break;
        case ModelState::Failed:
            model_text_ = QStringLiteral("%1 could not be read").arg(file);
            break;
        case ModelState::NotLoaded:
            model_text_.clear();
            break;
    }
    model_label_->setToolTip(model_text_);
    elideModelLabel();
}

void GenerateView::elideModelLabel() {
    model_label_->setText(model_label_->fontMetrics().elidedText(model_text_, Qt::ElideRight, model_label_->width()));
}

bool GenerateView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == model_label_ && event->type() == QEvent::Resize) elideModelLabel();
    return QWidget::eventFilter(watched, event);
}

void GenerateView::refreshPlaceholder() {
    if (attached_ && tree_) {
        stack_->setCurrentWidget(pipeline_);
        return;
    }
    QString text;
    switch (model_state_) {
        case ModelState::NotLoaded:
        case ModelState::Loading:
            text = QStringLiteral("Loading the language model (%1)...")
                       .arg(loading_path_.isEmpty() ? qs(default_ngram_model_path()) : loading_path_);
            break;
        case ModelState::Missing:
            text = missingModelHtml();
            break;
        case ModelState::Failed:
            text = unreadableModelHtml(model_error_);
            break;
        case ModelState::Ready:
            text = tree_ ? QStringLiteral("<p>The window now shows \u201c%1\u201d, not this text.</p><p>Click a word "
                                          "of the text, a branch or the <i>next</i> slot to show the text's step "
                                          "again.</p>")
                               .arg(session_->source().toHtmlEscaped())
                         : QStringLiteral("<p>Type a prompt above and press <b>Start</b>: the plots then show the next "
                                          "word's distribution through every stage, with the parameters on the "
                                          "left.</p>");
            break;
    }
    placeholder_->setText(text);
    stack_->setCurrentWidget(placeholder_);
}

void GenerateView::refresh() {
    refreshText();
    if (tree_) {
        const int marked = markedNode();
        branches_->showTree(*tree_, prompt_text_, marked >= 0 ? marked : tree_->lineEnd());
    } else {
        branches_->clearTree(QStringLiteral("(no text yet)"));
    }
    refreshControls();
    refreshPlaceholder();
    if (!tree_ || !attached_) {
        info_->setText(QString());
        info_->setVisible(false);
        return;
    }
    info_->setVisible(true);
    const int marked = markedNode();
    if (marked < 0) {
        info_->setText(QStringLiteral("The plots show the next word after \u201c%1\u201d (token %2 of the text). "
                                      "<b>Step</b> writes the word the draw picks; <b>click a word in a plot</b> to "
                                      "write that one instead.")
                           .arg(contextTail(cursor_).toHtmlEscaped(), groupedNumber(tree_->depth(cursor_) + 1)));
    } else {
        info_->setText(QStringLiteral("The plots show the step that wrote \u201c%1\u201d (token %2 of the text) with "
                                      "the parameters now. <b>Click another word in a plot</b> to branch here, or "
                                      "<b>Regenerate from here</b>.")
                           .arg(qs(tree_->node(marked).token.text).toHtmlEscaped(), groupedNumber(tree_->depth(marked))));
    }
}

}  // namespace samplescope::ui
