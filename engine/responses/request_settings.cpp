#include "engine/responses/request_settings.h"

#include <array>
#include <cmath>
#include <string_view>

#include "engine/base/input_error.h"
#include "engine/io/byte_source.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/responses/response.h"

namespace samplescope {

namespace {

using Json = nlohmann::ordered_json;

// llama.cpp's own names for keys of the parameter table (tools/server/README.md).
struct Alias {
    std::string_view key;
    Param param;
};
constexpr std::array<Alias, 1> kAliases{{{"repeat_penalty", Param::RepetitionPenalty}}};

// llama.cpp's sampler names (common/sampling.cpp common_sampler_type_from_name, with the older
// spellings its servers wrote) as the stage names of engine/core/stage.h; "" for samplers this
// project does not model (tfs_z, infill) and for penalties, which always run first.
std::string_view sampler_stage(std::string_view name) {
    if (name == "top_k") return "top_k";
    if (name == "top_p") return "top_p";
    if (name == "min_p") return "min_p";
    if (name == "typ_p" || name == "typical_p" || name == "typical") return "typical_p";
    if (name == "temperature" || name == "temp") return "temperature";
    if (name == "xtc") return "xtc";
    if (name == "dry") return "dry";
    if (name == "top_n_sigma") return "top_n_sigma";
    return "";
}

std::string type_name(const Json& value) {
    if (value.is_string()) return "a string";
    if (value.is_boolean()) return "a boolean";
    if (value.is_array()) return "an array";
    if (value.is_object()) return "an object";
    return "a number";
}

class Reader {
public:
    Reader(std::string source, std::string where) : source_(std::move(source)), where_(std::move(where)) {}

    [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
        throw InputError("request", source_ + ": " + where_ + "." + key + " " + problem);
    }

    double number(const std::string& key, const Json& value) const {
        if (!value.is_number()) fail(key, "must be a number, got " + type_name(value));
        return value.get<double>();
    }

    std::int64_t integer(const std::string& key, const Json& value) const {
        if (value.is_number_integer()) return value.get<std::int64_t>();
        if (value.is_number_unsigned()) fail(key, "is too large, got " + value.dump());
        const double x = number(key, value);
        if (!(std::floor(x) == x) || std::fabs(x) > 9.0e15) fail(key, "must be an integer, got " + format_number(x));
        return static_cast<std::int64_t>(x);
    }

    bool boolean(const std::string& key, const Json& value) const {
        if (!value.is_boolean()) fail(key, "must be true or false, got " + type_name(value));
        return value.get<bool>();
    }

    const std::string& source() const { return source_; }

private:
    std::string source_;
    std::string where_;
};

std::optional<Param> param_for_key(const std::string& key) {
    if (const auto param = param_from_key(key)) return param;
    for (const auto& alias : kAliases) {
        if (alias.key == key) return alias.param;
    }
    return std::nullopt;
}

bool empty_value(const Json& value) {
    if (value.is_string()) return value.get_ref<const std::string&>().empty();
    return value.is_null() || ((value.is_array() || value.is_object()) && value.empty());
}

}  // namespace

RequestSettings read_request_settings(const Json& body, const std::string& source, const std::string& where) {
    const Reader reader(source, where);
    if (!body.is_object()) {
        throw InputError("request", source + ": " + where + " must be a JSON object, got " + type_name(body));
    }
    RequestSettings out;
    out.source = where + " in " + source;
    for (const auto& [key, value] : body.items()) {
        if (value.is_null()) continue;
        if (const auto param = param_for_key(key)) {
            const ParamInfo& info = param_info(*param);
            double x = 0.0;
            if (info.integer()) {
                std::int64_t n = reader.integer(key, value);
                // vLLM and SGLang spell "every id" as top_k = -1; the table's off value is 0.
                if (*param == Param::TopK && n == -1) n = 0;
                x = static_cast<double>(n);
            } else {
                x = reader.number(key, value);
            }
            if (const auto error = param_error(*param, x)) reader.fail(key, "is not valid: " + *error);
            out.values.emplace_back(*param, x);
        } else if (key == "seed") {
            // llama.cpp writes 4294967295 (LLAMA_DEFAULT_SEED) and OpenAI clients -1 for "choose one".
            if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
                out.seed = value.get<std::uint64_t>();
            } else if (value.is_number_unsigned()) {
                out.seed = value.get<std::uint64_t>();
            } else if (!value.is_number_integer()) {
                reader.fail(key, "must be an integer, got " + type_name(value));
            }
        } else if (key == "repeat_last_n") {
            const std::int64_t n = reader.integer(key, value);
            if (n < -1) reader.fail(key, "must be an integer >= -1, got " + std::to_string(n));
            out.penalty_last_n = n;
        } else if (key == "post_sampling_probs") {
            out.post_sampling_probs = reader.boolean(key, value);
        } else if (key == "logprobs_mode") {
            if (!value.is_string()) reader.fail(key, "must be a string, got " + type_name(value));
            const auto mode = value.get<std::string>();
            if (!find_logprob_mode(mode)) reader.fail(key, "names no known logprobs mode: \"" + mode + "\"");
            out.logprobs_mode = mode;
        } else if (key == "top_logprobs" || key == "n_probs" || (key == "logprobs" && !value.is_boolean())) {
            const std::int64_t n = reader.integer(key, value);
            if (n < 0) reader.fail(key, "must be an integer >= 0, got " + std::to_string(n));
            out.top_logprobs = n;
        } else if (key == "logit_bias" || key == "bad_words" || key == "allowed_token_ids" || key == "grammar" ||
                   key == "json_schema" || key == "guided_json" || key == "guided_regex" || key == "guided_choice" ||
                   key == "guided_grammar") {
            if (!empty_value(value)) {
                out.unmodelled.push_back(key + " is set: it changes which ids can be drawn in ways the response "
                                               "does not show");
            }
        } else if (key == "samplers") {
            if (!value.is_array()) reader.fail(key, "must be an array of sampler names, got " + type_name(value));
            std::vector<std::string> stages;
            for (const auto& name : value) {
                if (!name.is_string()) reader.fail(key, "must hold strings, got " + type_name(name));
                const std::string_view stage = sampler_stage(name.get_ref<const std::string&>());
                if (!stage.empty()) stages.emplace_back(stage);
            }
            out.samplers = std::move(stages);
        }
    }
    return out;
}

RequestSettings load_request_settings_file(const std::string& path) {
    const FileSource source(path);
    // A request body is small; anything near this is not one.
    const std::string text = source.read_all(64ULL << 20);
    const Json body = response_detail::parse_json(text, path, "the request");
    if (body.is_object() && body.contains("request") && body.at("request").is_object()) {
        return read_request_settings(body.at("request"), path, "request");
    }
    return read_request_settings(body, path, "request");
}

void apply_request_settings(const RequestSettings& settings, SamplingParams& params) {
    for (const auto& [param, value] : settings.values) set_param(params, param, value);
    if (settings.seed) params.seed = settings.seed;
}

}  // namespace samplescope
