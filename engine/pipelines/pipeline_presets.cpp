// The presets, each step with the rule its stack follows. The sources of every
// rule are in its stage's descriptor (engine/stages/stage_*.cpp); the order of
// each stack's steps was read in:
//   vllm:     vllm-project/vllm vllm/v1/sample/sampler.py Sampler.forward, Sampler.sample
//             (penalties -> greedy -> temperature -> min-p -> top-k/top-p)
//   sglang:   sgl-project/sglang python/sglang/srt/sampling/sampling_batch_info.py
//             SamplingBatchInfo.apply_logits_bias (additive penalties, then multiplicative);
//             python/sglang/srt/layers/sampler.py Sampler.forward and
//             top_k_top_p_min_p_sampling_from_probs_torch (one cumsum for all three filters)
//   hf:       huggingface/transformers src/transformers/generation/utils.py
//             GenerationMixin._get_logits_processor (repetition ... temperature, top-k, top-p, min-p)
//   llamacpp: ggml-org/llama.cpp common/sampling.cpp common_sampler_init and common/common.h
//             common_params_sampling::samplers (logit bias first, then penalties, dry, top_n_sigma, top_k,
//             typ_p, top_p, min_p, xtc, temperature (temp_ext); dist; with mirostat 1 or 2: logit bias, temp,
//             mirostat)
//   vllm-cuda: vllm-project/vllm vllm/v1/sample/ops/topk_topp_sampler.py TopKTopPSampler.forward_cuda
//             and flashinfer_sample (top_k_top_p_sampling_from_logits, "top_k_first": mask the logits to
//             the top k, softmax, top-p by FlashInfer's pivot; top_p_ / top_k_sampling_from_probs alone)
//   sglang-flashinfer: sgl-project/sglang python/sglang/srt/layers/sampler.py Sampler.forward
//             (backend "flashinfer": top_k_top_p_sampling_from_probs(filter_apply_order="joint"), or with
//             need_min_p_sampling top_k_renorm_prob, top_p_renorm_prob, min_p_sampling_from_probs)
//   flashinfer-*: flashinfer-ai/flashinfer flashinfer/sampling.py
//             top_k_top_p_sampling_from_probs (filter_apply_order "joint" / "top_k_first")
#include "engine/pipelines/pipeline_presets.h"

#include <algorithm>
#include <cmath>

#include "engine/base/input_error.h"
#include "engine/core/element_math.h"
#include "engine/core/row_math.h"

namespace samplescope {

namespace {

PipelineStep step(Stage stage, Rule rule, bool joint = false) { return PipelineStep{stage, rule, true, joint}; }

std::string known_names() {
    std::string names;
    for (const auto& preset : kPresets) names += std::string(preset.name) + ", ";
    return names + std::string(kCustomPipelineName);
}

std::string trim(std::string_view text) {
    std::size_t begin = 0;
    std::size_t end = text.size();
    while (begin < end && (text[begin] == ' ' || text[begin] == '\t')) ++begin;
    while (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
    return std::string(text.substr(begin, end - begin));
}

std::vector<std::string> split(std::string_view text, char separator) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (true) {
        const auto at = text.find(separator, start);
        parts.push_back(trim(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start)));
        if (at == std::string_view::npos) break;
        start = at + 1;
    }
    return parts;
}

std::string rule_names(Stage stage) {
    std::string names;
    for (const auto rule : rules_for_stage(stage)) {
        if (!names.empty()) names += ", ";
        names += rule_info(rule).name;
    }
    return names;
}

}  // namespace

const PresetInfo& preset_info(std::string_view name) {
    for (const auto& preset : kPresets) {
        if (preset.name == name) return preset;
    }
    throw InputError("pipeline", "unknown pipeline \"" + std::string(name) + "\"; known: " + known_names());
}

