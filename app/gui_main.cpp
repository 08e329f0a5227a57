// samplescope: the desktop visualiser. With no flags it opens on the Generate
// tab, a real English model writing from a short prompt, when that model is
// installed, and on the built-in full-size example otherwise; it takes the same
// input and parameter flags as `samplescope-cli trace` (--vocab included), and
// --prompt / --steps for the Generate, Speculative and Beam tabs. `--screenshot FILE.png` draws the
// window offscreen with those inputs, saves it and exits (exit 2 with one line
// on bad input).
#include <cctype>
#include <iostream>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <QApplication>
#include <QDeadlineTimer>
#include <QLabel>
#include <QTabWidget>
#include <QTextDocumentFragment>

#include <CLI/CLI.hpp>

#include "app/request_options.h"
#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/base/number_text.h"
#include "engine/pipelines/pipeline_examples.h"
#include "engine/io/vocabulary.h"
#include "engine/models/model_source.h"
#include "ui/common/examples.h"
#include "ui/common/font_scale.h"
#include "ui/generate/generation_jobs.h"
#include "ui/window/main_window.h"

namespace {

struct ViewOptions {
    std::string screenshot;
    std::string tab;  // "" = pipeline, or the tab the other flags open
    int top_n = 0;
    bool log_scale = false;
    std::int64_t select = -1;
    // The count and index flags as typed, read signed then ranged (engine/base/number_text.h).
    std::string top_n_text;
    std::string select_text;
    std::string histogram_draws_text;
    std::string pipeline_example;  // a "Where engines differ" example's key
    std::string sampler_example;   // a "llama.cpp samplers" example's key
    bool open_samplers = false;    // the parameter panel's llama.cpp group shown open
    std::string window_size_text;  // --window-size WxH as typed
    std::string font_scale_text;   // --font-scale as typed
    double font_scale = 1.0;
    int width = 1600;              // the screenshot's size
    int height = 1000;
    int histogram_draws = 0;       // > 0: run the empirical histogram with this many draws
    std::string response_file;     // --response: opened in the Response tab
    std::string response_request;  // --response-request: its request body
    std::string response_token_text;  // --response-token: the token shown there
    std::string prompt;            // --prompt: the Generate tab's text starts from it
    std::string steps_text;        // --steps: tokens the Generate tab writes at start, as typed
    int steps = 0;
};

// The Generate tab's start: the model (loaded before the window, so a bad
// file or prompt fails fast), the prompt, the tokens to write and the parameters.
struct GenerateStart {
    std::string tab = "generate";  // or "speculative", "beam": the tab that writes it
    samplescope::ui::ModelLoad model;  // null model: load it in the window (the plain start)
    QString prompt;
    int steps = 0;
    std::optional<samplescope::SamplingParams> params;  // from flags; none: the window's
};

// The tokens the plain start writes after its prompt: enough to show coloured words and the tree.
constexpr int kDefaultStartSteps = 6;

const samplescope::PipelineExample* find_pipeline_example(const std::string& key) {
    for (const auto& example : samplescope::pipeline_examples()) {
        if (example.key == key) return &example;
    }
    return nullptr;
}

// --tab's names and the views they pick.
QWidget* tab_widget(samplescope::ui::MainWindow& window, const std::string& tab) {
    if (tab == "tokens") return window.tokenTable();
    if (tab == "logits") return window.logitsEditor();
    if (tab == "compare-pipelines") return window.pipelineCompareView();
    if (tab == "compare-stages-a") return window.pipelineStagePlots(0);
    if (tab == "compare-stages-b") return window.pipelineStagePlots(1);
    if (tab == "histogram") return window.histogramView();
    if (tab == "batch") return window.batchCompareView();
    if (tab == "verify") return window.verifyView();
    if (tab == "responses") return window.responseView();
    if (tab == "generate") return window.generateView();
    if (tab == "speculative") return window.speculativeView();
    if (tab == "beam") return window.beamView();
    return window.pipelineView();
}

// Runs the histogram view's draws to the end (the event loop keeps turning).
void run_histogram(samplescope::ui::MainWindow& window, int draws) {
    auto* view = window.histogramView();
    window.showView(view);  // feeds it the window's input
    view->setDraws(draws);
    view->start();
    QDeadlineTimer deadline(120000);
    while (view->running() && !deadline.hasExpired()) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QCoreApplication::processEvents();
    if (view->running()) throw samplescope::InputError("histogram-draws", "the histogram was not drawn in time");
    if (!view->result()) {
        throw samplescope::InputError("histogram-draws", QTextDocumentFragment::fromHtml(view->summary()->text()).toPlainText().toStdString());
    }
}

bool has_request_flags(const samplescope::RequestOptions& options) {
    for (const auto& [key, text] : options.param_text) {
        if (!text.empty()) return true;
    }
    return !options.seed.empty() || !options.prompt_ids.empty() || !options.output_ids.empty() ||
           !options.skip_draws.empty() || !options.logit_bias.empty() || !options.dry_sequence_breakers.empty() ||
           !options.mirostat_mu.empty();
}

// Flags that only shape how a logits file is read: meaningless without one.
bool has_file_flags(const samplescope::RequestOptions& options) {
    return !options.row.empty() || !options.tensor.empty() || options.u2_as_bf16;
}

struct StartRequest {
    bool on_example = true;  // no logits flags: the built-in example's row
    samplescope::ResolvedRequest resolved;
    QString source;
};

// Resolves the flags exactly as the CLI does, before any window exists, so bad
// input fails fast with one line. Without logits flags the other flags apply
// to the built-in example's row and history.
std::optional<StartRequest> resolve_start(samplescope::RequestOptions options, const samplescope::ui::Example& example) {
    using namespace samplescope;
    StartRequest start;
    start.on_example = !has_logits_input(options);
    if (start.on_example) {
        if (!has_request_flags(options)) return std::nullopt;
        const auto join = [](const auto& items, auto format) {
            std::string text;
            for (const auto& item : items) text += format(item) + ",";
            return text;
        };
        options.values = join(example.logits, [](double x) { return format_number(x); });
        if (options.prompt_ids.empty() && options.output_ids.empty()) {
            const auto id_text = [](std::int64_t id) { return std::to_string(id); };
            options.prompt_ids = join(example.prompt_ids, id_text);
            options.output_ids = join(example.output_ids, id_text);
        }
        if (options.seed.empty() && example.params.seed) options.seed = std::to_string(*example.params.seed);
    }
    start.resolved = resolve_request(options);
    if (!start.resolved.params.seed) start.resolved.params.seed = choose_seed();  // as the CLI does: chosen, then shown
    start.source = options.logits_file.empty() ? QStringLiteral("--values") : QString::fromStdString(options.logits_file);
    return start;
}

void apply_start(samplescope::ui::MainWindow& window, const StartRequest& start) {
    auto& session = window.session();
    const auto& request = start.resolved;
    if (!start.on_example) session.setLogits(request.logits, request.labels, start.source);
    session.setParams(request.params);
    session.setHistory(request.prompt_ids, request.output_ids);
    if (request.skip_draws > 0) session.skipDraws(request.skip_draws);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"samplescope: see, teach and debug how a language model picks its next token", "samplescope"};
    samplescope::RequestOptions request_options;
    ViewOptions view;
    samplescope::add_request_options(app, request_options);
    app.add_option("--screenshot", view.screenshot, "Draw the window offscreen with these inputs, save it as PNG and exit")
        ->check(samplescope::non_empty_value());
    app.add_option("--tab", view.tab,
                   "View shown first: pipeline, tokens, logits, compare-pipelines, compare-stages-a or "
                   "compare-stages-b (Compare pipelines with one side's stage plots), histogram, batch (CPU vs batch "
                   "engine), verify (Verify a sampler), responses (Response), generate (a language model writing "
                   "text; the default when its model is installed and no input flags are given), speculative "
                   "(speculative decoding, round by round) or beam (beam search beside a sampled text)")
        ->check(CLI::IsMember({"pipeline", "tokens", "logits", "compare-pipelines", "compare-stages-a",
                               "compare-stages-b", "histogram", "batch", "verify", "responses", "generate",
                               "speculative", "beam"}));
    app.add_option("--response", view.response_file,
                   "A server's response with logprobs to open in the Response tab (as File > Open response...)");
    app.add_option("--response-request", view.response_request, "The request body of --response (JSON)");
    app.add_option("--response-token", view.response_token_text, "The token of --response to show first (default 0)")
        ->check(samplescope::non_empty_value());
    app.add_option("--prompt", view.prompt,
                   "Open the Generate tab on this prompt (or the tab --tab speculative or beam names; the n-gram "
                   "model's words; parameter flags apply to it)")
        ->check(samplescope::non_empty_value());
    app.add_option("--steps", view.steps_text,
                   "With --prompt or --tab generate: tokens to write at start, 0 to 1000; with --tab speculative: "
                   "rounds to run, 0 to 1000 (default 7); with --tab beam: the step limit, 1 to 100 (default 10)")
        ->check(samplescope::non_empty_value());
    std::vector<std::string> example_keys;
    for (const auto& example : samplescope::pipeline_examples()) example_keys.push_back(example.key);
    std::vector<std::string> sampler_keys;
    for (const auto& example : samplescope::ui::samplerExamples()) sampler_keys.push_back(example.key);
    app.add_option("--sampler-example", view.sampler_example,
                   "Open a 'llama.cpp samplers' example (its row, parameters and two pipelines) in Compare pipelines, "
                   "on the stage plots of the side that runs the sampler")
        ->check(CLI::IsMember(sampler_keys));
    app.add_option("--pipeline-example", view.pipeline_example,
                   "Open a 'Where engines differ' example (its row, parameters and the two pipelines) in Compare pipelines")
        ->check(CLI::IsMember(example_keys));
    app.add_option("--histogram-draws", view.histogram_draws_text,
                   "Run the empirical histogram with N draws (1 to 1,000,000) and show it")
        ->check(samplescope::non_empty_value());
    app.add_option("--top-n", view.top_n_text, "Bars per stage plot, 2 to 2000 (the rest are summed into one bar)")
        ->check(samplescope::non_empty_value());
    app.add_flag("--log-scale", view.log_scale, "Probability axes on a log scale");
    app.add_flag("--open-samplers", view.open_samplers,
                 "Show the parameter panel's llama.cpp samplers group open (it starts collapsed)");
    app.add_option("--window-size", view.window_size_text,
                   "The screenshot's size as WxH, e.g. 1280x720 (each 320 to 16384; default 1600x1000)")
        ->check(samplescope::non_empty_value());
    app.add_option("--font-scale", view.font_scale_text,
                   "Every font and plot label this many times its normal size, 0.75 to 2.5 (View > Presentation "
                   "font size is 1.4), for a projector")
        ->check(samplescope::non_empty_value());
    app.add_option("--select", view.select_text, "Token id to highlight in every plot and the table")
        ->check(samplescope::non_empty_value());
    // What a file manager passes (the .desktop entry's `Exec=samplescope %f`):
    // opened in the window, where a refusal shows in the banner.
    std::string open_file;
    app.add_option("file", open_file, "A logits file to open in the window, as File > Open logits does")
        ->excludes("--logits")
        ->excludes("--values");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& help) {
        return app.exit(help);
    } catch (const CLI::ParseError& error) {
        std::cerr << "samplescope: " << samplescope::escape_text(error.what()) << "\n";
        return 2;
    }

    // The vocabulary is the window's (it labels every row until cleared), so it
    // is loaded here rather than folded into the row's labels; a bad file still fails fast.
    const std::string vocab_file = request_options.vocab_file;
    request_options.vocab_file.clear();
    std::optional<StartRequest> start;
    std::optional<GenerateStart> generate_start;
    std::optional<samplescope::Vocabulary> vocabulary;
    std::optional<std::uint64_t> given_memory_budget;
    try {
        using samplescope::parse_int_in_range;
        if (!view.top_n_text.empty()) view.top_n = static_cast<int>(parse_int_in_range(view.top_n_text, "top-n", "--top-n", 2, 2000));
        if (!view.histogram_draws_text.empty()) {
            view.histogram_draws =
                static_cast<int>(parse_int_in_range(view.histogram_draws_text, "histogram-draws", "--histogram-draws", 1, 1000000));
        }
        if (!view.window_size_text.empty()) {
            const std::string& text = view.window_size_text;
            const auto x = text.find_first_of("xX");
            if (x == std::string::npos) {
                throw samplescope::InputError("window-size", "--window-size must be WxH, e.g. 1280x720, got \"" +
                                                                 samplescope::escape_text(text) + "\"");
            }
            view.width = static_cast<int>(parse_int_in_range(text.substr(0, x), "window-size", "--window-size width", 320, 16384));
            view.height = static_cast<int>(parse_int_in_range(text.substr(x + 1), "window-size", "--window-size height", 320, 16384));
        }
        if (!view.font_scale_text.empty()) {
            const auto factor = samplescope::parse_real(view.font_scale_text);
            if (!factor || !(*factor >= samplescope::ui::kMinFontScale && *factor <= samplescope::ui::kMaxFontScale)) {
                throw samplescope::InputError("font-scale", "--font-scale must be a number in [" +
                                                                samplescope::format_number(samplescope::ui::kMinFontScale) + ", " +
                                                                samplescope::format_number(samplescope::ui::kMaxFontScale) + "], got \"" +
                                                                samplescope::escape_text(view.font_scale_text) + "\"");
            }
            view.font_scale = *factor;
        }
        if (!view.response_token_text.empty()) {
            parse_int_in_range(view.response_token_text, "response-token", "--response-token", 0,
                               std::numeric_limits<std::int32_t>::max());
        }
        if (!view.select_text.empty()) {
            view.select = parse_int_in_range(view.select_text, "select", "--select", 0, std::numeric_limits<std::int32_t>::max());
        }
        // Read here even when nothing else needs it yet, so a bad value is refused rather than ignored.
        std::string_view budget_text = request_options.max_memory;
        while (!budget_text.empty() && std::isspace(static_cast<unsigned char>(budget_text.front()))) budget_text.remove_prefix(1);
        while (!budget_text.empty() && std::isspace(static_cast<unsigned char>(budget_text.back()))) budget_text.remove_suffix(1);
        const std::uint64_t memory_budget = samplescope::parse_memory_budget(budget_text);
        if (!request_options.max_memory.empty()) given_memory_budget = memory_budget;
        if (has_file_flags(request_options) && request_options.logits_file.empty()) {
            throw samplescope::InputError("logits", "--row, --tensor and --u2-as-bf16 read a logits file: give --logits FILE "
                                                    "with them");
        }
        if (!view.pipeline_example.empty() && (has_logits_input(request_options) || has_request_flags(request_options))) {
            throw samplescope::InputError("pipeline-example", "--pipeline-example brings its own row and parameters; "
                                                              "give no logits or parameter flags with it");
        }
        if (!view.sampler_example.empty() &&
            (!view.pipeline_example.empty() || has_logits_input(request_options) || has_request_flags(request_options))) {
            throw samplescope::InputError("sampler-example", "--sampler-example brings its own row, parameters and "
                                                             "pipelines; give no logits, parameter flags or "
                                                             "--pipeline-example with it");
        }
        const bool multistep = view.tab == "speculative" || view.tab == "beam";
        const bool generate_flags = !view.prompt.empty() || !view.steps_text.empty() || view.tab == "generate" || multistep;
        if (generate_flags) {
            if (has_logits_input(request_options) || !open_file.empty() || !view.pipeline_example.empty() ||
                !view.sampler_example.empty() || !request_options.prompt_ids.empty() ||
                !request_options.output_ids.empty() || !request_options.skip_draws.empty() || !vocab_file.empty()) {
                throw samplescope::InputError("prompt", "--prompt, --steps and --tab generate, speculative or beam "
                                                        "write text with the language model; give no logits, history, "
                                                        "vocabulary or example flags with them");
            }
            if (!view.steps_text.empty()) {
                if (view.prompt.empty() && view.tab != "generate" && !multistep) {
                    throw samplescope::InputError("steps", "--steps writes tokens in the Generate tab: give --prompt or --tab generate with it");
                }
                const int low = view.tab == "beam" ? 1 : 0;
                const int high = view.tab == "beam" ? samplescope::ui::BeamView::kMaxSteps : 1000;
                view.steps = static_cast<int>(parse_int_in_range(view.steps_text, "steps", "--steps", low, high));
            }
        }
        // The Generate tab opens on a text when asked (--prompt always needs the model), and by
        // default when nothing else is asked for and the model is installed.
        const bool plain_start = !generate_flags && !has_logits_input(request_options) &&
                                 !has_request_flags(request_options) && open_file.empty() && vocab_file.empty() &&
                                 view.pipeline_example.empty() && view.sampler_example.empty() && view.tab.empty() &&
                                 view.select_text.empty() && view.histogram_draws == 0;
        if ((generate_flags && (!view.prompt.empty() || samplescope::default_ngram_model_installed())) ||
            (plain_start && samplescope::default_ngram_model_installed())) {
            GenerateStart text;
            text.tab = multistep ? view.tab : "generate";
            const QString default_prompt = view.tab == "speculative" ? samplescope::ui::SpeculativeView::defaultPrompt()
                                           : view.tab == "beam"      ? samplescope::ui::BeamView::defaultPrompt()
                                                                     : samplescope::ui::GenerateView::defaultPrompt();
            text.prompt = view.prompt.empty() ? default_prompt : QString::fromStdString(view.prompt);
            text.steps = generate_flags ? view.steps : kDefaultStartSteps;
            // The Speculative tab opens on a few rounds; the Beam tab keeps its own step limit unless given.
            if (view.tab == "speculative" && view.steps_text.empty()) text.steps = 7;
            if (generate_flags) {
                const std::uint64_t budget = samplescope::parse_memory_budget(request_options.max_memory);
                text.model = samplescope::ui::loadModel({}, budget);
                if (!text.model.model) throw samplescope::InputError("model", text.model.error.toStdString());
                (void)text.model.model->tokenize(text.prompt.toStdString());  // a bad prompt fails here, in one line
                if (has_request_flags(request_options)) {
                    samplescope::ResolvedRequest resolved;
                    samplescope::resolve_param_flags(request_options, text.model.model->vocab_size(), resolved);
                    if (!resolved.params.seed) resolved.params.seed = samplescope::choose_seed();
                    text.params = resolved.params;
                }
            }
            generate_start = std::move(text);
        } else {
            start = resolve_start(request_options, samplescope::ui::realisticExample());
        }
        if (!vocab_file.empty()) vocabulary = samplescope::load_vocabulary(vocab_file);
    } catch (const samplescope::InputError& error) {
        std::cerr << "samplescope: " << error.what() << "\n";
        return 2;
    } catch (const std::bad_alloc&) {
        std::cerr << "samplescope: out of memory (try a smaller input or a lower --max-memory)\n";
        return 2;
    }

    // A screenshot needs no display: render offscreen unless a platform was chosen.
    if (!view.screenshot.empty() && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    int qt_argc = 1;
    QApplication application(qt_argc, argv);
    QApplication::setOrganizationName(QStringLiteral("SampleScope"));
    QApplication::setApplicationName(QStringLiteral("samplescope"));
    QGuiApplication::setDesktopFileName(QStringLiteral(SAMPLESCOPE_APP_ID));

    const bool screenshot = !view.screenshot.empty();
    // Before the window is built, so every widget and plot starts at its size.
    if (view.font_scale != 1.0) samplescope::ui::setFontScale(view.font_scale);
    samplescope::ui::MainWindow window(samplescope::ui::MainWindowOptions{!screenshot});
    try {
        // Files opened from the window keep to the same budget as the one given on the command line.
        if (start) window.setMemoryLimit(start->resolved.memory_budget);
        else if (given_memory_budget) window.setMemoryLimit(*given_memory_budget);
        if (start) apply_start(window, *start);
        if (!open_file.empty()) window.openLogitsFile(QString::fromStdString(open_file));
        if (!view.pipeline_example.empty()) window.loadPipelineExample(*find_pipeline_example(view.pipeline_example));
        if (!view.sampler_example.empty()) {
            for (const auto& example : samplescope::ui::samplerExamples()) {
                if (example.key == view.sampler_example) window.loadSamplerExample(example);
            }
        }
        if (!view.response_file.empty()) {
            // A refusal shows in the banner (and fails a screenshot below, as a bad file does).
            auto* responses = window.responseView();
            if (!view.response_request.empty()) responses->openRequestFile(QString::fromStdString(view.response_request));
            if (responses->openResponseFile(QString::fromStdString(view.response_file)) && !view.response_token_text.empty()) {
                responses->selectPosition(std::stoi(view.response_token_text));
            }
        }
        if (vocabulary) {
            window.setVocabulary(std::move(*vocabulary));
            for (const auto& warning : window.session().labelWarnings()) std::cerr << "samplescope: warning: " << warning << "\n";
        }
        if (generate_start && generate_start->tab != "generate") {
            // The step limit first: the tab searches again when it changes, which it cannot before its model.
            if (generate_start->tab == "beam" && generate_start->steps > 0) window.beamView()->stepsBox()->setValue(generate_start->steps);
            if (generate_start->model.model) window.multistepModel()->setModel(std::move(generate_start->model));
            if (generate_start->params) window.session().setParams(*generate_start->params);
            if (generate_start->tab == "speculative") {
                window.speculativeView()->start(generate_start->prompt, generate_start->steps);
            } else {
                window.beamView()->start(generate_start->prompt);
            }
        } else if (generate_start) {
            auto* generate = window.generateView();
            if (generate_start->model.model) generate->setModel(std::move(generate_start->model));
            if (generate_start->params) window.session().setParams(*generate_start->params);
            generate->start(generate_start->prompt, generate_start->steps);
            window.showView(generate);
            // The model loads and the text is written off the GUI thread: undo stops at the text once it is there.
            if (!generate->idle()) {
                auto connection = std::make_shared<QMetaObject::Connection>();
                *connection = QObject::connect(generate, &samplescope::ui::GenerateView::idleChanged, &window, [&window, connection] {
                    if (!window.generateView()->idle()) return;
                    window.undo().clear();
                    QObject::disconnect(*connection);
                });
            }
        }
        window.undo().clear();  // undo stops at the input the flags opened the window on
        if (view.top_n > 0) window.pipelineView()->topNBox()->setValue(view.top_n);
        if (view.log_scale) window.pipelineView()->logScaleBox()->setChecked(true);
        if (view.open_samplers) window.parameterPanel()->setExtrasExpanded(true);
        if (!view.tab.empty() || (view.pipeline_example.empty() && view.sampler_example.empty() && !generate_start)) {
            window.showView(tab_widget(window, view.tab));
        }
        // --select names an id of the row the window opened on, known only now.
        if (view.select >= 0 && static_cast<std::uint64_t>(view.select) >= window.session().vocabSize()) {
            throw samplescope::InputError("select", "--select " + std::to_string(view.select) + " is outside [0, " +
                                                        std::to_string(window.session().vocabSize()) + ") for V = " +
                                                        std::to_string(window.session().vocabSize()));
        }
        if (screenshot) {
            window.resize(view.width, view.height);
            window.show();
            if (window.width() != view.width || window.height() != view.height) {
                std::cerr << "samplescope: warning: the window needs at least " << window.width() << "x"
                          << window.height() << "; drawn at that size, not " << view.width << "x" << view.height
                          << "\n";
            }
            if (!window.waitUntilDrawn()) throw samplescope::InputError("screenshot", "the window was not drawn in time");
            if (view.histogram_draws > 0) {
                run_histogram(window, view.histogram_draws);
                if (!view.tab.empty()) window.showView(tab_widget(window, view.tab));
            }
            if (view.select >= 0) window.selectToken(static_cast<std::int32_t>(view.select));
            // What the engine refused while drawing (a temperature the CLI
            // refuses too) is refused here as there: exit 2, one line, no PNG.
            if (!window.lastFailure().isEmpty()) {
                std::cerr << "samplescope: " << samplescope::escape_text(window.lastFailure().toStdString()) << "\n";
                return 2;
            }
            if (!window.errorBanner()->isHidden() && !window.errorBanner()->isWarning()) {
                std::cerr << "samplescope: " << samplescope::escape_text(window.errorBanner()->message().toStdString())
                          << "\n";
                return 2;
            }
            window.saveScreenshot(QString::fromStdString(view.screenshot));
            return 0;
        }
    } catch (const samplescope::InputError& error) {
        std::cerr << "samplescope: " << error.what() << "\n";
        return 2;
    } catch (const std::bad_alloc&) {
        std::cerr << "samplescope: out of memory (try a smaller input or a lower --max-memory)\n";
        return 2;
    }
    if (view.select >= 0) window.selectToken(static_cast<std::int32_t>(view.select));
    window.show();
    if (view.histogram_draws > 0) {
        window.showView(window.histogramView());
        window.histogramView()->setDraws(view.histogram_draws);
        window.histogramView()->start();
    }
    return QApplication::exec();
}
