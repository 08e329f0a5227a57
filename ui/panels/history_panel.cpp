#include "ui/panels/history_panel.h"

#include <cerrno>
#include <cstdlib>
#include <limits>

#include <QFontMetrics>
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
// tokens joins up), as plain text with its whitespace kept.
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
    return QString::fromUtf8(bytes.data(), static_cast<qsizetype>(bytes.size()));
}

// A run of the history line and its style.
struct Piece {
    QString text;
    QString style;  // CSS, "" for none
};

const QString kPromptStyle = QStringLiteral("color:#777777");
const QString kNewestStyle = QStringLiteral("background:#FFE08A");

// The end of `pieces` in at most `budget` characters, as HTML, "... " first where
// anything was left out: the line is held to what its label shows.
QString tailHtml(const std::vector<Piece>& pieces, qsizetype budget, bool cut_before) {
    QStringList parts;
    bool cut = cut_before;
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
        QString text = it->text;
        if (budget <= 0) {
            cut = cut || !text.isEmpty();
            break;
        }
        if (text.size() > budget) {
            text = text.right(budget);
            if (!text.isEmpty() && text.front().isLowSurrogate()) text.remove(0, 1);  // never half a character
            cut = true;
        }
        budget -= text.size();
        const QString escaped = text.toHtmlEscaped();
        parts.prepend(it->style.isEmpty() ? escaped : QStringLiteral("<span style='%1'>%2</span>").arg(it->style, escaped));
    }
    return QStringLiteral("<span style='white-space: pre-wrap'>") + (cut ? QStringLiteral("... ") : QString()) +
           parts.join(QString()) + QStringLiteral("</span>");
}

std::vector<Piece> decodedHistory(const Request& request, const Vocabulary& vocabulary, bool& cut) {
    const auto& prompt = request.prompt_ids();
    const auto& output = request.output_ids();
    const std::size_t output_from = output.size() > kTextTokens ? output.size() - kTextTokens : 0;
    const std::size_t prompt_room = kTextTokens - (output.size() - output_from);
    const std::size_t prompt_from = prompt.size() > prompt_room ? prompt.size() - prompt_room : 0;
    cut = prompt_from > 0 || output_from > 0;
    std::vector<Piece> pieces{{decoded(vocabulary, prompt, prompt_from, prompt.size()), kPromptStyle}};
    if (!output.empty()) {
        pieces.push_back({decoded(vocabulary, output, output_from, output.size() - 1), QString()});
        pieces.push_back({decoded(vocabulary, output, output.size() - 1, output.size()), kNewestStyle});
    }
    return pieces;
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

void HistoryPanel::resizeEvent(QResizeEvent* event) {
    QGroupBox::resizeEvent(event);
    if (fit_text_) fit_text_();
}

void HistoryPanel::showRequest(const Request& request, const TokenLabels& labels, const Vocabulary* vocabulary) {
    prompt_->setText(joinIds(request.prompt_ids()));
    output_->setText(joinIds(request.output_ids()));
    const auto& output = request.output_ids();
    // Two lines of the label at most: the dock does not grow, so more would be cut mid-line.
    // Fitted again when the panel's width changes.
    output_labels_->setMinimumHeight(2 * QFontMetrics(output_labels_->font()).lineSpacing() + 2);
    const auto fitted = [this](std::vector<Piece> pieces, bool cut) {
        return [this, pieces = std::move(pieces), cut] {
            const QFontMetrics metrics(output_labels_->font());
            const int width = output_labels_->contentsRect().width() > 0 ? output_labels_->contentsRect().width() : 200;
            qsizetype room = std::max<qsizetype>(24, 2 * (width / std::max(1, metrics.averageCharWidth())) - 6);
            // Shorter until it wraps into two lines (word wrap leaves the ends of lines empty).
            for (int tries = 0; tries < 8; ++tries) {
                output_labels_->setText(tailHtml(pieces, room, cut));
                if (output_labels_->heightForWidth(width) <= 2 * metrics.lineSpacing() + 2 || room <= 12) break;
                room = room * 4 / 5;
            }
        };
    };
    fit_text_ = nullptr;
    if (vocabulary && (!output.empty() || !request.prompt_ids().empty())) {
        bool cut = false;
        auto pieces = decodedHistory(request, *vocabulary, cut);
        output_labels_->setToolTip(QStringLiteral("The prompt (grey) and the generated ids decoded with the vocabulary; "
                                                  "the newest token highlighted.<br><br>") +
                                   tailHtml(pieces, std::numeric_limits<qsizetype>::max(), cut));
        fit_text_ = fitted(std::move(pieces), cut);
    } else {
        // The last kLabelTokens of prompt then output, as labels: the prompt grey, the newest token highlighted.
        constexpr std::size_t kLabelTokens = 12;
        const auto& prompt = request.prompt_ids();
        const std::size_t shown = std::min<std::size_t>(output.size(), kLabelTokens);
        const std::size_t prompt_shown = std::min<std::size_t>(prompt.size(), kLabelTokens - shown);
        std::vector<Piece> pieces;
        for (std::size_t i = prompt.size() - prompt_shown; i < prompt.size(); ++i) {
            pieces.push_back({QString::fromStdString(labels.label(prompt[i])) + QLatin1Char(' '), kPromptStyle});
        }
        for (std::size_t i = output.size() - shown; i < output.size(); ++i) {
            const QString word = QString::fromStdString(labels.label(output[i]));
            pieces.push_back({i + 1 == output.size() ? word : word + QLatin1Char(' '), i + 1 == output.size() ? kNewestStyle : QString()});
        }
        const bool cut = output.size() > shown || prompt.size() > prompt_shown;
        output_labels_->setToolTip(QStringLiteral("The prompt's labels (grey), then the generated ids' labels, the newest "
                                                  "highlighted; open a vocabulary to read the history as text."));
        if (pieces.empty()) {
            output_labels_->setText(QStringLiteral("(none yet)"));
        } else {
            fit_text_ = fitted(std::move(pieces), cut);
        }
    }
    if (fit_text_) fit_text_();
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
