// A response's explanation as JSON (`samplescope-cli explain`; docs/responses.md
// lists every key): what was assumed and where from, then one object per
// token, then the summary. -inf and unbounded values are written as null.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "engine/responses/explain.h"
#include "engine/responses/explain_setup.h"
#include "engine/responses/response.h"

namespace samplescope {

// One token; with its position, its "top" list too (the alternatives as the response shows them).
nlohmann::ordered_json token_explanation_to_json(const TokenExplanation& token, const ResponsePosition* position = nullptr);

// Everything but "tokens" (an empty array in its place) and the summary.
nlohmann::ordered_json explanation_header_to_json(const Response& response, const ExplainSetup& setup,
                                                  const ResponseExplanation& explanation);

// The whole document, its tokens written one at a time (engine/json/json_stream.h).
void write_explanation_json(std::ostream& out, const Response& response, const ExplainSetup& setup,
                            const ResponseExplanation& explanation);

}  // namespace samplescope