Pipeline preset_pipeline(std::string_view name) {
    const auto& info = preset_info(name);
    Pipeline pipeline;
    pipeline.name = std::string(info.name);
    pipeline.title = std::string(info.title);
    using S = Stage;
    using R = Rule;
    if (name == "spec") {
        pipeline.reference = true;
        pipeline.steps = {step(S::RepetitionPenalty, R::RepetitionContext),
                          step(S::PresenceFrequency, R::PresenceFrequencyOutput),
                          step(S::Greedy, R::GreedyContract),
                          step(S::Temperature, R::TemperatureDivide),
                          step(S::TopK, R::TopKContract),
                          step(S::TopP, R::TopPContract),
                          step(S::MinP, R::MinPProb)};
    } else if (name == "vllm") {
        pipeline.steps = {step(S::RepetitionPenalty, R::RepetitionContext),
                          step(S::PresenceFrequency, R::PresenceFrequencyOutput),
                          step(S::Greedy, R::GreedyVllm),
                          step(S::Temperature, R::TemperatureVllm),
                          step(S::MinP, R::MinPProb),
                          step(S::TopK, R::TopKKeepTies),
                          step(S::TopP, R::TopPAscendingCumsum)};
    } else if (name == "vllm-cuda") {
        pipeline.steps = {step(S::RepetitionPenalty, R::RepetitionContext),
                          step(S::PresenceFrequency, R::PresenceFrequencyOutput),
                          step(S::Greedy, R::GreedyVllm),
                          step(S::Temperature, R::TemperatureVllm),
                          step(S::MinP, R::MinPProb),
                          step(S::TopK, R::TopKFlashInfer),
                          step(S::TopP, R::TopPMassAboveByValue)};
    } else if (name == "sglang-flashinfer") {
        pipeline.steps = {step(S::PresenceFrequency, R::PresenceFrequencyOutput),
                          step(S::RepetitionPenalty, R::RepetitionOutputOnly),
                          step(S::Greedy, R::GreedySglang),
                          step(S::Temperature, R::TemperatureDivide),
                          step(S::TopK, R::TopKFlashInfer),
                          step(S::TopP, R::TopPMassAboveByValue, true),
                          step(S::MinP, R::MinPProb)};
        pipeline.joint_only_without_min_p = true;
    } else if (name == "sglang") {
        // Additive penalties first, then the multiplicative one (the accumulated
        // path; the other path follows a Python set's order, which is unspecified).
        pipeline.steps = {step(S::PresenceFrequency, R::PresenceFrequencyOutput),
                          step(S::RepetitionPenalty, R::RepetitionOutputOnly),
                          step(S::Greedy, R::GreedySglang),
                          step(S::Temperature, R::TemperatureDivide),
                          step(S::TopK, R::TopKExactUnstable),
                          step(S::TopP, R::TopPExclusivePrefix, true),
                          step(S::MinP, R::MinPProb, true)};
    } else if (name == "hf") {
        // generate() has no presence or frequency penalty.
        pipeline.steps = {step(S::RepetitionPenalty, R::RepetitionContext),
                          step(S::Greedy, R::GreedyHf),
                          step(S::Temperature, R::TemperatureDivide),
                          step(S::TopK, R::TopKKeepTies),
                          step(S::TopP, R::TopPAscendingCumsum),
                          step(S::MinP, R::MinPProb)};
    } else if (name == "llamacpp") {
        // Temperature last: the truncations see the T = 1 distribution; T <= 0
        // is handled by the temperature sampler itself, so there is no greedy step.
        pipeline.penalty_last_n = 64;
        // With mirostat on, common_sampler_init builds logit bias, temp and
        // mirostat instead of the list: the runner skips the other steps.
        pipeline.mirostat_replaces_chain = true;
        pipeline.steps = {step(S::LogitBias, R::LogitBiasAdd),
                          step(S::RepetitionPenalty, R::RepetitionLastN),
                          step(S::PresenceFrequency, R::PresenceFrequencyLastN),
                          step(S::Dry, R::DryLlamaCpp),
                          step(S::TopNSigma, R::TopNSigmaLlamaCpp),
                          step(S::TopK, R::TopKExactUnstable),
                          step(S::TypicalP, R::TypicalPLlamaCpp),
                          step(S::TopP, R::TopPInclusiveCumsum),
                          step(S::MinP, R::MinPLog),
                          step(S::Xtc, R::XtcLlamaCpp),
                          step(S::Temperature, R::TemperatureLlamaCpp),
                          step(S::Mirostat, R::MirostatLlamaCpp)};
    } else if (name == "flashinfer-joint") {
        // FlashInfer has no penalties and no greedy mode: both are the caller's.
        // T = 0 is treated as the caller's argmax.
        pipeline.steps = {step(S::Greedy, R::GreedyContract),
                          step(S::Temperature, R::TemperatureDivide),
                          step(S::TopK, R::TopKFlashInfer),
                          step(S::TopP, R::TopPMassAboveByValue, true),
                          step(S::MinP, R::MinPProb)};
    } else {  // flashinfer-topk-first
        pipeline.steps = {step(S::Greedy, R::GreedyContract),
                          step(S::Temperature, R::TemperatureDivide),
                          step(S::TopK, R::TopKFlashInfer),
                          step(S::TopP, R::TopPMassAboveByValue),
                          step(S::MinP, R::MinPProb)};
    }
    return pipeline;
}

