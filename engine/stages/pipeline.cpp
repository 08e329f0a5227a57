#include "engine/stages/pipeline.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/base/input_error.h"
#include "engine/stages/stage_unit.h"

namespace samplescope {

std::vector<Rule> rules_for_stage(Stage stage) {
    std::vector<Rule> rules;
    for (const auto& info : stage_info(stage).rules) rules.push_back(info.rule);
    return rules;
}

std::optional<Rule> rule_from_name(Stage stage, std::string_view name) {
    for (const auto& info : stage_info(stage).rules) {
        if (info.name == name) return info.rule;
    }
    return std::nullopt;
}

const StageUnit& stage_unit(Stage stage) {
    const StageUnit* unit = stage_info(stage).unit;
    if (!unit) throw std::logic_error("no stage unit for stage " + std::string(stage_info(stage).name));
    return *unit;
}

std::string off_because(const std::string& settings, std::string_view off_at, bool truncates) {
    return "Off: " + settings + " (" + std::string(off_at) + ").\n" +
           (truncates ? "Every candidate passes." : "The distribution passes through unchanged.");
}

bool mirostat_chain(const Pipeline& pipeline, const SamplingParams& params) {
    return pipeline.mirostat_replaces_chain && uses_mirostat(params);
}

bool in_mirostat_chain(Stage stage) {
    return stage == Stage::LogitBias || stage == Stage::Temperature || stage == Stage::Mirostat;
}

bool is_step_stage(Stage stage) { return stage_info(stage).unit != nullptr; }

const PipelineStep* Pipeline::find_step(Stage stage) const {
    const auto it = std::find_if(steps.begin(), steps.end(), [stage](const PipelineStep& s) { return s.stage == stage; });
    return it == steps.end() ? nullptr : &*it;
}

void check_pipeline(const Pipeline& pipeline) {
    std::vector<Stage> seen;
    bool truncation_before = false;
    for (const auto& step : pipeline.steps) {
        const auto stage_name = std::string(stage_info(step.stage).name);
        if (!is_step_stage(step.stage)) {
            throw InputError("stages", "\"" + stage_name + "\" is not a step a pipeline can order");
        }
        if (std::find(seen.begin(), seen.end(), step.stage) != seen.end()) {
            throw InputError("stages", "stage \"" + stage_name + "\" appears twice in pipeline " + pipeline.name);
        }
        seen.push_back(step.stage);
        if (rule_info(step.rule).stage != step.stage) {
            throw InputError("stages", "rule \"" + std::string(rule_info(step.rule).name) + "\" is not a rule of " +
                                           stage_name);
        }
        const bool truncates = stage_info(step.stage).truncates;
        if (step.joint && step.enabled && (!truncates || !truncation_before)) {
            throw InputError("stages", "\"" + stage_name +
                                           ":joint\" must follow an enabled truncation step (top_k, top_p, min_p)");
        }
        if (step.enabled && truncates) truncation_before = true;
        if (step.enabled && !truncates) truncation_before = false;
    }
    if (pipeline.penalty_last_n < 0) {
        throw InputError("penalty_last_n",
                         "penalty_last_n must be an integer >= 0, got " + std::to_string(pipeline.penalty_last_n));
    }
}

bool PipelineTrace::any_tie() const {
    return std::any_of(reports.begin(), reports.end(), [](const StepReport& r) { return r.tie_at_boundary; });
}

bool PipelineTrace::any_near_boundary() const {
    return std::any_of(reports.begin(), reports.end(), [](const StepReport& r) { return r.near_boundary; });
}

}  // namespace samplescope
