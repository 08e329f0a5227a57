// The sampling parameters: their names, defaults, off values, formulas and
// validation, in one table used by the engine, the kernels, the CLI and the GUI.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace samplescope {

// One entry of a logit bias: l[id] += bias (llama.cpp's llama_logit_bias).
struct LogitBias {
    std::int64_t id = 0;
    double bias = 0.0;  // finite, or -inf to ban the id

    bool operator==(const LogitBias&) const = default;
};

struct SamplingParams {
    double temperature = 1.0;         // 0 means greedy
    double repetition_penalty = 1.0;  // off at 1
    double presence_penalty = 0.0;    // off at 0
    double frequency_penalty = 0.0;   // off at 0
    std::int64_t top_k = 0;           // off at 0 or >= V
    double top_p = 1.0;               // off at >= 1
    double min_p = 0.0;               // off at 0
    double typical_p = 1.0;           // off at 1 (llama.cpp's typ_p)
    double top_n_sigma = -1.0;        // off at <= 0
    std::optional<std::uint64_t> seed;  // engine-chosen when absent
    // The one list-valued parameter, so it has no row in kParams: its flag
    // (--logit-bias "id:bias,...") and its JSON key are read by
    // parse_logit_bias below. Off when empty. Ids are checked against V where
    // V is known (check_logit_bias).
    std::vector<LogitBias> logit_bias;

    bool operator==(const SamplingParams&) const = default;
};

// The numeric parameters, in the order the pipeline uses them.
enum class Param : int {
    RepetitionPenalty,
    PresencePenalty,
    FrequencyPenalty,
    Temperature,
    TopK,
    TopP,
    MinP,
    // llama.cpp's extra samplers (docs/samplers.md); `spec` reads none of them.
    TypicalP,
    TopNSigma,
};

struct ParamInfo {
    Param param;
    std::string_view key;        // JSON key and CLI flag stem: "top_k" -> --top-k
    std::string_view label;      // shown next to the control
    double default_value;        // also the off value, except temperature
    double slider_min;           // a convenient range for a slider; entry boxes accept any valid value
    double slider_max;
    bool integer;
    std::string_view formula;    // the tooltip: what it does, as a formula
    std::string_view valid_range;  // as stated in error messages
};

inline constexpr std::array<ParamInfo, 9> kParams{{
    {Param::RepetitionPenalty, "repetition_penalty", "Repetition penalty", 1.0, 0.5, 2.0, false,
     "For ids in prompt or output: l / r if l > 0, else l * r. Off at 1.", "> 0 and finite"},
    {Param::PresencePenalty, "presence_penalty", "Presence penalty", 0.0, -2.0, 2.0, false,
     "For ids generated at least once: l - presence. Off at 0.", "finite"},
    {Param::FrequencyPenalty, "frequency_penalty", "Frequency penalty", 0.0, -2.0, 2.0, false,
     "For ids generated c times: l - frequency x c. Off at 0.", "finite"},
    {Param::Temperature, "temperature", "Temperature", 1.0, 0.0, 3.0, false,
     "l / T before truncation. T = 0 is greedy (argmax, no draw). Off at 1.", ">= 0 and finite"},
    {Param::TopK, "top_k", "Top-k", 0.0, 0.0, 200.0, true,
     "Keep the k largest logits (ties to the lower id). Off at 0 or k >= V.", "an integer >= 0"},
    {Param::TopP, "top_p", "Top-p", 1.0, 0.0, 1.0, false,
     "Keep the shortest ranked prefix whose probability mass reaches p (the crossing token stays). Off at 1.",
     "in [0, 1]"},
    {Param::MinP, "min_p", "Min-p", 0.0, 0.0, 1.0, false,
     "Keep ids with q >= min_p x max q over the kept set. Off at 0.", "in [0, 1]"},
    {Param::TypicalP, "typical_p", "Typical-p", 1.0, 0.0, 1.0, false,
     "Locally typical (llama.cpp): rank ids by |-log q - H|, H the entropy of q; keep the shortest prefix whose "
     "mass passes p. Off at 1.",
     "in [0, 1]"},
    {Param::TopNSigma, "top_n_sigma", "Top-n-sigma", -1.0, -1.0, 5.0, false,
     "Keep logits >= max l - n x sigma, sigma the standard deviation of the candidates' logits (llama.cpp). Off at "
     "n <= 0.",
     "finite"},
}};

// The parameters the contract (and the batch engine) has: the first rows of
// kParams. The rest are read only by llama.cpp's extra stages.
inline constexpr std::size_t kContractParamCount = 7;

constexpr const ParamInfo& param_info(Param param) { return kParams[static_cast<std::size_t>(param)]; }

std::optional<Param> param_from_key(std::string_view key);

double param_value(const SamplingParams& params, Param param);
// Sets the value after validating it; throws InputError (and leaves params unchanged) when invalid.
void set_param(SamplingParams& params, Param param, double value);

// The contract's one-line message when the value is not valid, else nothing.
std::optional<std::string> param_error(Param param, double value);

// Throws InputError for the first invalid field.
void validate(const SamplingParams& params);

// Whether a stage's parameter is switched on for a vocabulary of size V.
bool is_greedy(const SamplingParams& params);
bool uses_repetition_penalty(const SamplingParams& params);
bool uses_presence_frequency(const SamplingParams& params);
bool uses_temperature(const SamplingParams& params);
bool uses_top_k(const SamplingParams& params, std::size_t vocab_size);
bool uses_top_p(const SamplingParams& params);
bool uses_min_p(const SamplingParams& params);
bool uses_typical_p(const SamplingParams& params);
bool uses_top_n_sigma(const SamplingParams& params);

// The logit bias as typed: "id:bias,id:bias" (white space around items
// allowed; empty text is no bias). Each id a decimal integer >= 0, each bias
// a finite number or -inf. Throws InputError("logit_bias") naming the first bad
// item and what in it is wrong. Entries are kept in the order given.
std::vector<LogitBias> parse_logit_bias(std::string_view text);
// The list in the syntax parse_logit_bias reads ("" when empty).
std::string format_logit_bias(const std::vector<LogitBias>& bias);
// Throws InputError("logit_bias") for the first id >= V.
void check_logit_bias(const std::vector<LogitBias>& bias, std::size_t vocab_size);
bool uses_logit_bias(const SamplingParams& params);

// A seed for a request that did not give one (random, 64 bits).
std::uint64_t choose_seed();

// Parses a decimal seed in [0, 2^64 - 1]; throws InputError naming the text.
std::uint64_t parse_seed(std::string_view text);

}  // namespace samplescope
