// Loading a response: the format is told by the file (docs/responses.md
// lists each format's fields and where they were read). Every failure is an
// InputError whose one line names the file, the field and its position;
// loading returns a new object, so a failed load leaves the caller's as it was.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/io/vocabulary.h"
#include "engine/responses/response.h"

namespace samplescope {

struct ResponseLoadOptions {
    std::size_t choice = 0;  // which of choices[] (OpenAI) or outputs[] (vLLM) when there are several
    // A logprobs mode the caller names (kLogprobModes): a logit mode reads the
    // numbers as logits, so a vLLM server run with raw_logits is read as such.
    std::string logprobs_mode;
    std::string tensor;                        // HF .safetensors: "scores" or "logits" (default: the one it holds)
    std::vector<std::int64_t> generated_ids;   // HF: the generated ids (default: the file's output_ids)
    std::uint64_t memory_limit_bytes = 0;      // 0: the default budget (engine/base/memory_budget.h)
};

// By extension (.npy and .safetensors: HF rows), else by content: a `data:`
// stream of chunks, a JSON array of chunks, or one JSON object (a whole
// response, or {"request": ..., "response": ...}).
Response load_response_file(const std::string& path, const ResponseLoadOptions& options = {});
Response load_response_bytes(std::string_view bytes, const std::string& source, const ResponseLoadOptions& options = {});

// Fills the text of tokens that have an id but no text (HF rows) from a
// vocabulary, and rebuilds Response::text.
void label_response(Response& response, const Vocabulary& vocabulary);

}  // namespace samplescope
