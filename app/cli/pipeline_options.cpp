#include "app/cli/pipeline_options.h"

#include <limits>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"
#include "engine/pipelines/pipeline_presets.h"

namespace samplescope::cli {

void add_pipeline_options(CLI::App& app, PipelineOptions& options, const std::string& suffix) {
    std::string names;
    for (const auto& preset : kPresets) names += std::string(preset.name) + ", ";
    names += std::string(kCustomPipelineName);
    app.add_option("--pipeline" + suffix, options.name, "Pipeline: " + names + " (default spec, the contract)");
    app.add_option("--stages" + suffix, options.stages,
                   "Steps of a custom pipeline in order, e.g. \"penalties,top_k,top_p,min_p,temperature\"; each "
                   "item stage[:rule][:joint], e.g. \"top_p:exclusive_prefix:joint\"");
    app.add_option("--penalty-last-n" + suffix, options.penalty_last_n,
                   "Window of the last-N penalty rules (llama.cpp penalty_last_n; default 64, 0 = off)")
        ->check(non_empty_value());
}

Pipeline resolve_pipeline(const PipelineOptions& options) {
    const std::string name = options.name.empty() ? (options.stages.empty() ? "spec" : "custom") : options.name;
    Pipeline pipeline = make_pipeline(name, options.stages);
    if (!options.penalty_last_n.empty()) {
        pipeline.penalty_last_n = parse_int_in_range(options.penalty_last_n, "penalty_last_n", "--penalty-last-n", 0,
                                                     std::numeric_limits<std::int64_t>::max());
    }
    return pipeline;
}

void apply_engine_defaults(const RequestOptions& given, const Pipeline& pipeline, ResolvedRequest& request) {
    if (pipeline.name == kCustomPipelineName) {
        throw InputError("engine-defaults", "a custom pipeline has no engine defaults; pick a preset");
    }
    const EngineDefaults defaults = engine_defaults(pipeline.name);
    for (const auto& info : kParams) {
        const auto it = given.param_text.find(std::string(info.key));
        if (it != given.param_text.end() && !it->second.empty()) continue;
        set_param(request.params, info.param, param_value(defaults.params, info.param));
    }
}

}  // namespace samplescope::cli
