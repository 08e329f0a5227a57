#include "engine/json/pipeline_json.h"

#include <cmath>

namespace samplescope {

namespace {

nlohmann::ordered_json number_or_null(double value) {
    return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

// Not token_display_label: the JSON omits "label" beyond the labels and keeps "" (the CLI's recorded output format).
void add_label(nlohmann::ordered_json& row, std::int32_t id, const std::vector<std::string>& labels) {
    if (id >= 0 && static_cast<std::size_t>(id) < labels.size()) row["label"] = labels[static_cast<std::size_t>(id)];
}

// The float32 run, where it decided differently (EngineF32 in engine/stages/pipeline.h).
void add_engine_f32(nlohmann::ordered_json& out, const PipelineTrace& trace) {
    if (!trace.engine_f32) return;
    const EngineF32& f32 = *trace.engine_f32;
    nlohmann::ordered_json e;
    e["note"] = f32.note;
    if (!f32.error.empty()) {
        e["error"] = f32.error;
    } else {
        e["kept"] = f32.kept;
        e["probs"] = f32.probs;
        e["tie_at_boundary"] = f32.tie_at_boundary;
        e["max_prob_difference"] = f32.max_prob_difference;
    }
    out["engine_f32"] = std::move(e);
}

// XTC's two outcomes and their mixture, and mirostat's state.
void add_llamacpp_state(nlohmann::ordered_json& out, const PipelineTrace& trace) {
    if (trace.xtc) {
        const XtcMixture& m = *trace.xtc;
        nlohmann::ordered_json x;
        x["probability"] = m.probability;
        x["coin"] = m.coin;
        x["fired"] = m.fired;
        x["removed"] = m.removed;
        x["kept_without"] = m.kept_without;
        x["probs_without"] = m.probs_without;
        x["kept_with"] = m.kept_with;
        x["probs_with"] = m.probs_with;
        x["mixture_ids"] = m.ids;
        x["mixture_probs"] = m.probs;
        out["xtc"] = std::move(x);
    }
    if (trace.mirostat) {
        const MirostatStep& m = *trace.mirostat;
        nlohmann::ordered_json x;
        x["version"] = m.version;
        x["mu_before"] = m.mu_before;
        x["surprise"] = number_or_null(m.surprise);
        x["mu_after"] = number_or_null(m.mu_after);
        out["mirostat"] = std::move(x);
    }
}

void add_engine_checks(nlohmann::ordered_json& out, const PipelineTrace& trace) {
    if (!trace.engine_refusals.empty()) out["engine_would_refuse"] = trace.engine_refusals;
    if (trace.engine_logprobs.empty()) return;
    auto modes = nlohmann::ordered_json::array();
    for (const auto& mode : trace.engine_logprobs) {
        nlohmann::ordered_json m;
        m["mode"] = mode.mode;
        m["logprob"] = number_or_null(mode.value);
        m["default"] = mode.is_default;
        m["meaning"] = mode.meaning;
        modes.push_back(std::move(m));
    }
    out["engine_logprobs"] = std::move(modes);
}

nlohmann::ordered_json side_to_json(const PipelineTrace& trace) {
    nlohmann::ordered_json out;
    out["pipeline"] = trace.pipeline;
    auto order = nlohmann::ordered_json::array();
    for (const auto& stage : trace.trace.stages) {
        if (stage.active) order.push_back(stage_info(stage.stage).name);
    }
    out["active_order"] = std::move(order);
    out["kept"] = trace.trace.final_kept();
    out["probs"] = trace.trace.final_probs();
    out["token"] = trace.trace.token;
    out["greedy"] = trace.trace.greedy;
    out["u"] = trace.trace.u ? nlohmann::ordered_json(*trace.trace.u) : nlohmann::ordered_json(nullptr);
    out["tie_at_boundary"] = trace.any_tie();
    out["near_boundary"] = trace.any_near_boundary();
    out["ignored_params"] = trace.trace.ignored_params;
    add_engine_f32(out, trace);
    return out;
}

}  // namespace

nlohmann::ordered_json pipeline_to_json(const Pipeline& pipeline) {
    nlohmann::ordered_json out;
    out["name"] = pipeline.name;
    out["title"] = pipeline.title;
    out["penalty_last_n"] = pipeline.penalty_last_n;
    auto steps = nlohmann::ordered_json::array();
    for (const auto& step : pipeline.steps) {
        const auto& rule = rule_info(step.rule);
        nlohmann::ordered_json s;
        s["stage"] = stage_info(step.stage).name;
        s["rule"] = rule.name;
        s["enabled"] = step.enabled;
        s["joint"] = step.joint;
        s["summary"] = rule.summary;
        s["source"] = rule.citation;
        steps.push_back(std::move(s));
    }
    out["steps"] = std::move(steps);
    return out;
}

nlohmann::ordered_json pipeline_stage_to_json(const PipelineTrace& trace, std::size_t index,
                                              const TraceJsonOptions& options) {
    nlohmann::ordered_json stage = trace_stage_to_json(trace.trace, index, options);
    if (index >= trace.reports.size()) return stage;
    const auto& report = trace.reports[index];
    if (report.rule) stage["rule"] = rule_info(*report.rule).name;
    if (report.joint) stage["joint"] = true;
    if (report.tie_at_boundary) stage["tie_at_boundary"] = true;
    if (report.near_boundary) stage["near_boundary"] = true;
    if (!report.note.empty()) stage["note"] = report.note;
    return stage;
}

nlohmann::ordered_json pipeline_trace_to_json(const PipelineTrace& trace, const TraceJsonOptions& options) {
    TraceJsonOptions without_stages = options;
    without_stages.stages = false;
    without_stages.ignored_params = false;  // after this trace's own keys, below
    nlohmann::ordered_json out = trace_to_json(trace.trace, without_stages);
    if (options.stages) {
        auto& stages = out["stages"];
        for (std::size_t i = 0; i < trace.trace.stages.size(); ++i) {
            stages.push_back(pipeline_stage_to_json(trace, i, options));
        }
    }
    out["pipeline"] = trace.pipeline;
    out["tie_at_boundary"] = trace.any_tie();
    out["near_boundary"] = trace.any_near_boundary();
    out["ignored_params"] = trace.trace.ignored_params;
    add_engine_f32(out, trace);
    add_engine_checks(out, trace);
    add_llamacpp_state(out, trace);
    return out;
}

nlohmann::ordered_json pipeline_diff_to_json(const PipelineDiff& diff, const std::vector<std::string>& labels) {
    nlohmann::ordered_json out;
    out["seed"] = std::to_string(diff.a.trace.seed);
    out["draws_before"] = diff.a.trace.draws_before;
    out["vocab_size"] = diff.a.trace.vocab_size;
    out["a"] = side_to_json(diff.a);
    out["b"] = side_to_json(diff.b);
    out["only_a"] = diff.only_a;
    out["only_b"] = diff.only_b;
    auto tokens = nlohmann::ordered_json::array();
    for (const auto& row : diff.tokens) {
        nlohmann::ordered_json t;
        t["id"] = row.id;
        add_label(t, row.id, labels);
        t["prob_a"] = row.prob_a;
        t["prob_b"] = row.prob_b;
        tokens.push_back(std::move(t));
    }
    out["tokens"] = std::move(tokens);
    out["total_variation"] = diff.total_variation;
    out["same_token"] = diff.same_token;
    return out;
}

nlohmann::ordered_json empirical_to_json(const EmpiricalResult& result, const std::vector<std::string>& labels) {
    const auto& h = result.histogram;
    nlohmann::ordered_json out;
    out["pipeline"] = result.trace.pipeline;
    out["seed"] = std::to_string(result.trace.trace.seed);
    out["draws_before"] = result.trace.trace.draws_before;
    out["draws"] = h.draws;
    out["cancelled"] = h.cancelled;
    auto rows = nlohmann::ordered_json::array();
    const auto n = static_cast<double>(h.draws);
    for (std::size_t i = 0; i < h.ids.size(); ++i) {
        nlohmann::ordered_json row;
        row["id"] = h.ids[i];
        add_label(row, h.ids[i], labels);
        row["count"] = h.counts[i];
        row["q"] = h.expected[i];
        row["expected_count"] = n * h.expected[i];
        rows.push_back(std::move(row));
    }
    out["counts"] = std::move(rows);
    nlohmann::ordered_json test;
    test["statistic"] = number_or_null(result.test.statistic);
    test["degrees_of_freedom"] = result.test.degrees_of_freedom;
    test["bins"] = result.test.bins;
    test["p_value"] = result.test.p_value;
    test["impossible_draws"] = result.test.impossible_draws;
    out["chi_square"] = std::move(test);
    nlohmann::ordered_json deviation;
    deviation["id"] = result.deviation.id;
    deviation["z"] = number_or_null(result.deviation.z);
    out["largest_deviation"] = std::move(deviation);
    return out;
}

}  // namespace samplescope
