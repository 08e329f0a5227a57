#include "ui/multistep/beam_view.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "engine/base/input_error.h"
#include "engine/models/language_model.h"
#include "ui/common/count_text.h"
#include "ui/generate/token_colours.h"
#include "ui/multistep/checked_spin_box.h"
#include "ui/session/session.h"

namespace samplescope::ui {

namespace {

QString qs(const std::string& text) { return QString::fromStdString(text); }
QString lp(double value) { return QString::number(value, 'f', 3).replace(QLatin1Char('-'), QChar(0x2212)); }

bool attaches(const std::string& text) {
    const std::array<std::string, 2> pair{"w", text};
    return join_token_texts(pair).size() == 1 + text.size();
}

std::vector<GeneratedTextView::Piece> promptPieces(const std::vector<PromptWord>& words) {
    std::vector<GeneratedTextView::Piece> pieces;
    for (const auto& word : words) {
        GeneratedTextView::Piece piece;
        piece.text = qs(word.text);
        piece.attached = !pieces.empty() && attaches(word.text);
        piece.unknown = word.id == kUnknownWord;
        piece.tooltip = QStringLiteral("prompt word \u201c%1\u201d").arg(piece.text.toHtmlEscaped());
        pieces.push_back(std::move(piece));
    }
    return pieces;
}

GeneratedTextView::Piece tokenPiece(const std::string& text, int node, double logprob, const QString& more,
                                    const std::vector<GeneratedTextView::Piece>& before) {
    GeneratedTextView::Piece piece;
    piece.text = qs(text);
    piece.node = node;
    piece.attached = !before.empty() && attaches(text);
    piece.probability = std::exp(logprob);
    piece.rank = 1;  // no rank mark: the colour is the model's probability
    piece.tooltip = QStringLiteral("<b>%1</b>: the model's p = %2 (log p %3)%4")
                        .arg(piece.text.toHtmlEscaped(), QString::number(piece.probability, 'g', 4), lp(logprob), more);
    return piece;
}

QString bandLegend() {
    QString swatches;
    for (const auto& band : probabilityBands()) {
        QString label = QString::fromUtf8(band.label);
        label.replace(QStringLiteral("q "), QStringLiteral("p "));
        swatches += QStringLiteral("<span style='background-color:%1; color:%2;'>&nbsp;%3&nbsp;</span> ")
                        .arg(band.background.name(), band.text.name(), label.toHtmlEscaped());
    }
    return QStringLiteral("The model's probability of each token: %1").arg(swatches);
}

}  // namespace

QString BeamView::defaultPrompt() { return QStringLiteral("the united"); }

BeamView::BeamView(Session* session, ModelSlot* model, QWidget* parent)
    : QWidget(parent), session_(session), model_(model) {
    setObjectName(QStringLiteral("beam_view"));

    prompt_ = new QLineEdit(defaultPrompt(), this);
    prompt_->setObjectName(QStringLiteral("beam_prompt"));
    prompt_->setMaxLength(static_cast<int>(kMaxPromptBytes) + 1);
    prompt_->setToolTip(QStringLiteral("Words the search continues; Enter searches from them"));
    search_ = new QPushButton(QStringLiteral("Search"), this);
    search_->setObjectName(QStringLiteral("beam_search"));
    search_->setToolTip(QStringLiteral("Beam search from this prompt, and a sampled continuation beside it"));
    width_ = new CheckedSpinBox("width", "width", this);
    width_->setObjectName(QStringLiteral("beam_width"));
    width_->setRange(1, static_cast<int>(kMaxBeamWidth));
    width_->setValue(4);
    width_->setPrefix(QStringLiteral("w = "));
    width_->setToolTip(QStringLiteral("Beams kept per step (HF num_beams, vLLM beam_width)"));
    steps_box_ = new CheckedSpinBox("steps", "steps", this);
    steps_box_->setObjectName(QStringLiteral("beam_steps"));
    steps_box_->setRange(1, kMaxSteps);
    steps_box_->setValue(10);
    steps_box_->setSuffix(QStringLiteral(" steps"));
    steps_box_->setToolTip(QStringLiteral("New tokens at most (HF max_new_tokens, vLLM max_tokens); the sampled text "
                                          "writes as many"));
    penalty_ = new QLineEdit(QStringLiteral("1"), this);
    penalty_->setObjectName(QStringLiteral("beam_length_penalty"));
    penalty_->setMaximumWidth(60);
    penalty_->setToolTip(QStringLiteral("Length penalty alpha: a finished hypothesis scores logprob / L^alpha "
                                        "(0: plain sums; 1: per token; larger favours longer ones). Enter applies."));
    penalty_text_ = penalty_->text();
    early_ = new QComboBox(this);
    early_->setObjectName(QStringLiteral("beam_early_stopping"));
    for (const auto value : {EarlyStopping::False, EarlyStopping::True, EarlyStopping::Never}) {
        const QString name = QString::fromUtf8(early_stopping_name(value).data(), static_cast<qsizetype>(early_stopping_name(value).size()));
        early_->addItem(name, name);
    }
    early_->setToolTip(QStringLiteral("HF's early_stopping: false stops when no running beam can beat the worst of w "
                                      "finished ones (a heuristic), true when w are finished, never only when no "
                                      "improvement is possible. vLLM has none."));
    rules_ = new QComboBox(this);
    rules_->setObjectName(QStringLiteral("beam_rules"));
    rules_->addItem(QStringLiteral("HF"), QStringLiteral("hf"));
    rules_->addItem(QStringLiteral("vLLM"), QStringLiteral("vllm"));
    rules_->setToolTip(QStringLiteral("Whose beam search: transformers' _beam_search or vLLM's LLM.beam_search "
                                      "(docs/beam.md)"));
    model_label_ = new QLabel(this);
    model_label_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    model_label_->setStyleSheet(QStringLiteral("color: #555555;"));
    open_model_ = new QPushButton(QStringLiteral("Open model..."), this);
    open_model_->setToolTip(QStringLiteral("Another n-gram model file (sphinxbase's binary trie format)"));
    show_step_ = new QSpinBox(this);
    show_step_->setObjectName(QStringLiteral("beam_show_step"));
    show_step_->setPrefix(QStringLiteral("Show step "));
    show_step_->setToolTip(QStringLiteral("The search as it stood after this step"));
    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("beam_status"));
    status_->setWordWrap(true);

