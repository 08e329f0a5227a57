// A vLLM RequestOutput saved as JSON (examples/dump_response_vllm.py writes
// one), field for field with vLLM's own classes:
//   RequestOutput   request_id, prompt, prompt_token_ids, outputs, finished (vllm/outputs.py)
//   CompletionOutput index, text, token_ids, cumulative_logprob, logprobs, finish_reason (vllm/outputs.py)
//   logprobs        one {token id: Logprob} per generated token, SampleLogprobs (vllm/logprobs.py):
//                   the sampled token and the top N, each {logprob, rank, decoded_token}
//                   (vllm/v1/engine/logprobs.py LogprobsProcessor._make_logprob_dict)
// plus what the dump adds from the engine and the request: logprobs_mode (the LLM's engine
// argument, vllm/config/model.py LogprobsMode) and sampling_params (SamplingParams' fields).
#include "engine/base/number_text.h"
#include "engine/responses/response_readers.h"

namespace samplescope::response_detail {

namespace {

std::int64_t id_key(const std::string& key, const std::string& source, const std::string& where) {
    const auto integer = parse_integer_text(key);
    if (!integer || integer->negative || integer->magnitude > static_cast<std::uint64_t>(INT64_MAX)) {
        fail(source, where + " has the key \"" + key + "\", not a token id");
    }
    return static_cast<std::int64_t>(integer->magnitude);
}

}  // namespace

Response read_vllm(const Json& document, const std::string& source, const ResponseLoadOptions& options) {
    Response response;
    response.source = source;
    response.format = ResponseFormat::VllmOffline;
    if (const auto mode = document.find("logprobs_mode"); mode != document.end() && !mode->is_null()) {
        if (!mode->is_string()) fail(source, "logprobs_mode must be a string, got " + type_name(*mode));
        response.mode = mode->get<std::string>();
        const LogprobModeInfo* info = find_logprob_mode(response.mode);
        if (!info || info->engine != "vllm") {
            fail(source, "logprobs_mode \"" + response.mode + "\" is not one of vLLM's (raw_logprobs, raw_logits, "
                                                              "processed_logprobs, processed_logits)");
        }
        response.mode_source = "its logprobs_mode";
    }
    const bool logits = reads_logits(options, !response.mode.empty() && find_logprob_mode(response.mode)->kind == LogprobKind::Logit);
    response.normalised = !logits;
    if (const auto params = document.find("sampling_params"); params != document.end() && params->is_object()) {
        response.settings = read_request_settings(*params, source, "sampling_params");
    }
    if (const auto prompt = document.find("prompt_token_ids"); prompt != document.end() && prompt->is_array()) {
        for (std::size_t i = 0; i < prompt->size(); ++i) {
            response.prompt_ids.push_back(integer_value((*prompt)[i], source, at("prompt_token_ids", i)));
        }
    }
    const Json& outputs = array_member(document, "outputs", source, "the RequestOutput");
    const Json* output = nullptr;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const Json& entry = outputs[i];
        if (!entry.is_object()) fail(source, at("outputs", i) + " must be an object, got " + type_name(entry));
        const auto index = entry.find("index");
        const bool match = index == entry.end() ? i == options.choice
                                                : index->is_number_integer() && index->get<std::int64_t>() >= 0 &&
                                                      static_cast<std::size_t>(index->get<std::int64_t>()) == options.choice;
        if (match) output = &entry;
    }
    if (!output) {
        fail(source, "outputs has no output " + std::to_string(options.choice) + " (it holds " +
                         std::to_string(outputs.size()) + ")");
    }
    const std::string where = at("outputs", options.choice);
    const Json& token_ids = array_member(*output, "token_ids", source, where);
    const auto logprobs = output->find("logprobs");
    if (logprobs == output->end() || logprobs->is_null()) {
        fail(source, at(where, "logprobs") + " is missing or null: SamplingParams.logprobs was not set");
    }
    if (!logprobs->is_array()) fail(source, at(where, "logprobs") + " must be an array, got " + type_name(*logprobs));
    if (logprobs->size() != token_ids.size()) {
        fail(source, at(where, "logprobs") + " has " + std::to_string(logprobs->size()) + " entries for " +
                         std::to_string(token_ids.size()) + " token_ids");
    }
    if (const auto reason = output->find("finish_reason"); reason != output->end() && reason->is_string()) {
        response.finish_reason = reason->get<std::string>();
    }
    for (std::size_t i = 0; i < token_ids.size(); ++i) {
        ResponsePosition position;
        position.where = at(at(where, "logprobs"), i);
        const std::int64_t sampled = integer_value(token_ids[i], source, at(at(where, "token_ids"), i));
        const Json& entries = (*logprobs)[i];
        if (!entries.is_object()) fail(source, position.where + " must be an object of id: Logprob, got " + type_name(entries));
        bool found = false;
        for (const auto& [key, entry] : entries.items()) {
            const std::string entry_where = at(position.where, key);
            const std::int64_t id = id_key(key, source, position.where);
            if (!entry.is_object()) fail(source, entry_where + " must be an object (a Logprob), got " + type_name(entry));
            ResponseToken token;
            token.id = id;
            const auto value = entry.find("logprob");
            if (value == entry.end()) fail(source, entry_where + " has no \"logprob\"");
            const double x = number_value(*value, source, at(entry_where, "logprob"));
            token.value = logits ? checked_logit(x, source, at(entry_where, "logprob"))
                                 : checked_logprob(x, source, at(entry_where, "logprob"));
            if (const auto text = entry.find("decoded_token"); text != entry.end() && text->is_string()) {
                token.bytes = text->get<std::string>();
            }
            std::optional<std::int64_t> rank;
            if (const auto r = entry.find("rank"); r != entry.end() && !r->is_null()) {
                rank = integer_value(*r, source, at(entry_where, "rank"));
                if (*rank < 1) fail(source, at(entry_where, "rank") + " must be >= 1, got " + std::to_string(*rank));
            }
            if (id == sampled) {
                found = true;
                position.token = token;
                position.rank = rank;
            }
            position.top.push_back(std::move(token));
        }
        if (!found) {
            fail(source, position.where + " has no entry for the sampled id " + std::to_string(sampled) +
                             " (vLLM always lists the sampled token)");
        }
        finish_position(position, source);
        // The rank vLLM gives counts every id above the token; more listed above it is a contradiction.
        if (position.rank) {
            std::int64_t higher = 0;
            for (const auto& entry : position.top) higher += *entry.value > *position.token.value ? 1 : 0;
            if (higher >= *position.rank) {
                fail(source, position.where + ": the sampled id " + std::to_string(sampled) + " has rank " +
                                 std::to_string(*position.rank) + " but " + std::to_string(higher) +
                                 " listed ids have a higher logprob");
            }
        }
        response.positions.push_back(std::move(position));
    }
    return response;
}

}  // namespace samplescope::response_detail
