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
    std::int64_t min_keep = 1;        // llama.cpp's truncation samplers keep at least this many (0 acts as 1)
    double dynatemp_range = 0.0;      // off at 0
    double dynatemp_exponent = 1.0;
    double xtc_probability = 0.0;     // off at 0
    double xtc_threshold = 0.1;       // off above 0.5
    double dry_multiplier = 0.0;      // off at 0
    double dry_base = 1.75;
    std::int64_t dry_allowed_length = 2;
    std::int64_t dry_penalty_last_n = -1;  // -1: the whole history; 0: off
    std::int64_t mirostat = 0;        // 0 off, 1 or 2
    double mirostat_tau = 5.0;
    double mirostat_eta = 0.1;
    std::optional<std::uint64_t> seed;  // engine-chosen when absent
    // The one list-valued parameter, so it has no row in kParams: its flag
    // (--logit-bias "id:bias,...") and its JSON key are read by
    // parse_logit_bias below. Off when empty. Ids are checked against V where
    // V is known (check_logit_bias).
    std::vector<LogitBias> logit_bias;
    // DRY's sequence breakers, the other list: each an id sequence (its first
    // id the head), read by parse_dry_sequence_breakers from "13;198,271".
    std::vector<std::vector<std::int64_t>> dry_sequence_breakers;

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
    MinKeep,
    DynatempRange,
    DynatempExponent,
    XtcProbability,
    XtcThreshold,
    DryMultiplier,
    DryBase,
    DryAllowedLength,
    DryPenaltyLastN,
    Mirostat,
    MirostatTau,
    MirostatEta,
};

struct ParamInfo {
    Param param;
    std::string_view key;        // JSON key and CLI flag stem: "top_k" -> --top-k
    std::string_view label;      // shown next to the control
    // The default: also the off value of a parameter that switches a stage
    // (all but temperature); a parameter that only shapes a stage another
    // one switches (dry_base, xtc_threshold, mirostat_tau, ...) has
    // llama.cpp's default here.
    double default_value;
    double slider_min;           // a convenient range for a slider; entry boxes accept any valid value
    double slider_max;
    bool integer;
    std::string_view formula;    // the tooltip: what it does, as a formula
    std::string_view valid_range;  // as stated in error messages
};

inline constexpr std::array<ParamInfo, 21> kParams{{
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
    {Param::MinKeep, "min_keep", "Min keep", 1.0, 0.0, 20.0, true,
     "llama.cpp's top-p, min-p, typical-p and XTC keep at least this many ids (0 acts as 1). Default 1.",
     "an integer >= 0"},
    {Param::DynatempRange, "dynatemp_range", "Dyn. temp range", 0.0, 0.0, 2.0, false,
     "Dynamic temperature (llama.cpp): T' = lo + (hi - lo) x (H / log n)^exponent, lo = max(0, T - range), "
     "hi = T + range, H the entropy of q over the n candidates. Off at 0.",
     ">= 0 and finite"},
    {Param::DynatempExponent, "dynatemp_exponent", "Dyn. temp exponent", 1.0, 0.0, 3.0, false,
     "The exponent of the normalised entropy in dynamic temperature. Default 1.", ">= 0 and finite"},
    {Param::XtcProbability, "xtc_probability", "XTC probability", 0.0, 0.0, 1.0, false,
     "Exclude top choices (llama.cpp): with this probability, drop every id with q >= threshold but the least "
     "likely of them (when two or more qualify). Off at 0.",
     "in [0, 1]"},
    {Param::XtcThreshold, "xtc_threshold", "XTC threshold", 0.1, 0.0, 1.0, false,
     "The q an id needs to count as a top choice for XTC. Off above 0.5. Default 0.1.", "in [0, 1]"},
    {Param::DryMultiplier, "dry_multiplier", "DRY multiplier", 0.0, 0.0, 2.0, false,
     "Don't repeat yourself (llama.cpp): an id that would extend a repeat of length L >= allowed length loses "
     "multiplier x base^(L - allowed). Off at 0.",
     ">= 0 and finite"},
    {Param::DryBase, "dry_base", "DRY base", 1.75, 1.0, 3.0, false,
     "The base of DRY's penalty, growing with the repeat's length. Default 1.75.", ">= 1 and finite"},
    {Param::DryAllowedLength, "dry_allowed_length", "DRY allowed length", 2.0, 0.0, 10.0, true,
     "The longest repeat DRY lets pass unpenalised. Default 2.", "an integer >= 0"},
    {Param::DryPenaltyLastN, "dry_penalty_last_n", "DRY last N", -1.0, -1.0, 512.0, true,
     "How many of the last tokens DRY scans: -1 the whole history, 0 none (off). Default -1.",
     "an integer >= -1"},
    {Param::Mirostat, "mirostat", "Mirostat", 0.0, 0.0, 2.0, true,
     "Mirostat 1 or 2 (llama.cpp): keeps the surprise -log2 q of the drawn tokens near tau by a state mu "
     "(2 tau at the start, mu - eta (surprise - tau) after each token); replaces llama.cpp's truncation. Off at 0.",
     "0, 1 or 2"},
    {Param::MirostatTau, "mirostat_tau", "Mirostat tau", 5.0, 0.0, 10.0, false,
     "Mirostat's target surprise, in bits. Default 5.", ">= 0 and finite"},
    {Param::MirostatEta, "mirostat_eta", "Mirostat eta", 0.1, 0.0, 1.0, false,
     "Mirostat's learning rate for mu. Default 0.1.", ">= 0 and finite"},
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
bool uses_dynatemp(const SamplingParams& params);
bool uses_xtc(const SamplingParams& params);
bool uses_dry(const SamplingParams& params);
bool uses_mirostat(const SamplingParams& params);
// The first of llama.cpp's extra samplers (the parameters after
// kContractParamCount in table order, then the logit bias) that `params`
// switches on, as its key; nothing when only the contract's stages are on.
std::optional<std::string_view> extra_sampler_on(const SamplingParams& params);

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

// DRY's sequence breakers as typed: id sequences separated by ';', the ids of
// one by ',' ("13;198,271": the breaker 13 and the breaker 198 271). Empty
// text is none. Throws InputError("dry_sequence_breakers") naming the bad item.
std::vector<std::vector<std::int64_t>> parse_dry_sequence_breakers(std::string_view text);
std::string format_dry_sequence_breakers(const std::vector<std::vector<std::int64_t>>& breakers);
// Throws InputError("dry_sequence_breakers") for the first id >= V.
void check_dry_sequence_breakers(const std::vector<std::vector<std::int64_t>>& breakers, std::size_t vocab_size);

// A seed for a request that did not give one (random, 64 bits).
std::uint64_t choose_seed();

// Parses a decimal seed in [0, 2^64 - 1]; throws InputError naming the text.
std::uint64_t parse_seed(std::string_view text);

}  // namespace samplescope