    tree_view_ = new BeamTreeView(this);
    tree_scroll_ = new QScrollArea(this);
    tree_scroll_->setWidget(tree_view_);
    tree_scroll_->setWidgetResizable(true);
    tree_legend_ = new QLabel(
        QStringLiteral("Each node: a token and the beam's summed log p. <span style='background-color:#CFE3F2;'>&nbsp;"
                       "blue&nbsp;</span> the chosen hypothesis &nbsp;<b style='color:#009E73;'>green outline</b>: "
                       "finished, with its score = log p / L<sup>\u03b1</sup> &nbsp;<b>bold outline</b>: running beam "
                       "&nbsp;<span style='color:#9A9A9A;'>grey, dashed: pruned or not taken</span>"),
        this);
    tree_legend_->setWordWrap(true);
    tree_legend_->setStyleSheet(QStringLiteral("color: #555555;"));

    beam_title_ = new QLabel(this);
    beam_title_->setWordWrap(true);
    beam_text_ = new GeneratedTextView(this);
    beam_text_->setObjectName(QStringLiteral("beam_text"));
    beam_totals_ = new QLabel(this);
    beam_totals_->setObjectName(QStringLiteral("beam_totals"));
    beam_totals_->setWordWrap(true);
    sample_title_ = new QLabel(this);
    sample_title_->setWordWrap(true);
    sample_text_ = new GeneratedTextView(this);
    sample_text_->setObjectName(QStringLiteral("beam_sample_text"));
    sample_totals_ = new QLabel(this);
    sample_totals_->setObjectName(QStringLiteral("beam_sample_totals"));
    sample_totals_->setWordWrap(true);
    measure_note_ = new QLabel(bandLegend() + QStringLiteral("<br>log p: summed log_softmax of the model's rows, before "
                                                             "any sampling stage (what beam search maximises)."),
                               this);
    measure_note_->setWordWrap(true);
    measure_note_->setStyleSheet(QStringLiteral("color: #555555;"));
    hypotheses_ = new QTableWidget(0, 5, this);
    hypotheses_->setObjectName(QStringLiteral("beam_hypotheses"));
    hypotheses_->setHorizontalHeaderLabels({QStringLiteral("#"), QStringLiteral("hypothesis"), QStringLiteral("log p"),
                                            QStringLiteral("L"), QStringLiteral("score")});
    hypotheses_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    hypotheses_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    hypotheses_->verticalHeader()->setVisible(false);
    hypotheses_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    hypotheses_->setSelectionBehavior(QAbstractItemView::SelectRows);
    hypotheses_->setMinimumHeight(80);

