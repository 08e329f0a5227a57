#include "ui/generate/generation_jobs.h"

#include <new>

#include "engine/base/input_error.h"
#include "engine/io/token_display.h"
#include "engine/json/generation_json.h"
#include "engine/models/model_source.h"
#include "ui/common/cpu_state.h"

namespace samplescope::ui {

ModelLoad loadModel(const std::string& path, std::uint64_t memory_budget) {
    ModelLoad out;
    try {
        ModelSpec spec;
        spec.path = path;
        LoadedModel loaded = load_model(spec, memory_budget);
        std::vector<std::string> display;
        display.reserve(loaded.model->labels().size());
        for (const auto& label : loaded.model->labels()) display.push_back(visible_text(label));
        out.labels = std::make_shared<const TokenLabels>(loaded.model->labels(), std::move(display));
        out.model = std::move(loaded.model);
        out.warnings = std::move(loaded.warnings);
    } catch (const InputError& error) {
        out.error = QString::fromUtf8(error.what());
    } catch (const std::bad_alloc&) {
        out.error = QString::fromStdString(path.empty() ? default_ngram_model_path() : path) +
                    QStringLiteral(": out of memory while loading the model");
    }
    return out;
}

QString missingModelHtml() {
    return QStringLiteral("<p><b>The built-in language model is not installed.</b></p>"
                          "<p>It is Debian's English trigram model (72,547 words), package <b>%1</b>:<br>"
                          "<tt>sudo apt install %1</tt><br>then show this tab again. SampleScope looked for "
                          "<tt>%2</tt> (set SAMPLESCOPE_NGRAM_MODEL to read another file).</p>"
                          "<p>Or open a model file in sphinxbase's binary format with <b>Open model...</b>. "
                          "Every other tab works without it.</p>")
        .arg(QString::fromUtf8(kNgramModelPackage), QString::fromStdString(default_ngram_model_path()).toHtmlEscaped());
}

QString unreadableModelHtml(const QString& error) {
    return QStringLiteral("<p><b>The language model could not be read:</b></p><p>%1</p><p>Open another file "
                          "with <b>Open model...</b>; every other tab works without it.</p>")
        .arg(error.toHtmlEscaped());
}

QString missingModelMessage() {
    // The loader's own message, which names the package; a window user opens a file instead of the CLI's flag.
    QString message = loadModel({}, 0).error;
    message.replace(QStringLiteral("give --model-path FILE"), QStringLiteral("open a model file (Open model...)"));
    return message;
}

std::string changedSettings(const SamplingParams& params) {
    const SamplingParams defaults;
    std::string out;
    for (std::size_t i = 0; i < kContractParamCount; ++i) {
        const ParamInfo& info = kParams[i];
        const double value = param_value(params, info.param);
        if (value == param_value(defaults, info.param)) continue;
        if (!out.empty()) out += ", ";
        out += std::string(info.key) + " " + format_number(value);
    }
    return out;
}

namespace {

WrittenToken record(const Generation& generation, const GenerationStep& step, std::int64_t written) {
    const SampleTrace& trace = step.trace.trace;
    const LanguageModel& model = generation.model();
    WrittenToken out;
    out.id = written;
    out.drawn = step.token;
    out.clicked = written != step.token;
    out.text = written == step.token ? step.text : model.token_text(written);
    out.ends = written == step.token ? step.ends : model.end_id() == written;
    const TokenStanding standing = token_standing(step.trace, written);
    out.probability = standing.probability;
    out.rank = standing.rank;
    // The trace's logprob is the drawn token's; a clicked word has none here rather than one re-derived.
    if (!out.clicked) out.logprob = trace.logprob;
    out.u = trace.u;
    out.kept = trace.final_kept().size();
    out.vocab = trace.vocab_size;
    out.seed = trace.seed;
    out.draws_before = trace.draws_before;
    out.settings = changedSettings(trace.params);
    return out;
}

}  // namespace

GenerationOutcome runGeneration(const GenerationJob& job) {
    GenerationOutcome out;
    try {
        clearUpperVectorState();
        auto generation = std::make_unique<Generation>(job.model, job.pipeline, job.params, job.prompt, GenerationOptions{},
                                                       job.start);
        for (int i = 0; i < job.steps && !generation->ended(); ++i) {
            const GenerationStep step = generation->step();
            const std::int64_t written = i == 0 && job.forced ? *job.forced : step.token;
            WrittenStep made{record(*generation, step, written), 0, std::nullopt};
            GenerationState state = generation->state();
            if (written != step.token) {
                // The step happened (its draw is spent); only the token differs, so the text goes on from it.
                state.generated.back() = written;
                generation = std::make_unique<Generation>(job.model, job.pipeline, job.params, job.prompt,
                                                          GenerationOptions{}, state);
            }
            made.draws = state.draws;
            made.mirostat_mu = state.mirostat_mu;
            out.steps.push_back(std::move(made));
        }
    } catch (const InputError& error) {
        out.error = QString::fromUtf8(error.what());
        out.error_field = QString::fromStdString(error.field());
    } catch (const std::bad_alloc&) {
        out.error = QStringLiteral("out of memory while writing the text");
        out.error_field = QStringLiteral("memory");
    }
    return out;
}

}  // namespace samplescope::ui
