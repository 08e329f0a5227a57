#include "engine/json/speculative_json.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace samplescope {

namespace {

nlohmann::ordered_json optional_number(const std::optional<double>& value) {
    return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

// The kept set, best first by (probability desc, id asc), at most `shown` (0: all).
nlohmann::ordered_json kept_to_json(const IdList& ids, const Values& probs, const LanguageModel& model,
                                    std::size_t shown) {
    std::vector<std::size_t> order(ids.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    const std::size_t n = shown == 0 ? order.size() : std::min(shown, order.size());
    const auto better = [&](std::size_t a, std::size_t b) {
        return probs[a] > probs[b] || (probs[a] == probs[b] && ids[a] < ids[b]);
    };
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(), better);
    auto out = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < n; ++i) {
        nlohmann::ordered_json item;
        item["id"] = ids[order[i]];
        item["text"] = model.token_text(ids[order[i]]);
        item["prob"] = probs[order[i]];
        out.push_back(std::move(item));
    }
    return out;
}

}  // namespace

nlohmann::ordered_json speculative_round_to_json(const SpeculativeRound& round, const LanguageModel& model,
                                                 std::size_t kept_shown) {
    const SpecVerification& v = round.verification;
    nlohmann::ordered_json out;
    out["round"] = round.index + 1;
    out["k"] = round.k;
    out["draws_before"] = round.draws_before;
    auto positions = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < v.positions.size(); ++i) {
        const SpecPosition& at = v.positions[i];
        nlohmann::ordered_json item;
        item["position"] = i;
        item["token"] = at.token;
        item["text"] = model.token_text(at.token);
        item["draft_u"] = optional_number(round.draft_u[i]);
        item["q"] = at.q;
        item["p"] = at.p;
        item["acceptance"] = at.acceptance;
        item["u"] = optional_number(at.u);
        item["tested"] = at.tested;
        item["accepted"] = at.accepted;
        item["expected"] = at.overlap;
        item["draft_kept_count"] = round.rows.draft[i].ids.size();
        item["target_kept_count"] = round.rows.target[i].ids.size();
        positions.push_back(std::move(item));
    }
    out["positions"] = std::move(positions);
    out["rejected_at"] = v.final.bonus ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v.final.position);
    const SpecFinal& f = v.final;
    nlohmann::ordered_json final;
    final["kind"] = f.bonus ? "bonus" : "residual";
    final["position"] = f.position;
    final["u"] = optional_number(f.u);
    final["token"] = f.token;
    final["text"] = model.token_text(f.token);
    final["kept_count"] = f.ids.size();
    final["kept"] = kept_to_json(f.ids, f.probs, model, kept_shown);
    if (f.empty_residual) final["empty_residual"] = true;
    if (f.fell_back) final["fell_back"] = true;
    out["final"] = std::move(final);
    if (v.bonus_u && !f.bonus) out["unused_bonus_u"] = *v.bonus_u;
    auto emitted = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < round.emitted.size(); ++i) {
        nlohmann::ordered_json item;
        item["token"] = round.emitted[i];
        item["text"] = model.token_text(round.emitted[i]);
        item["from"] = i < v.accepted ? "draft" : f.bonus ? "bonus" : "residual";
        emitted.push_back(std::move(item));
    }
    out["emitted"] = std::move(emitted);
    out["draws_after"] = round.draws_after;
    if (round.ended) out["ends"] = true;
    return out;
}

nlohmann::ordered_json speculative_stats_to_json(const SpeculativeStats& stats) {
    nlohmann::ordered_json out;
    out["rounds"] = stats.rounds;
    out["tested"] = stats.tested;
    out["accepted"] = stats.accepted;
    out["rate"] = stats.rate();
    out["expected_rate"] = stats.expected_rate();
    out["standard_error"] = stats.standard_error();
    out["z"] = stats.z();
    return out;
}

nlohmann::ordered_json spec_round_diff_to_json(const SpecRoundDiff& diff, const SpecPreset& a, const SpecPreset& b,
                                               std::span<const double> uniforms) {
    nlohmann::ordered_json out;
    out["a"] = a.name;
    out["b"] = b.name;
    out["uniforms"] = std::vector<double>(uniforms.begin(), uniforms.end());
    out["emitted_a"] = diff.a.emitted;
    out["emitted_b"] = diff.b.emitted;
    out["same_emitted"] = diff.same_emitted;
    out["differences"] = diff.differences;
    return out;
}

nlohmann::ordered_json spec_preset_to_json(const SpecPreset& preset) {
    nlohmann::ordered_json out;
    out["name"] = preset.name;
    out["title"] = preset.title;
    auto rules = nlohmann::ordered_json::array();
    for (const SpecRule rule : {preset.accept, preset.residual, preset.greedy, preset.draws, preset.checks}) {
        const SpecRuleInfo& info = spec_rule_info(rule);
        nlohmann::ordered_json item;
        item["aspect"] = info.aspect;
        item["rule"] = std::string(info.aspect) + ":" + std::string(info.name);
        item["summary"] = info.summary;
        item["citation"] = info.citation;
        rules.push_back(std::move(item));
    }
    out["rules"] = std::move(rules);
    return out;
}

}  // namespace samplescope
