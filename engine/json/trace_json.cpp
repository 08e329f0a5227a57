#include "engine/json/trace_json.h"

#include <cmath>

#include "engine/json/params_json.h"

namespace samplescope {

namespace {

nlohmann::ordered_json numbers_or_null(const Values& values) {
    auto out = nlohmann::ordered_json::array();
    for (const double v : values) {
        if (std::isfinite(v)) {
            out.push_back(v);
        } else {
            out.push_back(nullptr);
        }
    }
    return out;
}

nlohmann::ordered_json stage_to_json(const StageTrace& stage, const TraceJsonOptions& options) {
    const auto& info = stage_info(stage.stage);
    nlohmann::ordered_json out;
    out["name"] = info.name;
    out["active"] = stage.active;
    out["kept_count"] = stage.kept_count();
    if (info.truncates || stage.stage == Stage::Softmax || options.full) {
        out["kept"] = *stage.kept;
        out["probs"] = *stage.probs;
    }
    if (stage.kth_logit) out["kth_logit"] = *stage.kth_logit;
    if (stage.entropy) out["entropy"] = *stage.entropy;
    if (stage.logit_floor) {
        out["max_logit"] = *stage.max_logit;
        out["logit_mean"] = *stage.logit_mean;
        out["logit_sigma"] = *stage.logit_sigma;
        out["logit_floor"] = *stage.logit_floor;
    }
    if (stage.crossing_rank) {
        out["crossing_rank"] = *stage.crossing_rank;
        out["crossing_id"] = *stage.crossing_id;
        out["crossing_mass"] = *stage.crossing_mass;
    }
    if (stage.prob_floor) {
        out["max_prob"] = *stage.max_prob;
        out["prob_floor"] = *stage.prob_floor;
    }
    if (options.full) out["logits"] = numbers_or_null(*stage.logits);
    return out;
}

}  // namespace

nlohmann::ordered_json trace_to_json(const SampleTrace& trace, const TraceJsonOptions& options) {
    nlohmann::ordered_json out;
    out["token"] = trace.token;
    out["logprob"] = trace.logprob;
    out["u"] = trace.u ? nlohmann::ordered_json(*trace.u) : nlohmann::ordered_json(nullptr);
    out["greedy"] = trace.greedy;
    out["seed"] = std::to_string(trace.seed);
    out["draws_before"] = trace.draws_before;
    out["draws_consumed"] = trace.draws_consumed;
    out["vocab_size"] = trace.vocab_size;
    out["params"] = params_to_json(trace.params);
    out["kept"] = trace.final_kept();
    out["probs"] = trace.final_probs();
    out["cumulative"] = trace.cumulative;
    out["fell_back"] = trace.fell_back;
    auto stages = nlohmann::ordered_json::array();
    for (const auto& stage : trace.stages) stages.push_back(stage_to_json(stage, options));
    out["stages"] = std::move(stages);
    return out;
}

}  // namespace samplescope
