#include "ui/responses/response_view.h"

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QPushButton>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"
#include "engine/io/token_display.h"
#include "engine/responses/response_loader.h"
#include "ui/common/font_scale.h"
#include "ui/common/palette.h"

namespace samplescope::ui {

namespace {

QString text(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QString number(double x, int digits = 4) {
    if (std::isinf(x)) return x > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(x, 'g', digits);
}

// The one wording of each verdict on screen.
QString verdictText(TokenVerdict verdict) {
    switch (verdict) {
        case TokenVerdict::Kept: return QStringLiteral("possible");
        case TokenVerdict::Cut: return QStringLiteral("excluded");
        case TokenVerdict::CannotTell: return QStringLiteral("cannot tell");
        case TokenVerdict::NotReached: return QStringLiteral("not reached");
        case TokenVerdict::Off: return QStringLiteral("off");
    }
    return {};
}

QColor verdictColor(TokenVerdict verdict) {
    switch (verdict) {
        case TokenVerdict::Cut: return palette::kVermillion;
        case TokenVerdict::CannotTell: return palette::kOrange;
        default: return palette::kBluishGreen;
    }
}

// A token's background: its verdict's hue, stronger the less probable it was
// (a surprising token stands out); an excluded one always strong.
QColor tokenBackground(TokenVerdict verdict, std::optional<double> value, bool normalised) {
    QColor color = verdictColor(verdict);
    double probability = value && normalised ? std::exp(*value) : 0.5;
    if (!std::isfinite(probability)) probability = 0.0;
    const double strength = verdict == TokenVerdict::Cut ? 0.85 : 0.12 + 0.6 * (1.0 - probability);
    color.setAlphaF(static_cast<float>(strength));
    return color;
}

// Text for a run of tokens: spaces kept, line breaks as line breaks, marks for the rest (token_display.h).
QString runText(const std::string& bytes) {
    QString out;
    std::size_t start = 0;
    while (start <= bytes.size()) {
        const std::size_t end = std::min(bytes.find('\n', start), bytes.size());
        std::string piece = bytes.substr(start, end - start);
        QString shown = text(visible_text(piece)).replace(QStringLiteral("\u2423"), QStringLiteral(" "));
        out += shown.toHtmlEscaped();
        if (end == bytes.size()) break;
        out += QStringLiteral("\u21B5<br>");
        start = end + 1;
    }
    return out.isEmpty() ? QStringLiteral("\u2205") : out;
}

QString tokenShown(const TokenExplanation& token) {
    if (token.bytes.empty()) return token.id ? QStringLiteral("tok_%1").arg(*token.id) : QStringLiteral("(no text)");
    return text(visible_text(token.bytes));
}

}  // namespace

ResponseView::ResponseView(QWidget* parent) : QWidget(parent) {
    setAcceptDrops(true);
    auto* layout = new QVBoxLayout(this);

    auto* files = new QHBoxLayout;
    auto* open_response = new QPushButton(tr("Open response..."), this);
    open_response->setObjectName(QStringLiteral("open_response"));
    auto* open_request = new QPushButton(tr("Open request..."), this);
    open_request->setObjectName(QStringLiteral("open_request"));
    source_label_ = new QLabel(tr("Open or drop a response with logprobs: OpenAI (whole or streamed), llama.cpp, "
                                  "a vLLM RequestOutput dump, or HF generate() scores/logits"),
                               this);
    source_label_->setWordWrap(true);
    files->addWidget(open_response);
    files->addWidget(open_request);
    files->addWidget(source_label_, 1);
    layout->addLayout(files);

    auto* controls = new QHBoxLayout;
    pipeline_combo_ = new QComboBox(this);
    pipeline_combo_->addItem(tr("By the format"), QString());
    for (const auto& preset : kPresets) pipeline_combo_->addItem(text(preset.title), text(preset.name));
    pipeline_combo_->setToolTip(tr("The engine's pipeline: the order its steps run in decides the verdicts"));
    mode_combo_ = new QComboBox(this);
    mode_combo_->addItem(tr("Mode: the response's"), QString());
    for (const auto& info : kLogprobModes) {
        mode_combo_->addItem(text(info.mode), text(info.mode));
        mode_combo_->setItemData(mode_combo_->count() - 1, text(info.meaning), Qt::ToolTipRole);
    }
    mode_combo_->setToolTip(tr("What the response's numbers are (the engine's logprobs mode)"));
    controls->addWidget(pipeline_combo_);
    controls->addWidget(mode_combo_);
    for (const Param param : {Param::Temperature, Param::TopK, Param::TopP, Param::MinP}) {
        const ParamInfo& info = param_info(param);
        auto* edit = new QLineEdit(this);
        edit->setObjectName(QStringLiteral("response_") + text(info.key));
        edit->setToolTip(text(info.formula) + tr(" Empty: the response's or request's value."));
        edit->setMaximumWidth(70);
        auto* label = new QLabel(text(info.label), this);
        label->setBuddy(edit);
        controls->addWidget(label);
        controls->addWidget(edit);
        param_edits_.emplace_back(param, edit);
        connect(edit, &QLineEdit::editingFinished, this, [this, param] { editParam(param); });
    }
    vocab_edit_ = new QLineEdit(this);
    vocab_edit_->setObjectName(QStringLiteral("response_vocab_size"));
    vocab_edit_->setPlaceholderText(tr("unknown"));
    vocab_edit_->setToolTip(tr("The vocabulary's size: bounds the ids outside the list (ranks, entropy, T > 1)"));
    vocab_edit_->setMaximumWidth(80);
    auto* vocab_label = new QLabel(tr("V"), this);
    vocab_label->setBuddy(vocab_edit_);
    controls->addWidget(vocab_label);
    controls->addWidget(vocab_edit_);
    controls->addStretch(1);
    layout->addLayout(controls);

    summary_label_ = new QLabel(this);
    summary_label_->setObjectName(QStringLiteral("response_summary"));
    summary_label_->setWordWrap(true);
    summary_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(summary_label_);
    error_label_ = new QLabel(this);
    error_label_->setWordWrap(true);
    error_label_->setStyleSheet(QStringLiteral("color: #B03000;"));
    error_label_->hide();
    layout->addWidget(error_label_);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    auto* left = new QWidget(splitter);
    auto* left_layout = new QVBoxLayout(left);
    left_layout->setContentsMargins(0, 0, 0, 0);
    text_ = new QTextBrowser(left);
    text_->setObjectName(QStringLiteral("response_text"));
    text_->setOpenLinks(false);
    text_->setMinimumWidth(240);
    connect(text_, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        bool ok = false;
        const int position = url.fragment().mid(1).toInt(&ok);
        if (ok) selectPosition(position);
    });
    left_layout->addWidget(text_, 1);
    const auto swatch = [](TokenVerdict verdict) {
        QColor c = verdictColor(verdict);
        c.setAlphaF(0.5f);
        return QStringLiteral("<span style=\"background-color:%1\">&nbsp;%2&nbsp;</span>").arg(c.name(QColor::HexArgb), verdictText(verdict));
    };
    auto* legend = new QLabel(swatch(TokenVerdict::Kept) + QStringLiteral(" ") + swatch(TokenVerdict::Cut) +
                                  QStringLiteral(" ") + swatch(TokenVerdict::CannotTell) + tr(" &nbsp; stronger = less probable"),
                              left);
    legend->setToolTip(tr("Each token on its verdict's colour, stronger the less probable it was; excluded tokens in "
                          "bold, undecided ones in italics. Tokens that hold parts of one character are drawn together."));
    left_layout->addWidget(legend);

