// What an explanation assumes, resolved from what the caller names (flags, a
// request file) and what the response says itself, each with where it came
// from, so a wrong default shows as such: the pipeline (by the response's
// format unless named), the logprobs mode (the file's, else the pipeline's
// default), and every parameter (the pipeline's defaults, then the
// response's own record, then the request, then flags).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/responses/explain.h"
#include "engine/responses/request_settings.h"
#include "engine/responses/response.h"

namespace samplescope {

struct ExplainRequest {
    std::string pipeline;                       // a preset or "custom" (empty: by the response's format)
    std::string stages;                         // custom's step list
    std::string logprobs_mode;                  // empty: the response's own, else the pipeline's default
    std::optional<RequestSettings> request;     // a request file
    std::vector<std::pair<Param, double>> flags;  // parameters given one by one, last
    std::optional<std::size_t> vocab_size;
};

struct ExplainSetup {
    ExplainSettings settings;
    std::string pipeline_source;
    std::string mode_source;
    // Each parameter's key and where its value came from, in the table's order (set ones only).
    std::vector<std::pair<std::string, std::string>> param_sources;
    std::vector<std::string> notes;
};

// The pipeline a response of this format is explained with unless one is named.
const char* default_pipeline(ResponseFormat format);

// Throws InputError for an unknown pipeline or mode, a mode that contradicts
// the response's own, or a pipeline without modes when the response names none.
ExplainSetup resolve_explain(const Response& response, const ExplainRequest& request);

}  // namespace samplescope
