#include "ui/window/help.h"

#include <algorithm>

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

namespace {

// The terms no engine table holds; the stages and parameters come from theirs.
struct Term {
    const char* term;
    const char* meaning;
};
constexpr Term kTerms[] = {
    {"Logit", "A model's raw score for one token id; a row holds one per id (V of them). Only differences between "
              "logits matter: adding one number to every logit changes no probability."},
    {"V", "The number of token ids in the row (the vocabulary size)."},
    {"Token id", "A token's index in the row, 0 to V - 1. Its label comes from the vocabulary, else tok_<id>."},
    {"q", "A stage's probability of a token: the softmax of the stage's logits over its kept set, "
          "q_i = exp(l_i) / sum_j exp(l_j). An id the stage dropped has q = 0 after it."},
    {"Logprob", "The contract's logprob: log-softmax over all V ids of the logits after the penalties, before "
                "temperature and truncation (docs/contract.md, section 2). Engines report other modes (raw, or after "
                "their processing): Compare pipelines, Logprobs by engine."},
    {"Candidates", "The ids a stage receives: the kept set of the stage before it."},
    {"Kept set", "The ids a stage keeps. Truncation stages shrink it; the final kept set is what the draw can pick. "
                 "Kept ids are counted as ids, and a kept id's q can round to 0."},
    {"Dropped", "An id a stage removed from the kept set; plots draw it grey and hatched at the q it had coming in."},
    {"Rank", "A candidate's place in the order logit descending, id ascending (the engine's own tie rule)."},
    {"Mass", "The sum of q over a set of ids. Kept mass: the share of the distribution before truncation that the "
             "final kept set carries."},
    {"Rest", "The candidates beyond the top N bars of a plot, summed into one bar (kept and dropped apart), so "
             "nothing is cut silently. Its height is its mass; a rest taller than the plot is cut and says its mass."},
    {"Truncation", "Top-k, top-p and min-p (and llama.cpp's typical-p, top-n-sigma, XTC, mirostat): stages that "
                   "shrink the kept set without changing logits."},
    {"Penalties", "Repetition, presence and frequency penalties: they lower the logits of ids already seen in the "
                  "prompt or the generated ids."},
    {"Draw", "One uniform u taken from the request's stream; the inverse-CDF walk over the final kept set in "
             "ascending id order picks the first id whose cumulative q passes u."},
    {"u", "The uniform in [0, 1) of one draw, from the seed's stream."},
    {"Seed and stream", "The request's seed picks a PCG32 stream (stream(seed, 4)); each sampled token takes the "
                        "next uniform of it, so the same seed and input always draw the same tokens."},
    {"Draws consumed", "How many uniforms the request has taken: one per sampled token, none per greedy token."},
    {"Greedy", "T = 0: the largest logit wins (ties to the lowest id) and no uniform is taken."},
    {"Entropy", "-sum q log2 q over a distribution, in bits: how spread out it is."},
    {"Perplexity", "2^entropy: the number of equally likely choices with the same entropy."},
    {"Near tie", "Two float paths that disagree only where the reference's u lies within delta of the boundary "
                 "between the two tokens (or a keep-or-drop decision within delta of its threshold): counted apart "
                 "from a mismatch, which is a bug until shown otherwise (docs/contract.md, section 4)."},
    {"TV distance", "Total-variation distance between two distributions: half the sum over ids of |q_a - q_b|; 0 "
                    "when they are equal, 1 when they share no id. The most any event's probability differs by."},
    {"G-test", "The likelihood-ratio goodness-of-fit test of a sampler's draws against the exact q: G = 2 sum O "
               "ln(O / E) over bins of the kept set, against chi-square (docs/verify.md)."},
    {"Chi-square test", "Pearson's test of observed counts against expected ones, sum (O - E)^2 / E over bins; the "
                        "Histogram tab uses it for its draws."},
    {"p value", "How often a correct sampler would give a result at least this far from the exact q. Below alpha, "
                "the draws are called inconsistent with it."},
    {"Alpha", "The stated level of a test: a correct sampler is flagged in that share of runs."},
    {"Holm correction", "Adjusts the p values of many tests at once (one per token), so that testing many ids does "
                        "not flag one by chance."},
    {"Joint", "A truncation rule that decides with another one at once (SGLang's joint top-k and top-p) rather "
              "than one after the other."},
    {"Pipeline", "The stages in one engine's order with its rules: the contract's reference, or a preset of vLLM, "
                 "SGLang, HF transformers, FlashInfer or llama.cpp (Compare pipelines)."},
};

QString plain(std::string_view view) { return QString::fromUtf8(view.data(), static_cast<qsizetype>(view.size())); }

}  // namespace

std::vector<GlossaryEntry> glossary() {
    std::vector<GlossaryEntry> entries;
    for (const auto& term : kTerms) entries.push_back({QString::fromUtf8(term.term), QString::fromUtf8(term.meaning)});
    for (const auto& info : kStages) {
        entries.push_back({plain(info.title) + QStringLiteral(" (stage)"), plain(info.summary)});
    }
    for (const auto& info : kParams) {
        entries.push_back({plain(info.label) + QStringLiteral(" (") + plain(info.key) + QStringLiteral(")"),
                           plain(info.formula) + QStringLiteral(" Valid: ") + plain(info.valid_range) + QLatin1Char('.')});
    }
    std::stable_sort(entries.begin(), entries.end(), [](const GlossaryEntry& a, const GlossaryEntry& b) {
        return a.term.compare(b.term, Qt::CaseInsensitive) < 0;
    });
    return entries;
}

QString glossaryHtml() {
    QString html = QStringLiteral("<h2>Glossary</h2><p>The words the views use. Stages and parameters are described "
                                  "from the engine's own tables, so they say what it does.</p><dl>");
    for (const auto& entry : glossary()) {
        html += QStringLiteral("<dt><b>%1</b></dt><dd>%2</dd>").arg(entry.term.toHtmlEscaped(), entry.meaning.toHtmlEscaped());
    }
    return html + QStringLiteral("</dl>");
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