EngineDefaults engine_defaults(std::string_view name) {
    preset_info(name);  // refuses an unknown name
    EngineDefaults defaults;
    if (name == "hf") {
        // transformers GenerationConfig: top_k 50 (do_sample False by default).
        defaults.params.top_k = 50;
    } else if (name == "llamacpp") {
        // llama.cpp common/common.h common_params_sampling.
        defaults.params.temperature = 0.8;
        defaults.params.top_k = 40;
        defaults.params.top_p = 0.95;
        defaults.params.min_p = 0.05;
        defaults.penalty_last_n = 64;
        // The rest of llama.cpp's defaults are kParams' own (xtc_threshold 0.1,
        // dry_base 1.75, dry_allowed_length 2, dry_penalty_last_n -1,
        // mirostat_tau 5, mirostat_eta 0.1, dynatemp_exponent 1).
    }
    return defaults;
}

Pipeline custom_pipeline(std::string_view stage_list) {
    Pipeline pipeline;
    pipeline.name = std::string(kCustomPipelineName);
    pipeline.title = "Custom";
    if (trim(stage_list).empty()) {
        throw InputError("stages", "a custom pipeline needs --stages, e.g. \"penalties,top_k,top_p,min_p,temperature\"");
    }
    for (const auto& item : split(stage_list, ',')) {
        if (item.empty()) throw InputError("stages", "empty item in stage list \"" + std::string(stage_list) + "\"");
        const auto parts = split(item, ':');
        std::vector<Stage> stages;
        if (parts[0] == "penalties") {
            stages = {Stage::RepetitionPenalty, Stage::PresenceFrequency};
        } else if (const auto stage = stage_from_name(parts[0]); stage && is_step_stage(*stage)) {
            stages = {*stage};
        } else {
            std::string known = "penalties";
            for (const auto& info : kStages) {
                if (is_step_stage(info.stage)) known += ", " + std::string(info.name);
            }
            throw InputError("stages", "unknown stage \"" + parts[0] + "\"; known: " + known);
        }
        bool joint = false;
        std::optional<Rule> rule;
        for (std::size_t i = 1; i < parts.size(); ++i) {
            if (parts[i] == "joint") {
                joint = true;
                continue;
            }
            if (stages.size() != 1) throw InputError("stages", "\"penalties\" takes no rule; name the two stages");
            rule = rule_from_name(stages[0], parts[i]);
            if (!rule) {
                throw InputError("stages", "unknown rule \"" + parts[i] + "\" for " + parts[0] + "; known: " +
                                               rule_names(stages[0]));
            }
        }
        for (const auto stage : stages) {
            pipeline.steps.push_back(PipelineStep{stage, rule.value_or(rules_for_stage(stage).front()), true, joint});
        }
    }
    const bool temperature_handles_zero = [&] {
        const auto* t = pipeline.find_step(Stage::Temperature);
        return t && t->rule == Rule::TemperatureLlamaCpp;
    }();
    if (!pipeline.find_step(Stage::Greedy) && !temperature_handles_zero) {
        std::size_t at = 0;
        for (std::size_t i = 0; i < pipeline.steps.size(); ++i) {
            const auto s = pipeline.steps[i].stage;
            if (s == Stage::LogitBias || s == Stage::RepetitionPenalty || s == Stage::PresenceFrequency) at = i + 1;
        }
        pipeline.steps.insert(pipeline.steps.begin() + static_cast<std::ptrdiff_t>(at),
                              PipelineStep{Stage::Greedy, Rule::GreedyContract, true, false});
    }
    check_pipeline(pipeline);
    return pipeline;
}

std::string step_list(const Pipeline& pipeline) {
    std::string out;
    for (const auto& s : pipeline.steps) {
        if (!s.enabled) continue;
        if (!out.empty()) out += ",";
        out += std::string(stage_info(s.stage).name) + ":" + std::string(rule_info(s.rule).name);
        if (s.joint) out += ":joint";
    }
    return out;
}