    auto* right = new QWidget(splitter);
    auto* right_layout = new QVBoxLayout(right);
    right_layout->setContentsMargins(0, 0, 0, 0);
    auto* nav = new QHBoxLayout;
    position_spin_ = new QSpinBox(right);
    position_spin_->setPrefix(tr("token "));
    position_spin_->setRange(0, 0);
    position_spin_->setEnabled(false);
    connect(position_spin_, &QSpinBox::valueChanged, this, [this](int value) {
        if (value != selected_) selectPosition(value);
    });
    open_row_ = new QPushButton(tr("Open in the main view"), right);
    open_row_->setObjectName(QStringLiteral("open_row"));
    open_row_->setToolTip(tr("This position as a row of the stage-by-stage view (top N plus one 'rest' token: an "
                             "approximation, except for a full row)"));
    open_row_->setEnabled(false);
    connect(open_row_, &QPushButton::clicked, this, &ResponseView::openRowRequested);
    nav->addWidget(position_spin_);
    nav->addStretch(1);
    nav->addWidget(open_row_);
    right_layout->addLayout(nav);
    token_label_ = new QLabel(right);
    token_label_->setObjectName(QStringLiteral("response_token"));
    token_label_->setWordWrap(true);
    token_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    right_layout->addWidget(token_label_);
    chart_ = new QCustomPlot(right);
    chart_->setObjectName(QStringLiteral("response_chart"));
    chart_->setMinimumHeight(170);
    // The legend in a row of its own above the bars, so it never covers one.
    chart_->plotLayout()->insertRow(0);
    chart_->plotLayout()->addElement(0, 0, chart_->legend);
    chart_->plotLayout()->setRowStretchFactor(0, 0.001);
    chart_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    chart_->legend->setBorderPen(Qt::NoPen);
    chart_->legend->setFont(ui::scaledFont(font(), 8));
    chart_->legend->setVisible(true);
    right_layout->addWidget(chart_, 3);
    stages_ = new QTableWidget(0, 4, right);
    stages_->setObjectName(QStringLiteral("response_stages"));
    stages_->setHorizontalHeaderLabels({tr("Step"), tr("Verdict"), tr("Compared"), tr("Why")});
    stages_->horizontalHeader()->setSectionResizeMode(3, QHeaderView::Stretch);
    stages_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    stages_->verticalHeader()->hide();
    stages_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    stages_->setWordWrap(true);
    stages_->setMinimumHeight(110);
    // The reason column wraps: rows grow with it as the table is resized.
    connect(stages_->horizontalHeader(), &QHeaderView::sectionResized, stages_, &QTableWidget::resizeRowsToContents);
    right_layout->addWidget(stages_, 2);
    splitter->addWidget(left);
    splitter->addWidget(right);
    splitter->setStretchFactor(0, 4);
    splitter->setStretchFactor(1, 5);
    layout->addWidget(splitter, 1);