    placeholder_ = new QLabel(this);
    placeholder_->setObjectName(QStringLiteral("beam_placeholder"));
    placeholder_->setWordWrap(true);
    placeholder_->setAlignment(Qt::AlignCenter);
    placeholder_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    placeholder_->setMargin(24);

    auto* row1 = new QHBoxLayout;
    row1->addWidget(new QLabel(QStringLiteral("Prompt:"), this));
    row1->addWidget(prompt_, 3);
    row1->addWidget(search_);
    row1->addSpacing(8);
    row1->addWidget(width_);
    row1->addWidget(steps_box_);
    row1->addWidget(new QLabel(QStringLiteral("Length penalty:"), this));
    row1->addWidget(penalty_);
    row1->addWidget(new QLabel(QStringLiteral("Early stopping:"), this));
    row1->addWidget(early_);
    row1->addWidget(new QLabel(QStringLiteral("Rules:"), this));
    row1->addWidget(rules_);
    auto* row2 = new QHBoxLayout;
    row2->addWidget(show_step_);
    row2->addWidget(status_, 3);
    row2->addWidget(model_label_, 1);
    row2->addWidget(open_model_);

    auto* tree_column = new QWidget(this);
    auto* tree_layout = new QVBoxLayout(tree_column);
    tree_layout->setContentsMargins(0, 0, 0, 0);
    tree_layout->setSpacing(2);
    tree_layout->addWidget(tree_scroll_, 1);
    tree_layout->addWidget(tree_legend_);
    auto* side = new QWidget(this);
    auto* side_layout = new QVBoxLayout(side);
    side_layout->setContentsMargins(0, 0, 0, 0);
    side_layout->setSpacing(2);
    side_layout->addWidget(beam_title_);
    side_layout->addWidget(beam_text_);
    side_layout->addWidget(beam_totals_);
    side_layout->addSpacing(4);
    side_layout->addWidget(sample_title_);
    side_layout->addWidget(sample_text_);
    side_layout->addWidget(sample_totals_);
    side_layout->addWidget(measure_note_);
    side_layout->addSpacing(4);
    side_layout->addWidget(hypotheses_, 1);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("beam_split"));
    split->addWidget(tree_column);
    split->addWidget(side);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);
    split->setSizes({600, 400});  // the tree first: the side's tables would take most of the width

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
    connect(search_, &QPushButton::clicked, this, [this] { start(prompt_->text()); });
    // A typed width or step limit out of range: the box keeps its value, the search stays, the line says why.
    for (auto* box : {width_, steps_box_}) {
        connect(static_cast<CheckedSpinBox*>(box), &CheckedSpinBox::refused, this, [this](const QString& message) {
            emit errorRaised(message + QStringLiteral(". The search on show is unchanged."));
        });
    }
    connect(width_, qOverload<int>(&QSpinBox::valueChanged), this, &BeamView::searchAgain);
    connect(steps_box_, qOverload<int>(&QSpinBox::valueChanged), this, &BeamView::searchAgain);
    connect(early_, qOverload<int>(&QComboBox::currentIndexChanged), this, &BeamView::searchAgain);
    connect(rules_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
        refreshControls();
        searchAgain();
    });
    connect(penalty_, &QLineEdit::returnPressed, this, &BeamView::searchAgain);
    connect(penalty_, &QLineEdit::editingFinished, this, [this] {
        if (penalty_->text() != penalty_text_) searchAgain();
    });
    connect(show_step_, qOverload<int>(&QSpinBox::valueChanged), this, [this](int step) {
        if (step != shown_) showThroughStep(step);
    });
    connect(hypotheses_, &QTableWidget::cellClicked, this, [this](int row, int) {
        const auto id = hypotheses_->item(row, 0)->data(Qt::UserRole).toInt();
        const QRect box = tree_view_->nodeRect(id);
        if (box.isValid()) tree_scroll_->ensureVisible(box.center().x(), box.center().y(), 60, 40);
    });
    connect(open_model_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open an n-gram model"), QString(),
                                                          QStringLiteral("n-gram models (*.lm.bin *.bin);;All files (*)"));
        if (!path.isEmpty()) model_->openFile(path);
    });
    connect(session_, &Session::paramsChanged, this, [this] {
        if (steps_.empty()) return;
        if (isVisible()) {
            request(prompt_text_, false);
        } else {
            sample_stale_ = true;
        }
    });
    connect(&watcher_, &QFutureWatcher<BeamOutcome>::finished, this, &BeamView::onJobFinished);
    connect(model_, &ModelSlot::changed, this, [this] {
        if (model_->model() && (pending_prompt_ || (isVisible() && !steps_.empty()))) {
            // A new model: the search on show is searched again on it (or the waiting one starts).
            const QString prompt = pending_prompt_.value_or(prompt_text_);
            pending_prompt_.reset();
            steps_.clear();
            result_.clear();
            sample_.reset();
            request(prompt, true);
        } else if (model_->model() && isVisible() && steps_.empty() && !running_) {
            request(prompt_->text(), true);
        } else if (!model_->loading()) {
            pending_prompt_.reset();
        }
        refresh();
        emit idleChanged();
    });
    refreshControls();
    refresh();
}

