#include "engine/json/generation_json.h"

#include <algorithm>

#include "engine/json/pipeline_json.h"
#include "engine/json/trace_json.h"
#include "engine/json/trace_labels.h"

namespace samplescope {

nlohmann::ordered_json prompt_to_json(std::span<const PromptWord> prompt) {
    auto out = nlohmann::ordered_json::array();
    for (const auto& word : prompt) {
        nlohmann::ordered_json item;
        item["text"] = word.text;
        if (word.id == kUnknownWord) {
            item["id"] = nullptr;
            item["unknown"] = true;
        } else {
            item["id"] = word.id;
        }
        out.push_back(std::move(item));
    }
    return out;
}

TokenStanding token_standing(const PipelineTrace& trace) { return token_standing(trace, trace.trace.token); }

TokenStanding token_standing(const PipelineTrace& trace, std::int64_t token) {
    const IdList& ids = trace.exact_ids();
    const Values& probs = trace.exact_probs();
    TokenStanding out;
    const auto at = std::lower_bound(ids.begin(), ids.end(), token);
    if (at == ids.end() || *at != token) return out;
    out.probability = probs[static_cast<std::size_t>(at - ids.begin())];
    out.rank = 1;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (probs[i] > out.probability || (probs[i] == out.probability && ids[i] < token)) ++out.rank;
    }
    return out;
}

nlohmann::ordered_json generation_step_to_json(const GenerationStep& step, std::size_t index, const Pipeline& pipeline,
                                               const std::vector<std::string>& labels, bool full) {
    const SampleTrace& trace = step.trace.trace;
    nlohmann::ordered_json out;
    out["step"] = index + 1;
    out["token"] = step.token;
    out["text"] = step.text;
    if (full) {
        // The trace as `trace` prints it, after the step's place and text.
        auto whole = pipeline.reference ? trace_to_json(trace) : pipeline_trace_to_json(step.trace);
        add_token_text(whole, trace, labels);
        for (auto& [key, value] : whole.items()) {
            if (key != "token") out[key] = std::move(value);
        }
        return out;
    }
    const TokenStanding standing = token_standing(step.trace);
    out["logprob"] = trace.logprob;
    out["u"] = trace.u ? nlohmann::ordered_json(*trace.u) : nlohmann::ordered_json(nullptr);
    out["greedy"] = trace.greedy;
    out["probability"] = standing.probability;
    out["rank"] = standing.rank;
    out["kept_count"] = trace.final_kept().size();
    out["draws_consumed"] = trace.draws_consumed;
    if (step.ends) out["ends"] = true;
    TraceJsonOptions options;
    options.kept_lists = false;
    auto stages = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < trace.stages.size(); ++i) {
        auto stage = pipeline.reference ? trace_stage_to_json(trace, i, options)
                                        : pipeline_stage_to_json(step.trace, i, options);
        if (!stage.value("active", true) && stage.size() <= 3) continue;  // an off stage adds nothing
        stages.push_back(std::move(stage));
    }
    out["stages"] = std::move(stages);
    return out;
}

}  // namespace samplescope