    connect(open_response, &QPushButton::clicked, this, &ResponseView::openResponseDialog);
    connect(open_request, &QPushButton::clicked, this, &ResponseView::openRequestDialog);
    connect(pipeline_combo_, &QComboBox::currentIndexChanged, this, [this](int) {
        if (!response_) return;
        ExplainRequest request = request_;
        request.pipeline = pipeline_combo_->currentData().toString().toStdString();
        if (!explainWith(*response_, request, tr("The pipeline"))) {
            const QSignalBlocker block(pipeline_combo_);
            pipeline_combo_->setCurrentIndex(std::max(0, pipeline_combo_->findData(QString::fromStdString(request_.pipeline))));
        }
    });
    connect(mode_combo_, &QComboBox::currentIndexChanged, this, [this](int) {
        if (!response_) return;
        ExplainRequest request = request_;
        request.logprobs_mode = mode_combo_->currentData().toString().toStdString();
        if (!explainWith(*response_, request, tr("The logprobs mode"))) {
            const QSignalBlocker block(mode_combo_);
            mode_combo_->setCurrentIndex(std::max(0, mode_combo_->findData(QString::fromStdString(request_.logprobs_mode))));
        }
    });
    connect(vocab_edit_, &QLineEdit::editingFinished, this, [this] {
        ExplainRequest request = request_;
        const QString typed = vocab_edit_->text().trimmed();
        try {
            request.vocab_size.reset();
            if (!typed.isEmpty()) {
                request.vocab_size = static_cast<std::size_t>(parse_uint_in_range(typed.toStdString(), "vocab_size", "V", 1, INT32_MAX));
                if (response_) response_detail::check_ids(*response_, *request.vocab_size);
            }
        } catch (const InputError& error) {
            showError(QString::fromUtf8(error.what()) + tr(". The explanation is unchanged."));
            vocab_edit_->setText(request_.vocab_size ? QString::number(*request_.vocab_size) : QString());
            return;
        }
        if (!response_) {
            request_ = request;
            return;
        }
        if (!explainWith(*response_, request, tr("V"))) {
            vocab_edit_->setText(request_.vocab_size ? QString::number(*request_.vocab_size) : QString());
        }
    });
    summary_label_->setText(tr("No response open."));
    showToken();
}

QLineEdit* ResponseView::paramEdit(Param param) const {
    for (const auto& [p, edit] : param_edits_) {
        if (p == param) return edit;
    }
    return nullptr;
}

void ResponseView::openResponseDialog() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open response"), QString(),
        tr("Responses (*.json *.txt *.jsonl *.sse *.npy *.safetensors);;All files (*)"));
    if (!path.isEmpty()) openResponseFile(path);
}

