#include "engine/json/response_json.h"

#include <cmath>

#include "engine/base/input_error.h"
#include "engine/json/json_stream.h"
#include "engine/json/params_json.h"

namespace samplescope {

namespace {

using Json = nlohmann::ordered_json;

Json number_or_null(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }

Json optional_number(const std::optional<double>& value) { return value ? number_or_null(*value) : Json(nullptr); }

Json bytes_json(const std::string& text) {
    Json bytes = Json::array();
    for (const char c : text) bytes.push_back(static_cast<unsigned char>(c));
    return bytes;
}

}  // namespace

Json token_explanation_to_json(const TokenExplanation& token, const ResponsePosition* position) {
    Json out;
    out["position"] = token.position;
    out["token"] = token.bytes;
    // Bytes that are not whole UTF-8 characters (a character split across tokens) are also given as numbers.
    if (utf8_valid_prefix(token.bytes) != token.bytes.size()) out["bytes"] = bytes_json(token.bytes);
    out["id"] = token.id ? Json(*token.id) : Json(nullptr);
    out["value"] = optional_number(token.value);
    out["rank"] = token.rank_lo;
    out["rank_max"] = token.rank_hi ? Json(*token.rank_hi) : Json(nullptr);
    out["alternatives"] = token.alternatives;
    if (position) {
        Json top = Json::array();
        for (const auto& entry : position->top) {
            Json e;
            e["token"] = entry.bytes;
            if (utf8_valid_prefix(entry.bytes) != entry.bytes.size()) e["bytes"] = bytes_json(entry.bytes);
            e["id"] = entry.id ? Json(*entry.id) : Json(nullptr);
            e["value"] = optional_number(entry.value);
            top.push_back(std::move(e));
        }
        out["top"] = std::move(top);
    }
    out["rest_mass"] = optional_number(token.rest_mass);
    out["entropy"] = {{"lo", optional_number(token.entropy_lo)}, {"hi", optional_number(token.entropy_hi)}};
    out["exact"] = token.exact;
    out["verdict"] = token_verdict_name(token.verdict);
    Json stages = Json::array();
    for (const auto& stage : token.stages) {
        Json s;
        s["stage"] = stage_info(stage.stage).name;
        s["verdict"] = token_verdict_name(stage.verdict);
        s["parameter"] = stage.parameter;
        if (!stage.quantity.empty()) {
            s["quantity"] = stage.quantity;
            s["lo"] = optional_number(stage.lo);
            s["hi"] = optional_number(stage.hi);
        }
        s["reason"] = stage.reason;
        stages.push_back(std::move(s));
    }
    out["stages"] = std::move(stages);
    out["summary"] = token.summary;
    return out;
}

Json explanation_header_to_json(const Response& response, const ExplainSetup& setup,
                                const ResponseExplanation& explanation) {
    const ExplainSettings& settings = setup.settings;
    Json out;
    out["source"] = response.source;
    out["format"] = response_format_name(response.format);
    out["streamed"] = response.streamed;
    out["finish_reason"] = response.finish_reason;
    out["pipeline"] = settings.pipeline.name;
    out["pipeline_source"] = setup.pipeline_source;
    out["logprobs_mode"] = {{"mode", settings.mode->mode},
                            {"meaning", settings.mode->meaning},
                            {"source", setup.mode_source}};
    out["params"] = params_to_json(settings.params);
    Json sources = Json::object();
    for (const auto& [key, source] : setup.param_sources) sources[key] = source;
    out["param_sources"] = std::move(sources);
    out["vocab_size"] = settings.vocab_size ? Json(*settings.vocab_size) : Json(nullptr);
    out["text"] = response.text;
    out["notes"] = setup.notes;
    out["tokens"] = Json::array();
    out["summary"] = {{"checked", explanation.tokens.size()},
                      {"possible", explanation.kept},
                      {"excluded", explanation.excluded},
                      {"cannot_tell", explanation.undecidable},
                      {"line", explanation.summary_line()}};
    return out;
}

void write_explanation_json(std::ostream& out, const Response& response, const ExplainSetup& setup,
                            const ResponseExplanation& explanation) {
    const Json header = explanation_header_to_json(response, setup, explanation);
    const StreamedArray tokens{"tokens", explanation.tokens.size(),
                               [&explanation, &response](std::size_t i) {
                                   return token_explanation_to_json(explanation.tokens[i], &response.positions[i]);
                               },
                               1};
    write_json_streamed(out, header, tokens);
    out << "\n";
}

}  // namespace samplescope
