// The input and parameter flags shared by `samplescope-cli trace` (and its
// sibling commands) and `samplescope --screenshot`: one definition, generated
// from the engine's parameter table.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/core/sampling_params.h"

namespace samplescope {

struct RequestOptions {
    std::string logits_file;
    std::string values;
    std::int64_t row = 0;
    std::map<std::string, std::string> param_text;  // flag key -> text as typed
    std::string seed;
    std::string prompt_ids;
    std::string output_ids;
    std::uint64_t skip_draws = 0;
    std::string tensor;       // --tensor: the .safetensors tensor to load
    std::string vocab_file;   // --vocab: tokenizer.json, vocab.json, vocab.txt or .gguf
    bool u2_as_bf16 = false;  // --u2-as-bf16: read .npy uint16 data as bfloat16 bits
};

struct ResolvedRequest {
    std::vector<double> logits;
    std::vector<std::string> labels;  // V labels from --vocab, else the file's own; empty when none
    SamplingParams params;
    std::vector<std::int64_t> prompt_ids;
    std::vector<std::int64_t> output_ids;
    std::uint64_t skip_draws = 0;
    std::vector<std::string> warnings;  // accepted, but worth telling (a vocabulary of another size)
    std::vector<std::string> notes;     // what the loader chose (the tensor, the position taken)
};

void add_request_options(CLI::App& app, RequestOptions& options);

// Whether any input or parameter flag was given.
bool has_logits_input(const RequestOptions& options);

// Parses logits such as "1,3,2,3,-1" ("-inf" allowed); throws InputError.
std::vector<double> parse_value_list(const std::string& text);

// Loads the logits and validates every flag; throws InputError with the
// contract's one-line message.
ResolvedRequest resolve_request(const RequestOptions& options);

}  // namespace samplescope