void ResponseView::openRequestDialog() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open request"), QString(),
                                                      tr("Request body (*.json);;All files (*)"));
    if (!path.isEmpty()) openRequestFile(path);
}

bool ResponseView::openResponseFile(const QString& path) {
    try {
        ResponseLoadOptions options;
        options.logprobs_mode = mode_combo_->currentData().toString().toStdString();
        return setResponse(load_response_file(path.toStdString(), options));
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()) + tr(". The previous response is unchanged."));
    } catch (const std::exception& error) {
        showError(path + QStringLiteral(": ") + QString::fromUtf8(error.what()) + tr(". The previous response is unchanged."));
    }
    return false;
}

bool ResponseView::openRequestFile(const QString& path) {
    ExplainRequest request = request_;
    try {
        request.request = load_request_settings_file(path.toStdString());
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()) + tr(". The previous request is unchanged."));
        return false;
    }
    if (!response_) {
        request_ = request;
        source_label_->setText(tr("Request %1 read; open a response to explain.").arg(QFileInfo(path).fileName()));
        return true;
    }
    return explainWith(*response_, request, tr("The request"));
}

bool ResponseView::setResponse(Response response) {
    ExplainRequest request = request_;
    // A new response starts with the view's mode only if the user chose one.
    if (request.vocab_size) {
        try {
            response_detail::check_ids(response, *request.vocab_size);
        } catch (const InputError& error) {
            showError(QString::fromUtf8(error.what()) + tr(". The previous response is unchanged."));
            return false;
        }
    }
    const QString source = QString::fromStdString(response.source);
    if (!explainWith(std::move(response), request, tr("The response"))) return false;
    selectPosition(0);
    emit responseOpened(source);
    return true;
}

bool ResponseView::explainWith(Response response, ExplainRequest request, const QString& what) {
    try {
        ExplainSetup setup = resolve_explain(response, request);
        ResponseExplanation explanation = explain_response(response, setup.settings);
        response_ = std::move(response);
        request_ = std::move(request);
        setup_ = std::move(setup);
        explanation_ = std::move(explanation);
    } catch (const InputError& error) {
        showError(QString::fromUtf8(error.what()) + tr(". %1 was refused; the explanation is unchanged.").arg(what));
        return false;
    }
    error_.clear();
    error_label_->hide();
    source_label_->setText(tr("<b>%1</b> (%2%3) &middot; pipeline %4 &middot; numbers: %5")
                               .arg(QFileInfo(QString::fromStdString(response_->source)).fileName().toHtmlEscaped(),
                                    text(response_format_name(response_->format)),
                                    response_->streamed ? tr(", streamed") : QString(),
                                    QString::fromStdString(setup_->settings.pipeline.name), text(setup_->settings.mode->mode)));
    source_label_->setToolTip(tr("Pipeline: %1.\nNumbers: %2, %3.\n%4")
                                  .arg(QString::fromStdString(setup_->pipeline_source), text(setup_->settings.mode->mode),
                                       text(setup_->settings.mode->meaning), QString::fromStdString(setup_->mode_source)));
    QString summary = QString::fromStdString(explanation_->summary_line());
    for (const auto& note : setup_->notes) summary += QStringLiteral("\n") + QString::fromStdString(note);
    summary_label_->setText(summary);
    showParams();
    position_spin_->setEnabled(true);
    {
        const QSignalBlocker block(position_spin_);
        position_spin_->setRange(0, static_cast<int>(response_->positions.size()) - 1);
    }
    renderText();
    if (selected_ >= static_cast<int>(response_->positions.size())) selected_ = -1;
    showToken();
    return true;
}

void ResponseView::showError(const QString& message) {
    error_ = message;
    error_label_->setText(message);
    error_label_->show();
    emit errorRaised(message);
}