std::vector<std::string> engine_refusals(std::string_view name, const SamplingParams& params) {
    std::vector<std::string> out;
    const auto check = [&out](bool refused, std::string_view engine, const std::string& message,
                              std::string_view source) {
        if (refused) out.push_back(std::string(engine) + " would refuse this request: " + message + " (" + std::string(source) + ")");
    };
    const auto range = [](std::string_view key, std::string_view interval, double value) {
        return std::string(key) + " must be in " + std::string(interval) + ", got " + format_number(value);
    };
    const bool vllm = name == "vllm" || name == "vllm-cuda";
    const bool sglang = name == "sglang" || name == "sglang-flashinfer";
    if (vllm || sglang) {
        const std::string_view engine = vllm ? "vLLM" : "SGLang";
        const std::string_view source = vllm ? "vllm/sampling_params.py SamplingParams._verify_args"
                                             : "python/sglang/srt/sampling/sampling_params.py SamplingParams.verify";
        check(!(params.presence_penalty >= -2.0 && params.presence_penalty <= 2.0), engine,
              range("presence_penalty", "[-2, 2]", params.presence_penalty), source);
        check(!(params.frequency_penalty >= -2.0 && params.frequency_penalty <= 2.0), engine,
              range("frequency_penalty", "[-2, 2]", params.frequency_penalty), source);
        check(params.top_p == 0.0, engine, range("top_p", "(0, 1]", params.top_p), source);
        if (sglang) {
            check(params.repetition_penalty > 2.0, engine,
                  range("repetition_penalty", "[0, 2]", params.repetition_penalty), source);
        }
    }
    return out;
}

namespace {

// log_softmax over the whole row at `token`.
double row_logprob(std::span<const double> logits, std::int32_t token) {
    const SoftmaxSums sums = row_softmax_sums(logits.data(), static_cast<std::int64_t>(logits.size()));
    return log_softmax_at(logits[static_cast<std::size_t>(token)], sums.max_logit, sums.partition);
}

// The logits a trace shows after its last active stage among `stages`, else the raw row.
std::span<const double> logits_after(const SampleTrace& trace, std::initializer_list<Stage> stages,
                                     std::span<const double> raw) {
    std::span<const double> out = raw;
    for (const auto& stage : trace.stages) {
        for (const auto s : stages) {
            if (stage.stage == s && stage.active && stage.logits) out = *stage.logits;
        }
    }
    return out;
}

double final_logprob(const SampleTrace& trace) {
    const IdList& kept = trace.final_kept();
    const auto at = std::lower_bound(kept.begin(), kept.end(), trace.token);
    if (at == kept.end() || *at != trace.token) return -HUGE_VAL;
    return std::log(trace.final_probs()[static_cast<std::size_t>(at - kept.begin())]);
}

}  // namespace

std::vector<const LogprobModeInfo*> logprob_modes(std::string_view name) {
    std::string_view engine;
    if (name == "vllm" || name == "vllm-cuda") engine = "vllm";
    if (name == "sglang" || name == "sglang-flashinfer") engine = "sglang";
    if (name == "hf") engine = "hf";
    if (name == "llamacpp") engine = "llamacpp";
    std::vector<const LogprobModeInfo*> out;
    for (const auto& info : kLogprobModes) {
        if (!engine.empty() && info.engine == engine) out.push_back(&info);
    }
    return out;
}

const LogprobModeInfo* find_logprob_mode(std::string_view mode) {
    for (const auto& info : kLogprobModes) {
        if (info.mode == mode) return &info;
    }
    return nullptr;
}

std::vector<EngineLogprob> engine_logprobs(std::string_view name, const SampleTrace& trace,
                                           std::span<const double> raw_logits) {
    const std::int32_t token = trace.token;
    const auto penalised = logits_after(trace, {Stage::RepetitionPenalty, Stage::PresenceFrequency}, raw_logits);
    const auto scaled =
        logits_after(trace, {Stage::RepetitionPenalty, Stage::PresenceFrequency, Stage::Temperature}, raw_logits);
    const double raw_logit = raw_logits[static_cast<std::size_t>(token)];
    const double final_q = final_logprob(trace);
    const double processed_logit = final_q == -HUGE_VAL ? -HUGE_VAL : scaled[static_cast<std::size_t>(token)];
    std::vector<EngineLogprob> out;
    for (const LogprobModeInfo* info : logprob_modes(name)) {
        double value = 0.0;
        switch (info->point) {
            case LogprobPoint::Raw:
                value = info->kind == LogprobKind::Logit ? raw_logit : row_logprob(raw_logits, token);
                break;
            case LogprobPoint::Penalised: value = row_logprob(penalised, token); break;
            case LogprobPoint::Scaled: value = row_logprob(scaled, token); break;
            case LogprobPoint::Final: value = info->kind == LogprobKind::Logit ? processed_logit : final_q; break;
        }
        out.push_back({std::string(info->mode), value, info->is_default, std::string(info->meaning)});
    }
    return out;
}

Pipeline make_pipeline(std::string_view name, std::string_view stage_list) {
    if (name == kCustomPipelineName) return custom_pipeline(stage_list);
    if (!stage_list.empty()) {
        throw InputError("stages", "--stages is for --pipeline custom; pipeline \"" + std::string(name) +
                                       "\" has its own steps");
    }
    return preset_pipeline(name);
}

}  // namespace samplescope
