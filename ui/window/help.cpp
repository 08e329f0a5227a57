#include "ui/window/help.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "engine/core/sampling_params.h"
#include "engine/core/stage.h"

namespace samplescope::ui {

namespace {

QString text(std::string_view view) { return QString::fromUtf8(view.data(), static_cast<qsizetype>(view.size())).toHtmlEscaped(); }

QString stageList(bool contract) {
    QString html = QStringLiteral("<ol>");
    for (const auto& info : kStages) {
        if (info.contract != contract) continue;
        html += QStringLiteral("<li><b>%1</b>%2: %3</li>")
                    .arg(text(info.title), info.truncates ? QStringLiteral(" <i>(truncates)</i>") : QString(), text(info.summary));
    }
    return html + QStringLiteral("</ol>");
}

}  // namespace

QString howSamplingWorksHtml() {
    QString html = QStringLiteral(
        "<h2>How sampling works here</h2>"
        "<p>A row of logits, one per token id, becomes one next token. The stages run in this order; each plot of the "
        "Pipeline tab shows one of them, and the answer line shows the token the next draw picks.</p>");
    html += stageList(true);
    html += QStringLiteral(
        "<p>Every sum runs in ascending id order in double precision, and ties rank to the lower id, so the same row, "
        "parameters and seed always give the same token. The draw takes one uniform <i>u</i> from the seed's stream "
        "and walks the final kept set's cumulative probabilities in ascending id order to the first one above "
        "<i>u</i>. Greedy (T = 0) takes no uniform. Step accepts the drawn token: it joins the generated ids (which "
        "the penalties read) and the stream moves on.</p>"
        "<h3>llama.cpp's other samplers</h3>"
        "<p>Compare pipelines runs them in llama.cpp's own order (the llamacpp preset):</p>");
    html += stageList(false);
    html += QStringLiteral("<h3>The parameters</h3><table cellspacing='0' cellpadding='3' border='1'>"
                           "<tr><th>Parameter</th><th>What it does</th><th>Valid</th></tr>");
    for (const auto& info : kParams) {
        html += QStringLiteral("<tr><td><b>%1</b><br><code>%2</code></td><td>%3</td><td>%4</td></tr>")
                    .arg(text(info.label), text(info.key), text(info.formula), text(info.valid_range));
    }
    html += QStringLiteral("</table>"
                           "<p>Select a token (click a bar or a row of the Token table) to follow its number through "
                           "every stage in the line under the answer. Ctrl+Z undoes any change of the input, the "
                           "parameters or the history; Ctrl+Shift+Z redoes it.</p>");
    return html;
}

QString aboutHtml() {
    return QStringLiteral(
        "<h2>SampleScope</h2>"
        "<p>See, teach and debug how a language model picks its next token: every stage of the sampling pipeline "
        "drawn from an exact double-precision reference, the pipelines of vLLM, SGLang, Hugging Face transformers, "
        "llama.cpp and FlashInfer side by side, a batch engine compared row by row, and a test of any sampler's own "
        "draws against the exact distribution.</p>"
        "<p>Built with Qt %1 and QCustomPlot.</p>")
        .arg(QString::fromLatin1(qVersion()));
}

void showHelpDialog(QWidget* parent, const QString& title, const QString& html) {
    auto* dialog = new QDialog(parent);
    dialog->setObjectName(QStringLiteral("help_dialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(title);
    auto* layout = new QVBoxLayout(dialog);
    auto* browser = new QTextBrowser(dialog);
    browser->setObjectName(QStringLiteral("help_text"));
    browser->setHtml(html);
    browser->setOpenExternalLinks(false);
    layout->addWidget(browser);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    layout->addWidget(buttons);
    dialog->resize(720, 560);
    dialog->show();
}

}  // namespace samplescope::ui