void ResponseView::showParams() {
    if (!setup_) return;
    for (const auto& [param, edit] : param_edits_) {
        const double value = param_value(setup_->settings.params, param);
        // Six digits: servers echo float32 settings (0.800000011920929), which read as 0.8.
        edit->setText(param_info(param).integer() ? QString::number(static_cast<qlonglong>(value)) : QString::number(value, 'g', 6));
        QString source;
        for (const auto& [key, from] : setup_->param_sources) {
            if (key == param_info(param).key) source = QString::fromStdString(from);
        }
        edit->setToolTip(text(param_info(param).formula) + QStringLiteral("\n") +
                         (source.isEmpty() ? tr("Default (off).") : tr("From: %1").arg(source)));
    }
}

void ResponseView::editParam(Param param) {
    QLineEdit* edit = paramEdit(param);
    const QString typed = edit->text().trimmed();
    ExplainRequest request = request_;
    std::erase_if(request.flags, [param](const auto& entry) { return entry.first == param; });
    if (!typed.isEmpty()) {
        const auto value = parse_real(typed.toStdString());
        std::optional<std::string> problem;
        if (!value) {
            problem = std::string(param_info(param).key) + " must be a number, got \"" + typed.toStdString() + "\"";
        } else if (auto error = param_error(param, *value)) {
            problem = *error;
        }
        if (problem) {
            showError(QString::fromUtf8(escape_text(*problem).c_str()) + tr(". The explanation is unchanged."));
            showParams();
            return;
        }
        // Unchanged text (focus moved away) changes nothing.
        if (setup_ && QString::number(*value, 'g', 6) == QString::number(param_value(setup_->settings.params, param), 'g', 6)) return;
        request.flags.emplace_back(param, *value);
    }
    if (!response_) {
        request_ = request;
        return;
    }
    if (!explainWith(*response_, request, text(param_info(param).label))) showParams();
}

void ResponseView::renderText() {
    QString html = QStringLiteral("<div style=\"font-size: %1pt; line-height: 150%;\">").arg(12.0 * ui::fontScale());
    const auto& positions = response_->positions;
    const auto& tokens = explanation_->tokens;
    // Tokens that hold parts of one character are drawn as one run (linked to its first token).
    std::size_t i = 0;
    while (i < positions.size()) {
        std::size_t end = i + 1;
        std::string bytes = positions[i].token.bytes;
        while (end < positions.size() && utf8_valid_prefix(bytes) != bytes.size() && end - i < 4) {
            bytes += positions[end].token.bytes;
            ++end;
        }
        TokenVerdict verdict = TokenVerdict::Kept;
        for (std::size_t k = i; k < end; ++k) {
            if (tokens[k].verdict == TokenVerdict::Cut) verdict = TokenVerdict::Cut;
            if (tokens[k].verdict == TokenVerdict::CannotTell && verdict != TokenVerdict::Cut) verdict = TokenVerdict::CannotTell;
        }
        const QColor background = tokenBackground(verdict, positions[i].token.value, response_->normalised || response_->rows);
        const bool selected = selected_ >= static_cast<int>(i) && selected_ < static_cast<int>(end);
        QString style = QStringLiteral("color:#000000; text-decoration:none; background-color:%1;").arg(background.name(QColor::HexArgb));
        if (verdict == TokenVerdict::Cut) style += QStringLiteral(" font-weight:bold;");
        if (verdict == TokenVerdict::CannotTell) style += QStringLiteral(" font-style:italic;");
        if (selected) style += QStringLiteral(" border: 2px solid #CC79A7; text-decoration: underline;");
        html += QStringLiteral("<a href=\"#t%1\" style=\"%2\">%3</a>").arg(i).arg(style, runText(bytes));
        i = end;
    }
    html += QStringLiteral("</div>");
    const int scroll = text_->verticalScrollBar() ? text_->verticalScrollBar()->value() : 0;
    text_->setHtml(html);
    if (text_->verticalScrollBar()) text_->verticalScrollBar()->setValue(scroll);
}

void ResponseView::selectPosition(int position) {
    if (!explanation_ || position < 0 || position >= static_cast<int>(explanation_->tokens.size())) return;
    selected_ = position;
    {
        const QSignalBlocker block(position_spin_);
        position_spin_->setValue(position);
    }
    renderText();
    showToken();
}