BeamView::~BeamView() { watcher_.waitForFinished(); }

bool BeamView::idle() const { return !running_ && !model_->loading(); }

void BeamView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    model_->ensure();
    // Beam search draws nothing: the tab shows a search as soon as it can.
    if (model_->model() && steps_.empty() && !running_) {
        request(prompt_->text(), true);
    } else if (sample_stale_ && !steps_.empty()) {
        request(prompt_text_, false);
    }
}

BeamOptions BeamView::controls() const {
    BeamOptions options;
    options.width = static_cast<std::size_t>(width_->value());
    options.steps = static_cast<std::size_t>(steps_box_->value());
    options.length_penalty = parse_length_penalty(penalty_->text().toStdString());
    options.rules = parse_beam_rules(rules_->currentData().toString().toStdString(), "beam-rules");
    if (options.rules == BeamRules::Hf) {
        options.early_stopping = parse_early_stopping(early_->currentData().toString().toStdString(), "early-stopping");
    }
    return options;
}

GenerationJob BeamView::sampleJob(const std::vector<PromptWord>& words, std::size_t steps) const {
    return GenerationJob{model_->model(), session_->request().pipeline(), session_->params(), words, {},
                         static_cast<int>(steps), std::nullopt};
}

void BeamView::start(const QString& prompt) {
    if (!model_->model()) {
        pending_prompt_ = prompt;
        if (!model_->ensureForRun()) {
            pending_prompt_.reset();
            emit errorRaised(missingModelMessage());
        }
        return;
    }
    request(prompt, true);
}

// A control changed: the search on show is searched again with it.
void BeamView::searchAgain() {
    if (!model_->model()) return;
    request(steps_.empty() ? prompt_->text() : prompt_text_, true);
}

