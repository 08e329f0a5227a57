#include "engine/json/trace_json.h"

#include <cmath>

#include "engine/json/params_json.h"

namespace samplescope {

namespace {

nlohmann::ordered_json number_or_null(double value) {
    return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

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
    if (((info.truncates || stage.stage == Stage::Softmax) && options.kept_lists) || options.full) {
        out["kept"] = *stage.kept;
        out["probs"] = *stage.probs.once();  // a row-sized q computed for this write only
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
    if (stage.temperature_used) {
        out["temperature_used"] = *stage.temperature_used;
        out["max_entropy"] = *stage.max_entropy;
    }
    if (stage.dry_ids) {
        auto penalised = nlohmann::ordered_json::array();
        for (std::size_t i = 0; i < stage.dry_ids->size(); ++i) {
            nlohmann::ordered_json row;
            row["id"] = (*stage.dry_ids)[i];
            row["match_length"] = (*stage.dry_lengths)[i];
            row["penalty"] = (*stage.dry_penalties)[i];
            penalised.push_back(std::move(row));
        }
        out["dry_penalised"] = std::move(penalised);
        if (stage.dry_repeat_limit) out["dry_repeat_limit"] = *stage.dry_repeat_limit;
    }
    if (stage.xtc_coin) {
        out["xtc_coin"] = *stage.xtc_coin;
        out["xtc_fired"] = stage.xtc_fired.value_or(false);
        out["xtc_removed"] = *stage.xtc_removed;
    }
    if (stage.mirostat_mu) {
        out["mirostat_mu"] = *stage.mirostat_mu;
        if (stage.mirostat_k) {
            out["mirostat_s_hat"] = number_or_null(*stage.mirostat_s_hat);
            out["mirostat_k"] = number_or_null(*stage.mirostat_k);
        }
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
    if (options.stages) {
        for (const auto& stage : trace.stages) stages.push_back(stage_to_json(stage, options));
    }
    out["stages"] = std::move(stages);
    if (options.ignored_params) out["ignored_params"] = trace.ignored_params;
    return out;
}

nlohmann::ordered_json trace_stage_to_json(const SampleTrace& trace, std::size_t index,
                                           const TraceJsonOptions& options) {
    return stage_to_json(trace.stages.at(index), options);
}

}  // namespace samplescope