void ResponseView::showToken() {
    const bool has = explanation_ && selected_ >= 0 && selected_ < static_cast<int>(explanation_->tokens.size());
    open_row_->setEnabled(has);
    if (!has) {
        token_label_->setText(explanation_ ? tr("Click a token for its alternatives and the verdict of each step.")
                                           : QString());
        stages_->setRowCount(0);
        chart_->clearPlottables();
        chart_->replot();
        return;
    }
    const TokenExplanation& token = explanation_->tokens[static_cast<std::size_t>(selected_)];
    QString rank = token.rank_hi && *token.rank_hi == token.rank_lo
                       ? tr("rank %1").arg(token.rank_lo)
                       : token.rank_hi ? tr("rank %1 to %2").arg(token.rank_lo).arg(*token.rank_hi)
                                       : tr("rank %1 or below").arg(token.rank_lo);
    QString value = token.value ? tr("%1 %2").arg(text(setup_->settings.mode->mode), number(*token.value)) : tr("its number not shown");
    if (token.value && response_->normalised && !response_->rows) value += tr(" (p %1)").arg(number(std::exp(*token.value)));
    QString entropy;
    if (token.entropy_lo) {
        entropy = token.entropy_hi && std::fabs(*token.entropy_hi - *token.entropy_lo) < 1e-9
                      ? tr("entropy %1 nats").arg(number(*token.entropy_lo))
                      : token.entropy_hi ? tr("entropy %1 to %2 nats").arg(number(*token.entropy_lo), number(*token.entropy_hi))
                                         : tr("entropy at least %1 nats (V unknown)").arg(number(*token.entropy_lo));
    }
    // The summary's first clause ("possible", "excluded by the stated parameters") in bold.
    const QString summary = QString::fromStdString(token.summary);
    const qsizetype colon = summary.indexOf(QLatin1Char(':'));
    const QString said = colon < 0 ? summary.toHtmlEscaped()
                                   : QStringLiteral("<b>%1</b>%2").arg(summary.left(colon).toHtmlEscaped(), summary.mid(colon).toHtmlEscaped());
    token_label_->setText(tr("<b>Token %1: %2</b>%3 &mdash; %4, %5; %6<br>%7")
                              .arg(selected_)
                              .arg(tokenShown(token).toHtmlEscaped(),
                                   token.id ? tr(" (id %1)").arg(*token.id) : QString(), rank, value, entropy, said));
    drawChart(token);
    fillStages(token);
}

void ResponseView::drawChart(const TokenExplanation& token) {
    chart_->clearPlottables();
    const ResponsePosition& position = response_->positions[static_cast<std::size_t>(selected_)];
    const bool normalised = (response_->normalised && setup_->settings.mode->kind != LogprobKind::Logit) || response_->rows;
    // The bars: the alternatives shown (and the token when below them), then the rest as one bar.
    struct Bar {
        QString label;
        double height;
        bool token;
        bool rest;
    };
    std::vector<Bar> bars;
    double top_value = position.top.empty() ? (position.token.value ? *position.token.value : 0.0) : *position.top.front().value;
    double log_total = 0.0;  // full rows: their log partition, so the bars are probabilities
    if (response_->rows) {
        const auto row = response_->rows->row(static_cast<std::size_t>(selected_));
        double max = -INFINITY;
        for (const double x : row) max = std::max(max, x);
        double sum = 0.0;
        for (const double x : row) sum += std::exp(x - max);
        log_total = max + std::log(sum);
    }
    const auto height = [&](double v) {
        if (response_->rows) return std::exp(v - log_total);
        return normalised ? std::exp(v) : std::exp(v - top_value);
    };
    const auto label = [](const ResponseToken& t) {
        const QString shown = t.bytes.empty() ? (t.id ? QStringLiteral("tok_%1").arg(*t.id) : QStringLiteral("?"))
                                              : QString::fromUtf8(visible_text(t.bytes).c_str());
        return shown.size() > 12 ? shown.left(11) + QStringLiteral("\u2026") : shown;
    };
    for (std::size_t i = 0; i < position.top.size(); ++i) {
        bars.push_back({label(position.top[i]), height(*position.top[i].value), position.token_in_top == i, false});
    }
    if (!position.token_in_top && position.token.value) bars.push_back({label(position.token), height(*position.token.value), true, false});
    if (normalised && token.rest_mass && *token.rest_mass > 0.0 && !response_->rows) {
        bars.push_back({tr("rest (approx.)"), *token.rest_mass, false, true});
    } else if (response_->rows) {
        double shown = 0.0;
        for (const auto& bar : bars) shown += bar.height;
        if (1.0 - shown > 1e-12) bars.push_back({tr("rest"), 1.0 - shown, false, true});
    }
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    const auto add = [&](const QBrush& brush, const QPen& pen, const QString& name, auto pick) {
        auto* plot = new QCPBars(chart_->xAxis, chart_->yAxis);
        plot->setName(name);
        plot->setBrush(brush);
        plot->setPen(pen);
        plot->setWidth(0.7);
        for (std::size_t i = 0; i < bars.size(); ++i) {
            if (pick(bars[i])) plot->addData(static_cast<double>(i + 1), bars[i].height);
        }
        return plot;
    };
    add(palette::keptBrush(), palette::keptPen(), tr("alternatives"), [](const Bar& b) { return !b.token && !b.rest; });
    add(palette::chosenBrush(), palette::chosenPen(), tr("this token"), [](const Bar& b) { return b.token; });
    // The rest bar is every id the response does not show, as one: an approximation.
    add(palette::restBrush(), palette::restPen(), tr("rest (approx.)"), [](const Bar& b) { return b.rest; });
    double most = 0.0;
    for (std::size_t i = 0; i < bars.size(); ++i) {
        ticker->addTick(static_cast<double>(i + 1), bars[i].label);
        most = std::max(most, bars[i].height);
    }
    chart_->xAxis->setTicker(ticker);
    chart_->xAxis->setTickLabelRotation(bars.size() > 6 ? 45 : 0);
    chart_->xAxis->setRange(0.3, static_cast<double>(bars.size()) + 0.7);
    chart_->yAxis->setRange(0.0, std::max(most * 1.1, 1e-9));
    chart_->yAxis->setLabel(normalised ? tr("probability (%1)").arg(text(setup_->settings.mode->mode))
                                       : tr("exp(logit - largest): relative weight"));
    chart_->replot();
}