bool BeamView::request(const QString& prompt, bool search) {
    Request next;
    next.prompt = prompt;
    try {
        if (search) {
            next.words = model_->model()->tokenize(prompt.toStdString());
            next.options = controls();
            next.search.emplace(model_->model(), next.words, next.options);
        } else {
            next.words = words_;
            next.options = options_;
        }
        next.sample = sampleJob(next.words, next.options.steps);
    } catch (const InputError& error) {
        // The controls show the search in force again.
        penalty_->setText(penalty_text_);
        emit errorRaised(QString::fromUtf8(error.what()) + QStringLiteral(". The search on show is unchanged."));
        return false;
    }
    if (search) penalty_text_ = penalty_->text();
    sample_stale_ = false;
    if (running_) {
        // Only the newest request waits; a search asked for earlier still runs if this one only samples.
        if (queued_ && queued_->search && !next.search) next.search = std::move(queued_->search);
        queued_ = std::move(next);
        return true;
    }
    launch(std::move(next));
    return true;
}

void BeamView::launch(Request request) {
    BeamJob job{request.search, request.sample};
    running_ = std::move(request);
    watcher_.setFuture(QtConcurrent::run([job = std::move(job)]() mutable { return runBeamJob(std::move(job)); }));
    refreshControls();
    emit idleChanged();
}

void BeamView::onJobFinished() {
    BeamOutcome outcome = watcher_.result();
    Request done = std::move(*running_);
    running_.reset();
    if (done.search) {
        if (outcome.error.isEmpty() && !outcome.steps.empty()) {
            prompt_text_ = done.prompt;
            words_ = std::move(done.words);
            options_ = done.options;
            steps_ = std::move(outcome.steps);
            result_ = std::move(outcome.result);
            shown_ = static_cast<int>(steps_.size());
            emit statusMessage(QStringLiteral("Beam search: %1 after %2").arg(
                result_.empty() ? QStringLiteral("no hypothesis") : QStringLiteral("\u201c%1\u201d").arg(qs([&] {
                    std::vector<std::string> texts;
                    for (const auto id : result_.front().tokens) texts.push_back(model_->model()->token_text(id));
                    return join_token_texts(texts);
                }())),
                countText(steps_.size(), QStringLiteral("step"), QStringLiteral("steps"))));
        } else if (!outcome.error.isEmpty()) {
            emit errorRaised(outcome.error + QStringLiteral(". The search on show is unchanged."));
        }
    }
    if (outcome.sample && (done.search ? outcome.error.isEmpty() : true)) {
        sample_ = std::move(outcome.sample);
        const std::string settings = changedSettings(done.sample->params);
        sample_settings_ = QStringLiteral("seed %1; %2")
                               .arg(done.sample->params.seed ? QString::number(*done.sample->params.seed) : QStringLiteral("chosen"),
                                    settings.empty() ? QStringLiteral("the default parameters") : qs(settings));
    }
    if (queued_) {
        Request next = std::move(*queued_);
        queued_.reset();
        launch(std::move(next));
    }
    refresh();
    emit idleChanged();
}

void BeamView::showThroughStep(int step) {
    if (steps_.empty()) return;
    shown_ = std::clamp(step, 1, static_cast<int>(steps_.size()));
    refreshTree();
    refreshControls();
}

void BeamView::refresh() {
    refreshControls();
    if (!model_->model()) {
        placeholder_->setText(model_->placeholderHtml());
        stack_->setCurrentIndex(0);
        return;
    }
    stack_->setCurrentIndex(1);
    refreshTree();
    refreshComparison();
}

