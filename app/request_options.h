// The input and parameter flags shared by `samplescope-cli trace` (and its
// sibling commands) and `samplescope --screenshot`: one definition, generated
// from the engine's parameter table.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <cstddef>

#include <CLI/CLI.hpp>

#include "engine/core/sampling_params.h"

namespace samplescope {

struct RequestOptions {
    std::string logits_file;
    std::string values;
    std::string row;          // --row, as typed (empty: 0)
    std::map<std::string, std::string> param_text;  // flag key -> text as typed
    std::string seed;
    std::string logit_bias;   // --logit-bias "id:bias,...", as typed (empty: none)
    std::string dry_sequence_breakers;  // --dry-sequence-breakers "13;198,271", as typed (empty: none)
    std::string mirostat_mu;  // --mirostat-mu, mirostat's state to start from (empty: 2 tau)
    std::string prompt_ids;
    std::string output_ids;
    std::string skip_draws;   // --skip-draws, as typed (empty: 0)
    std::string max_memory;   // --max-memory, as typed (empty: the default budget)
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
    std::optional<double> mirostat_mu;  // a request's mirostat state, when given
    std::uint64_t memory_budget = 0;  // bytes the whole run may allocate (engine/base/memory_budget.h)
    std::vector<std::string> warnings;  // accepted, but worth telling (a vocabulary of another size)
    std::vector<std::string> notes;     // what the loader chose (the tensor, the position taken)
};

void add_request_options(CLI::App& app, RequestOptions& options);

// The parameter flags alone (--temperature ... generated from kParams), for a
// command without a logits row (`explain`): into options.param_text.
void add_param_options(CLI::App& app, RequestOptions& options);
// The parameters those flags give (flags left out are absent), checked by
// key in alphabetical order; throws InputError naming the key for a bad value.
std::vector<std::pair<Param, double>> given_params(const RequestOptions& options);

// Refuses an empty value ("--temperature ''"), which would otherwise read as
// the flag not given: CLI11 then exits 2 with "--flag: ...".
CLI::Validator non_empty_value();

// Whether any input or parameter flag was given.
bool has_logits_input(const RequestOptions& options);

// Parses logits such as "1,3,2,3,-1" ("-inf" allowed; an empty field between
// two commas is refused); throws InputError.
std::vector<double> parse_value_list(const std::string& text);

// Loads the logits and validates every flag; throws InputError with the
// contract's one-line message.
ResolvedRequest resolve_request(const RequestOptions& options);

// The parameter flags alone (the table's, the seed, mirostat's mu, the logit
// bias and DRY's breakers, their ids checked against `vocab`), into `out`:
// what a command that takes its rows from a model reads of the flags above.
void resolve_param_flags(const RequestOptions& options, std::size_t vocab, ResolvedRequest& out);

// The memory a run of `steps` traces of a V-id row needs, at most (the row, the
// stages' vectors and, when `kept_json`, every step's JSON held until printed).
std::uint64_t trace_memory_estimate(std::size_t vocab, std::uint64_t steps, bool full, bool kept_json);

}  // namespace samplescope
