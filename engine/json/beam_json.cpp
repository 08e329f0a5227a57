#include "engine/json/beam_json.h"

#include "engine/generation/generation.h"

namespace samplescope {

namespace {

std::string tokens_text(const std::vector<std::int64_t>& tokens, const LanguageModel& model) {
    std::vector<std::string> texts;
    texts.reserve(tokens.size());
    for (const auto id : tokens) texts.push_back(model.token_text(id));
    return join_token_texts(texts);
}

nlohmann::ordered_json beam_to_json(const Beam& beam, const LanguageModel& model) {
    nlohmann::ordered_json out;
    out["tokens"] = beam.tokens;
    out["text"] = tokens_text(beam.tokens, model);
    out["logprob"] = beam.logprob;
    return out;
}

}  // namespace

nlohmann::ordered_json beam_hypotheses_to_json(std::span<const BeamHypothesis> hypotheses, const LanguageModel& model) {
    auto out = nlohmann::ordered_json::array();
    for (const auto& h : hypotheses) {
        nlohmann::ordered_json item;
        item["tokens"] = h.tokens;
        item["text"] = tokens_text(h.tokens, model);
        item["logprob"] = h.logprob;
        item["length"] = h.length;
        item["score"] = h.score;
        item["step"] = h.step;
        if (!h.finished) item["finished"] = false;
        out.push_back(std::move(item));
    }
    return out;
}

nlohmann::ordered_json beam_step_to_json(const BeamStep& step, const LanguageModel& model) {
    nlohmann::ordered_json out;
    out["step"] = step.step;
    auto beams = nlohmann::ordered_json::array();
    for (const auto& beam : step.beams) beams.push_back(beam_to_json(beam, model));
    out["beams"] = std::move(beams);
    auto candidates = nlohmann::ordered_json::array();
    for (const auto& c : step.candidates) {
        nlohmann::ordered_json item;
        item["beam"] = c.beam;
        item["token"] = c.token;
        item["text"] = model.token_text(c.token);
        item["token_logprob"] = c.token_logprob;
        item["logprob"] = c.logprob;
        item["score"] = c.score;
        item["rank"] = c.rank;
        item["ends"] = c.ends;
        item["fate"] = candidate_fate_name(c.fate);
        candidates.push_back(std::move(item));
    }
    out["candidates"] = std::move(candidates);
    auto kept = nlohmann::ordered_json::array();
    for (const auto& beam : step.kept) kept.push_back(beam_to_json(beam, model));
    out["kept"] = std::move(kept);
    out["finished"] = beam_hypotheses_to_json(step.finished, model);
    if (step.best_possible) out["best_possible"] = *step.best_possible;
    if (step.worst_finished) out["worst_finished"] = *step.worst_finished;
    out["done"] = step.done;
    if (step.done) out["stop_reason"] = step.stop_reason;
    return out;
}

nlohmann::ordered_json beam_rules_to_json(BeamRules rules) {
    auto out = nlohmann::ordered_json::array();
    for (const auto& info : kBeamRules) {
        if (info.rules != rules) continue;
        nlohmann::ordered_json item;
        item["aspect"] = info.aspect;
        item["summary"] = info.summary;
        item["citation"] = info.citation;
        out.push_back(std::move(item));
    }
    return out;
}

}  // namespace samplescope