void BeamView::refreshControls() {
    const bool hf = rules_->currentData().toString() == QStringLiteral("hf");
    early_->setEnabled(hf);
    search_->setEnabled(model_->state() != ModelSlot::State::Missing && !model_->loading());
    open_model_->setEnabled(!model_->loading() && !running_);
    const QString line = model_->modelLine();
    model_label_->setToolTip(line);
    model_label_->setText(model_label_->fontMetrics().elidedText(line, Qt::ElideRight, std::max(60, model_label_->width())));
    {
        const QSignalBlocker block(show_step_);
        show_step_->setRange(steps_.empty() ? 0 : 1, static_cast<int>(steps_.size()));
        show_step_->setValue(shown_);
        show_step_->setSuffix(QStringLiteral(" of %1").arg(steps_.size()));
        show_step_->setEnabled(steps_.size() > 1);
    }
    if (running_) {
        status_->setText(QStringLiteral("Searching..."));
        return;
    }
    if (steps_.empty()) {
        status_->setText(QString());
        return;
    }
    const BeamStep& step = steps_[static_cast<std::size_t>(shown_ - 1)];
    QString text = QStringLiteral("%1 rules, w = %2, \u03b1 = %3%4: ")
                       .arg(options_.rules == BeamRules::Hf ? QStringLiteral("HF") : QStringLiteral("vLLM"))
                       .arg(options_.width)
                       .arg(QString::number(options_.length_penalty))
                       .arg(options_.rules == BeamRules::Hf
                                ? QStringLiteral(", early_stopping %1").arg(QString::fromUtf8(early_stopping_name(options_.early_stopping).data()))
                                : QString());
    if (step.done) {
        text += QStringLiteral("stopped after step %1: %2").arg(step.step).arg(qs(step.stop_reason));
    } else {
        text += QStringLiteral("after step %1, %2 running, %3 finished")
                    .arg(step.step)
                    .arg(step.kept.size())
                    .arg(step.finished.size());
        if (step.best_possible && step.worst_finished) {
            text += QStringLiteral(" (best possible %1 vs worst finished %2)").arg(lp(*step.best_possible), lp(*step.worst_finished));
        }
    }
    status_->setText(text);
}

void BeamView::refreshTree() {
    if (steps_.empty() || !model_->model()) {
        tree_view_->setTree(std::nullopt, options_.length_penalty);
        hypotheses_->setRowCount(0);
        return;
    }
    const auto n = static_cast<std::size_t>(shown_);
    const bool last = n == steps_.size();
    const std::vector<BeamHypothesis>& hypotheses = last ? result_ : steps_[n - 1].finished;
    const std::vector<std::int64_t>* chosen = last && !result_.empty() ? &result_.front().tokens : nullptr;
    std::vector<std::string> prompt;
    for (const auto& word : words_) prompt.push_back(word.text);
    tree_view_->setTree(BeamTree(std::span(steps_).first(n), hypotheses, chosen, join_token_texts(prompt), *model_->model()),
                        options_.length_penalty);
    const BeamTree& tree = *tree_view_->tree();
    hypotheses_->setRowCount(static_cast<int>(hypotheses.size()));
    for (std::size_t i = 0; i < hypotheses.size(); ++i) {
        const BeamHypothesis& h = hypotheses[i];
        std::vector<std::string> texts;
        for (const auto id : h.tokens) texts.push_back(model_->model()->token_text(id));
        const auto row = static_cast<int>(i);
        auto* rank = new QTableWidgetItem(QString::number(i + 1));
        rank->setData(Qt::UserRole, tree.find(h.tokens));
        hypotheses_->setItem(row, 0, rank);
        hypotheses_->setItem(row, 1, new QTableWidgetItem(qs(join_token_texts(texts)) + (h.finished ? QString() : QStringLiteral(" (running)"))));
        hypotheses_->setItem(row, 2, new QTableWidgetItem(lp(h.logprob)));
        hypotheses_->setItem(row, 3, new QTableWidgetItem(QString::number(h.length)));
        hypotheses_->setItem(row, 4, new QTableWidgetItem(lp(h.score)));
        if (i == 0 && last) {
            for (int c = 0; c < 5; ++c) {
                QFont bold = hypotheses_->item(row, c)->font();
                bold.setBold(true);
                hypotheses_->item(row, c)->setFont(bold);
            }
        }
    }
    hypotheses_->setToolTip(last ? QStringLiteral("The result, best score first (score = log p / L^\u03b1)")
                                 : QStringLiteral("The finished hypotheses after step %1").arg(n));
    // The chosen hypothesis (or the root) in view.
    const int focus = chosen ? tree.find(*chosen) : BeamTree::kRoot;
    // The root first, so that the chosen end is shown with as much of its path as fits.
    const QRect root = tree_view_->nodeRect(BeamTree::kRoot);
    if (root.isValid()) tree_scroll_->ensureVisible(root.left(), root.top(), 8, 40);
    const QRect box = tree_view_->nodeRect(focus);
    if (box.isValid()) tree_scroll_->ensureVisible(box.center().x(), box.center().y(), 80, 60);
}