void ResponseView::fillStages(const TokenExplanation& token) {
    stages_->setRowCount(static_cast<int>(token.stages.size()));
    for (std::size_t i = 0; i < token.stages.size(); ++i) {
        const StageVerdict& stage = token.stages[i];
        const int row = static_cast<int>(i);
        QString compared;
        if (!stage.quantity.empty() && stage.lo) {
            compared = QString::fromStdString(stage.quantity) + QStringLiteral(" ") + number(*stage.lo);
            if (!stage.hi) {
                compared += QStringLiteral(" or more");
            } else if (number(*stage.hi) != number(*stage.lo)) {
                compared += QStringLiteral(" to ") + number(*stage.hi);
            }
        }
        // The step as its parameter reads ("top_p = 0.95"), its title where it has none.
        const QString step = stage.parameter.empty() ? text(stage_info(stage.stage).title)
                                                     : QString::fromStdString(stage.parameter);
        const QStringList cells{step, verdictText(stage.verdict), compared, QString::fromStdString(stage.reason)};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setToolTip(c == 0 ? text(stage_info(stage.stage).title) + QStringLiteral(": ") + cells[c] : cells[c]);
            if (c == 1 && (stage.verdict == TokenVerdict::Cut || stage.verdict == TokenVerdict::CannotTell || stage.verdict == TokenVerdict::Kept)) {
                QColor color = verdictColor(stage.verdict);
                color.setAlphaF(0.35f);
                item->setBackground(color);
            }
            stages_->setItem(row, c, item);
        }
    }
    // The reason takes the width left (it wraps); the other columns at most 120 px (their tooltips hold the whole text).
    for (int c = 0; c + 1 < stages_->columnCount(); ++c) {
        stages_->resizeColumnToContents(c);
        stages_->setColumnWidth(c, std::min(stages_->columnWidth(c), 120));
    }
    stages_->resizeRowsToContents();
}

ResponseRow ResponseView::selectedRow() const {
    if (!response_ || !setup_ || selected_ < 0) throw InputError("response", "no token selected");
    return response_row(*response_, static_cast<std::size_t>(selected_), setup_->settings);
}

QString ResponseView::summaryText() const { return summary_label_->text(); }

void ResponseView::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

// The text's size is written into its HTML: a new font scale writes it again.
void ResponseView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange && response_ && explanation_) renderText();
}

void ResponseView::dropEvent(QDropEvent* event) {
    const auto urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.front().isLocalFile()) openResponseFile(urls.front().toLocalFile());
    event->acceptProposedAction();
}

}  // namespace samplescope::ui
