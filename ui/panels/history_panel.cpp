#include "ui/panels/history_panel.h"

#include <cerrno>
#include <cstdlib>

#include <QFormLayout>
#include <QHBoxLayout>
#include <QRegularExpression>

#include "engine/base/input_error.h"
#include "engine/core/token_history.h"
#include "engine/io/token_display.h"

namespace samplescope::ui {

std::vector<std::int64_t> parseIds(const QString& text, const char* field) {
    return parse_id_list(text.toStdString(), field);
}

namespace {

QString joinIds(const std::vector<std::int64_t>& ids) {
    QStringList parts;
    for (const auto id : ids) parts << QString::number(id);
    return parts.join(QStringLiteral(", "));
}

// The tokens shown as text at most: the end of a long request.
constexpr std::size_t kTextTokens = 160;

// The bytes of ids [from, to) decoded as UTF-8 (a character split across two
// tokens joins up), HTML-escaped with its whitespace kept.
QString decoded(const Vocabulary& vocabulary, const std::vector<std::int64_t>& ids, std::size_t from, std::size_t to) {
    std::string bytes;
    for (std::size_t i = from; i < to; ++i) {
        const auto id = static_cast<std::size_t>(ids[i]);
        if (id < vocabulary.pieces.size() && (vocabulary.defined.empty() || vocabulary.defined[id])) {
            bytes += vocabulary.special.size() > id && vocabulary.special[id] ? vocabulary.pieces[id]
                                                                              : token_bytes(vocabulary.pieces[id], vocabulary.encoding);
        } else {
            bytes += "[tok_" + std::to_string(id) + "]";
        }
    }
    return QString::fromUtf8(bytes.data(), static_cast<qsizetype>(bytes.size())).toHtmlEscaped();
}

QString decodedHistory(const Request& request, const Vocabulary& vocabulary) {
    const auto& prompt = request.prompt_ids();
    const auto& output = request.output_ids();
    const std::size_t output_from = output.size() > kTextTokens ? output.size() - kTextTokens : 0;
    const std::size_t prompt_room = kTextTokens - (output.size() - output_from);
    const std::size_t prompt_from = prompt.size() > prompt_room ? prompt.size() - prompt_room : 0;
    QString html = QStringLiteral("<span style='white-space: pre-wrap'>");
    if (prompt_from > 0 || output_from > 0) html += QStringLiteral("... ");
    html += QStringLiteral("<span style='color:#777777'>%1</span>").arg(decoded(vocabulary, prompt, prompt_from, prompt.size()));
    if (!output.empty()) {
        html += decoded(vocabulary, output, output_from, output.size() - 1);
        html += QStringLiteral("<span style='background:#FFE08A'>%1</span>")
                    .arg(decoded(vocabulary, output, output.size() - 1, output.size()));
    }
    return html + QStringLiteral("</span>");
}

}  // namespace

HistoryPanel::HistoryPanel(QWidget* parent) : QGroupBox(QStringLiteral("History"), parent) {
    setObjectName(QStringLiteral("history_panel"));
    auto* form = new QFormLayout(this);
    form->setVerticalSpacing(4);
    prompt_ = new QLineEdit(this);
    prompt_->setObjectName(QStringLiteral("prompt_ids"));
    prompt_->setPlaceholderText(QStringLiteral("e.g. 1, 2, 2"));
    prompt_->setToolTip(QStringLiteral("Prompt ids: seen by the repetition penalty only. Press Enter to apply."));
    output_ = new QLineEdit(this);
    output_->setObjectName(QStringLiteral("output_ids"));
    output_->setPlaceholderText(QStringLiteral("ids generated so far"));
    output_->setToolTip(QStringLiteral("Generated ids: seen by all three penalties (counts for frequency). "
                                       "Press Enter to apply; Step appends the drawn token."));
    output_labels_ = new QLabel(this);
    output_labels_->setObjectName(QStringLiteral("history_text"));
    output_labels_->setTextFormat(Qt::RichText);
    output_labels_->setWordWrap(true);
    output_labels_->setStyleSheet(QStringLiteral("color: #555555;"));
    error_ = new QLabel(this);
    error_->setObjectName(QStringLiteral("error_history"));
    error_->setStyleSheet(QStringLiteral("color: #B00020;"));
    error_->setWordWrap(true);
    error_->setVisible(false);
    draws_ = new QLabel(this);
    draws_->setObjectName(QStringLiteral("draws_consumed"));
    draws_->setToolTip(QStringLiteral("One uniform per sampled token, none per greedy token (the contract's draw accounting)."));
    step_ = new QPushButton(QStringLiteral("Step: accept the drawn token"), this);
    step_->setObjectName(QStringLiteral("step"));
    step_->setToolTip(QStringLiteral("Append the token shown to the generated ids and advance the stream (Ctrl+Return)."));
    reset_ = new QPushButton(QStringLiteral("Reset request"), this);
    reset_->setObjectName(QStringLiteral("reset_request"));
    reset_->setToolTip(QStringLiteral("Back to the seed's first draw and the generated ids the request started with."));
    form->addRow(QStringLiteral("Prompt ids"), prompt_);
    form->addRow(QStringLiteral("Generated ids"), output_);
    form->addRow(QString(), output_labels_);
    form->addRow(error_);
    form->addRow(QStringLiteral("Draws consumed"), draws_);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(step_, 1);
    buttons->addWidget(reset_);
    form->addRow(buttons);

    connect(prompt_, &QLineEdit::editingFinished, this, &HistoryPanel::onEdit);
    connect(output_, &QLineEdit::editingFinished, this, &HistoryPanel::onEdit);
    connect(step_, &QPushButton::clicked, this, &HistoryPanel::stepRequested);
    connect(reset_, &QPushButton::clicked, this, &HistoryPanel::resetRequested);
}

void HistoryPanel::showRequest(const Request& request, const TokenLabels& labels, const Vocabulary* vocabulary) {
    prompt_->setText(joinIds(request.prompt_ids()));
    output_->setText(joinIds(request.output_ids()));
    const auto& output = request.output_ids();
    if (vocabulary && (!output.empty() || !request.prompt_ids().empty())) {
        output_labels_->setText(decodedHistory(request, *vocabulary));
        output_labels_->setToolTip(QStringLiteral("The prompt (grey) and the generated ids decoded with the vocabulary; "
                                                  "the newest token highlighted."));
    } else {
        // The last kLabelTokens of prompt then output, as labels: the prompt grey, the newest token highlighted.
        constexpr std::size_t kLabelTokens = 12;
        const auto& prompt = request.prompt_ids();
        const std::size_t shown = std::min<std::size_t>(output.size(), kLabelTokens);
        const std::size_t prompt_shown = std::min<std::size_t>(prompt.size(), kLabelTokens - shown);
        QStringList words;
        for (std::size_t i = prompt.size() - prompt_shown; i < prompt.size(); ++i) {
            words << QStringLiteral("<span style='color:#777777'>%1</span>")
                         .arg(QString::fromStdString(labels.label(prompt[i])).toHtmlEscaped());
        }
        for (std::size_t i = output.size() - shown; i < output.size(); ++i) {
            const QString word = QString::fromStdString(labels.label(output[i])).toHtmlEscaped();
            words << (i + 1 == output.size() ? QStringLiteral("<span style='background:#FFE08A'>%1</span>").arg(word) : word);
        }
        const bool cut = output.size() > shown || prompt.size() > prompt_shown;
        output_labels_->setText(words.isEmpty() ? QStringLiteral("(none yet)")
                                                : (cut ? QStringLiteral("... ") : QString()) + words.join(QLatin1Char(' ')));
        output_labels_->setToolTip(QStringLiteral("The prompt's labels (grey), then the generated ids' labels, the newest "
                                                  "highlighted; open a vocabulary to read the history as text."));
    }
    draws_->setText(QStringLiteral("<b>%1</b> (seed %2)").arg(request.draws_consumed()).arg(request.seed()));
    error_->setVisible(false);
    prompt_->setStyleSheet(QString());
    output_->setStyleSheet(QString());
}

void HistoryPanel::showError(const QString& field, const QString& message) {
    error_->setText(message);
    error_->setVisible(true);
    (field == QStringLiteral("prompt_ids") ? prompt_ : output_)->setStyleSheet(QStringLiteral("border: 2px solid #B00020;"));
}

void HistoryPanel::onEdit() {
    if (!prompt_->isModified() && !output_->isModified()) return;  // focus left without an edit
    try {
        const auto prompt = parseIds(prompt_->text(), "prompt_ids");
        const auto output = parseIds(output_->text(), "output_ids");
        error_->setVisible(false);
        prompt_->setModified(false);
        output_->setModified(false);
        emit historyEdited(prompt, output);
    } catch (const InputError& error) {
        showError(QString::fromStdString(error.field()), QString::fromUtf8(error.what()));
    }
}

}  // namespace samplescope::ui