void BeamView::refreshComparison() {
    if (steps_.empty() || !model_->model()) {
        beam_title_->setText(QString());
        beam_text_->setPieces({}, -1, QString(), QString());
        beam_totals_->setText(QString());
        sample_title_->setText(QString());
        sample_text_->setPieces({}, -1, QString(), QString());
        sample_totals_->setText(QString());
        return;
    }
    const LanguageModel& model = *model_->model();
    beam_title_->setText(QStringLiteral("<b>Beam search's choice</b> (%1 rules, w = %2)")
                             .arg(options_.rules == BeamRules::Hf ? QStringLiteral("HF") : QStringLiteral("vLLM"))
                             .arg(options_.width));
    auto pieces = promptPieces(words_);
    if (result_.empty()) {
        beam_text_->setPieces(std::move(pieces), -1, QStringLiteral("(no hypothesis)"), QString());
        beam_totals_->setText(QString());
    } else {
        const BeamHypothesis& best = result_.front();
        // Each token's own log-probability, as the search scored it along the chosen path.
        std::vector<std::int64_t> prefix;
        for (std::size_t i = 0; i < best.tokens.size() && i < steps_.size(); ++i) {
            const BeamStep& step = steps_[i];
            double token_logprob = 0.0;
            for (const auto& c : step.candidates) {
                if (c.token == best.tokens[i] && step.beams[c.beam].tokens == prefix) token_logprob = c.token_logprob;
            }
            pieces.push_back(tokenPiece(model.token_text(best.tokens[i]), static_cast<int>(i), token_logprob, QString(), pieces));
            prefix.push_back(best.tokens[i]);
        }
        beam_text_->setPieces(std::move(pieces), -1, QString(), QString());
        beam_totals_->setText(QStringLiteral("log p = <b>%1</b> over %2 (%3 per token); score %4 (L = %5, \u03b1 = %6)")
                                  .arg(lp(best.logprob),
                                       countText(best.tokens.size(), QStringLiteral("token"), QStringLiteral("tokens")),
                                       lp(best.tokens.empty() ? 0.0 : best.logprob / static_cast<double>(best.tokens.size())),
                                       lp(best.score))
                                  .arg(best.length)
                                  .arg(QString::number(options_.length_penalty)));
    }
    sample_title_->setText(QStringLiteral("<b>Sampled</b> with the window's parameters (%1)").arg(sample_settings_.toHtmlEscaped()));
    auto sampled = promptPieces(words_);
    if (!sample_) {
        sample_text_->setPieces(std::move(sampled), -1, QStringLiteral("sampling..."), QString());
        sample_totals_->setText(QString());
        return;
    }
    double total = 0.0;
    for (std::size_t i = 0; i < sample_->steps.size() && i < sample_->model_logprobs.size(); ++i) {
        const WrittenToken& token = sample_->steps[i].token;
        const double logprob = sample_->model_logprobs[i];
        total += logprob;
        QString more = QStringLiteral("<br>drawn from the window's pipeline: q = %1 there (rank %2 of %3 kept)")
                           .arg(QString::number(token.probability, 'g', 4))
                           .arg(token.rank)
                           .arg(token.kept);
        if (token.u) more += QStringLiteral(", u = %1").arg(QString::number(*token.u, 'g', 6));
        sampled.push_back(tokenPiece(token.text, static_cast<int>(i), logprob, more, sampled));
    }
    sample_text_->setPieces(std::move(sampled), -1, QString(), QString());
    const std::size_t n = std::min(sample_->steps.size(), sample_->model_logprobs.size());
    QString totals = QStringLiteral("log p = <b>%1</b> over %2 (%3 per token)")
                         .arg(lp(total), countText(n, QStringLiteral("token"), QStringLiteral("tokens")),
                              lp(n ? total / static_cast<double>(n) : 0.0));
    if (!sample_->error.isEmpty()) totals += QStringLiteral("<br><span style='color:#D55E00;'>stopped: %1</span>").arg(sample_->error.toHtmlEscaped());
    sample_totals_->setText(totals);
}

}  // namespace samplescope::ui
