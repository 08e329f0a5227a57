// The sampling settings of a request, read from its JSON body (OpenAI, vLLM,
// SGLang and llama.cpp keys) or from a response's own record of them
// (llama.cpp's generation_settings, a vLLM dump's sampling_params).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/sampling_params.h"

namespace samplescope {

struct RequestSettings {
    // Each parameter the body gives, by the parameter table's keys, in the
    // order read; values already validated.
    std::vector<std::pair<Param, double>> values;
    std::optional<std::uint64_t> seed;
    std::optional<std::int64_t> penalty_last_n;  // llama.cpp's repeat_last_n
    std::optional<bool> post_sampling_probs;     // llama.cpp
    std::optional<std::string> logprobs_mode;    // vLLM's engine argument, where a dump records it
    std::optional<std::int64_t> top_logprobs;    // alternatives asked for (top_logprobs, logprobs, n_probs)
    // llama.cpp's `samplers`, in order, by the stage names of engine/core/stage.h
    // (top_k, typical_p, top_p, min_p, xtc, dry, top_n_sigma, temperature);
    // absent when not given. A sampler left out is not applied.
    std::optional<std::vector<std::string>> samplers;
    // Keys that change sampling in ways the top N cannot replay, one line each
    // ("logit_bias: 2 entries").
    std::vector<std::string> unmodelled;
    std::string source;  // "the request in FILE", "FILE's generation_settings"
};

// Reads `body` (a JSON object). Keys not about sampling are ignored; a
// sampling key of the wrong type or value throws InputError naming `where`
// and the key, e.g. "req.json: request.top_p must be in [0, 1], got 1.5".
// Null values count as absent. top_k of -1 (vLLM, SGLang: all) reads as 0.
RequestSettings read_request_settings(const nlohmann::ordered_json& body, const std::string& source,
                                      const std::string& where);

// A request file: the body itself, or an object holding it as "request".
RequestSettings load_request_settings_file(const std::string& path);

// The settings over `params`: each given value replaces the one there.
void apply_request_settings(const RequestSettings& settings, SamplingParams& params);

}  // namespace samplescope
