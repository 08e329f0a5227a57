#include "engine/json/verify_json.h"

#include <algorithm>
#include <cmath>

namespace samplescope {

namespace {

nlohmann::ordered_json number_or_null(double value) {
    if (std::isfinite(value)) return value;
    return nullptr;
}

}  // namespace

nlohmann::ordered_json verification_to_json(const SamplerVerification& verification, const Pipeline& pipeline) {
    const VerifyResult& result = verification.result;
    nlohmann::ordered_json out;
    out["verdict"] = result.cancelled ? "cancelled" : (result.pass ? "pass" : "fail");
    out["pipeline"] = pipeline.name;
    out["alpha"] = result.alpha;
    out["power"] = kVerifyPower;
    auto rows = nlohmann::ordered_json::array();
    for (std::size_t r = 0; r < result.rows.size(); ++r) {
        const RowVerification& row = result.rows[r];
        nlohmann::ordered_json j;
        j["row"] = verification.row[r];
        j["verdict"] = row.pass ? "pass" : "fail";
        j["samples"] = row.samples;
        j["kept_count"] = verified_ids(verification.exact[r]).size();
        j["ignored_params"] = verification.exact[r].trace.ignored_params;
        j["support_violations"] = row.outside_count;
        auto outside = nlohmann::ordered_json::array();
        for (const IdCount& c : row.support_violations) outside.push_back({{"id", c.id}, {"count", c.count}});
        j["outside_ids"] = std::move(outside);
        j["g_statistic"] = number_or_null(row.g.statistic);
        j["degrees_of_freedom"] = row.g.degrees_of_freedom;
        j["bins"] = row.g.bins;
        j["p_value"] = row.g.p_value;
        j["p_value_holm"] = row.g_p_holm;
        j["tail"] = {{"ids", row.tail.ids},
                     {"ids_below_2_24", row.tail.ids_below_tiny},
                     {"mass", row.tail.mass},
                     {"observed", row.tail.observed},
                     {"expected", row.tail.expected},
                     {"p_value", row.tail.p_value},
                     {"p_value_holm", row.tail_p_holm}};
        j["detectable_tv"] = row.detectable_tv;
        j["level"] = row.level;
        auto deviations = nlohmann::ordered_json::array();
        for (const Deviation& d : row.largest_deviations) {
            deviations.push_back({{"id", d.id}, {"observed", d.observed}, {"expected", d.expected}, {"z", d.z}});
        }
        j["largest_deviations"] = std::move(deviations);
        rows.push_back(std::move(j));
    }
    out["rows"] = std::move(rows);
    return out;
}

nlohmann::ordered_json verify_plan_to_json(const std::vector<PipelineTrace>& exact, const std::vector<std::size_t>& rows,
                                           double tv, double alpha, const Pipeline& pipeline) {
    const double level = per_test_level(alpha, exact.size());
    nlohmann::ordered_json out;
    out["pipeline"] = pipeline.name;
    out["tv"] = tv;
    out["alpha"] = alpha;
    out["power"] = kVerifyPower;
    out["level"] = level;
    std::uint64_t most = 0;
    auto list = nlohmann::ordered_json::array();
    for (std::size_t r = 0; r < exact.size(); ++r) {
        const std::uint64_t n = samples_needed(verified_probs(exact[r]), tv, level);
        most = std::max(most, n);
        nlohmann::ordered_json row;
        row["row"] = rows[r];
        row["kept_count"] = verified_ids(exact[r]).size();
        row["ignored_params"] = exact[r].trace.ignored_params;
        row["samples_needed"] = n;
        list.push_back(std::move(row));
    }
    out["samples_needed"] = most;
    out["rows"] = std::move(list);
    return out;
}

}  // namespace samplescope
