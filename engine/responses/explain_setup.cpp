#include "engine/responses/explain_setup.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "engine/base/input_error.h"

namespace samplescope {

const char* default_pipeline(ResponseFormat format) {
    switch (format) {
        case ResponseFormat::LlamaCpp:
        case ResponseFormat::LlamaCppLegacy: return "llamacpp";
        case ResponseFormat::HfRows: return "hf";
        // vLLM's server is the OpenAI-compatible one that also takes top_k and min_p.
        case ResponseFormat::OpenAiChat:
        case ResponseFormat::OpenAiCompletion:
        case ResponseFormat::VllmOffline: return "vllm";
    }
    return "spec";
}

namespace {

// llama.cpp's `samplers`: a sampler left out is not applied, and the ones
// given run in the order given (tools/server/README.md `samplers`).
void apply_samplers(const std::vector<std::string>& samplers, ExplainSettings& settings, std::vector<std::string>& notes) {
    if (settings.pipeline.name != "llamacpp") {
        notes.push_back("the request names llama.cpp samplers; the " + settings.pipeline.name + " pipeline has its own order");
        return;
    }
    std::vector<std::string> preset_order;
    for (auto& step : settings.pipeline.steps) {
        const std::string name(stage_info(step.stage).name);
        const bool chain = step.stage == Stage::TopK || step.stage == Stage::TypicalP || step.stage == Stage::TopP ||
                           step.stage == Stage::MinP || step.stage == Stage::Xtc || step.stage == Stage::Dry ||
                           step.stage == Stage::TopNSigma || step.stage == Stage::Temperature;
        if (!chain) continue;
        if (std::find(samplers.begin(), samplers.end(), name) == samplers.end()) {
            step.enabled = false;
            const SamplingParams& p = settings.params;
            const bool on = step.stage == Stage::TopK ? uses_top_k(p, settings.vocab_size.value_or(INT64_MAX))
                            : step.stage == Stage::TypicalP ? uses_typical_p(p)
                            : step.stage == Stage::TopP ? uses_top_p(p)
                            : step.stage == Stage::MinP ? uses_min_p(p)
                            : step.stage == Stage::Xtc ? uses_xtc(p)
                            : step.stage == Stage::Dry ? uses_dry(p)
                            : step.stage == Stage::TopNSigma ? uses_top_n_sigma(p) : p.temperature != 1.0;
            if (on) notes.push_back("samplers leaves out " + name + ": llama.cpp does not apply it");
        } else {
            preset_order.push_back(name);
        }
    }
    std::vector<std::string> given;
    for (const auto& name : samplers) {
        if (std::find(given.begin(), given.end(), name) == given.end()) given.push_back(name);
    }
    if (given != preset_order) {
        settings.unmodelled.push_back("samplers runs them in an order of its own; the llamacpp preset follows "
                                      "dry, top_n_sigma, top_k, typical_p, top_p, min_p, xtc, temperature");
    }
}

}  // namespace

ExplainSetup resolve_explain(const Response& response, const ExplainRequest& request) {
    ExplainSetup out;
    ExplainSettings& settings = out.settings;
    const std::string name = request.pipeline.empty() ? default_pipeline(response.format) : request.pipeline;
    settings.pipeline = make_pipeline(name, request.stages);
    out.pipeline_source = request.pipeline.empty()
                              ? std::string("the default for ") + response_format_name(response.format) +
                                    " responses (--pipeline names another)"
                              : "--pipeline";

    // The mode: named by the caller, by the file, by the request it records, else the pipeline's default.
    const std::optional<std::string>& recorded =
        response.settings ? response.settings->logprobs_mode : std::optional<std::string>();
    std::string mode = request.logprobs_mode;
    if (!mode.empty()) {
        out.mode_source = "--logprobs-mode";
        if (!response.mode.empty() && response.mode != mode) {
            throw InputError("logprobs_mode", "--logprobs-mode " + mode + " contradicts " + response.source +
                                                  ": by " + response.mode_source + " its numbers are " + response.mode);
        }
    } else if (!response.mode.empty()) {
        mode = response.mode;
        out.mode_source = "the response: " + response.mode_source;
    } else if (recorded) {
        mode = *recorded;
        out.mode_source = "the recorded request's logprobs_mode";
    } else {
        for (const LogprobModeInfo* info : logprob_modes(settings.pipeline.name)) {
            if (info->is_default) mode = std::string(info->mode);
        }
        if (mode.empty()) {
            throw InputError("logprobs_mode", "pipeline " + settings.pipeline.name +
                                                  " has no logprobs modes of its own and the response names none: "
                                                  "give --logprobs-mode");
        }
        out.mode_source = "the default of " + settings.pipeline.name + " (the response does not say; --logprobs-mode "
                                                                         "names another)";
    }
    settings.mode = find_logprob_mode(mode);
    if (!settings.mode) throw InputError("logprobs_mode", "unknown logprobs mode \"" + mode + "\"");
    if (!response.normalised && !response.rows && settings.mode->kind != LogprobKind::Logit) {
        throw InputError("logprobs_mode", "the response's numbers were read as logits; " + mode + " is not a logit mode");
    }
    const auto modes = logprob_modes(settings.pipeline.name);
    if (!modes.empty() && std::none_of(modes.begin(), modes.end(), [&](const LogprobModeInfo* m) { return m == settings.mode; })) {
        out.notes.push_back("the numbers are " + std::string(settings.mode->engine) + "'s " + mode +
                            "; the verdicts follow the " + settings.pipeline.name + " pipeline");
    }
    if (response.settings && response.settings->post_sampling_probs &&
        *response.settings->post_sampling_probs != (settings.mode->point == LogprobPoint::Final) &&
        settings.mode->engine == "llamacpp") {
        out.notes.push_back("the request's post_sampling_probs does not match the numbers' form in the response");
    }

    // Parameters: the pipeline's defaults, then the response's own record, the request, and flags.
    std::map<Param, std::string> sources;
    settings.params = settings.pipeline.name == kCustomPipelineName ? SamplingParams{}
                                                                    : engine_defaults(settings.pipeline.name).params;
    for (const auto& info : kParams) {
        if (param_value(settings.params, info.param) != info.default_value) {
            sources[info.param] = settings.pipeline.name + "'s default";
        }
    }
    std::optional<std::vector<std::string>> samplers;
    const auto apply = [&](const RequestSettings& given) {
        if (given.samplers) samplers = given.samplers;
        for (const auto& [param, value] : given.values) {
            set_param(settings.params, param, value);
            sources[param] = given.source;
        }
        if (given.seed) settings.params.seed = given.seed;
        if (given.penalty_last_n) settings.pipeline.penalty_last_n = *given.penalty_last_n < 0 ? 0 : *given.penalty_last_n;
        settings.unmodelled.insert(settings.unmodelled.end(), given.unmodelled.begin(), given.unmodelled.end());
    };
    if (response.settings) apply(*response.settings);
    if (request.request) apply(*request.request);
    for (const auto& [param, value] : request.flags) {
        set_param(settings.params, param, value);
        sources[param] = "a flag";
    }
    for (const auto& info : kParams) {
        if (const auto it = sources.find(info.param); it != sources.end()) {
            out.param_sources.emplace_back(std::string(info.key), it->second);
        }
    }
    if (!response.settings && !request.request && request.flags.empty()) {
        out.notes.push_back("no request given: the parameters are " + settings.pipeline.name +
                            "'s defaults (--request FILE or flags give the request's)");
    }
    settings.vocab_size = request.vocab_size ? request.vocab_size : response.vocab_size();
    if (samplers) apply_samplers(*samplers, settings, out.notes);
    for (const auto& line : settings.unmodelled) out.notes.push_back(line);
    settings.vocab_size = request.vocab_size ? request.vocab_size : response.vocab_size();
    settings.prompt_ids = response.prompt_ids;
    for (const auto& note : response.notes) out.notes.push_back(note);
    return out;
}

}  // namespace samplescope
