// The sampling parameters: their values (SamplingParams, the fields the
// engine, the kernels and the GUI read), and the one table of their names,
// defaults, off values, formulas and validation. The table's rows are written
// in the stage descriptors (engine/core/stage.h), each in its stage's own file
// (engine/stages/stage_*.cpp); this header reads them as kParams.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
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

// A field's default here must be its row's default_value (the registry checks
// both agree when the program first reads the table).
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
    // The list-valued parameters have no row in kParams (whose values are
    // numbers): each is a ListParamInfo of its stage's descriptor. Off when empty.
    // Ids are checked against V where V is known (check_logit_bias).
    std::vector<LogitBias> logit_bias;
    // DRY's sequence breakers: each an id sequence (its first id the head),
    // read by parse_dry_sequence_breakers from "13;198,271".
    std::vector<std::vector<std::int64_t>> dry_sequence_breakers;

    bool operator==(const SamplingParams&) const = default;
};

// The numeric parameters, in the order of the table: the contract's seven in
// the order the pipeline uses them, then llama.cpp's. A new one goes just
// above Count, with its field above and its row in its stage's descriptor.
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
    Count  // not a parameter: how many there are
};
inline constexpr std::size_t kParamCount = static_cast<std::size_t>(Param::Count);

// The parameters the contract (and the batch engine, as plain fields) has: the
// first rows of the table, fixed by docs/contract.md. The rest are read only by
// llama.cpp's extra stages.
inline constexpr std::size_t kContractParamCount = 7;

// What a parameter's badge says: the parameter panel shows it beside the
// control, the batch table greys a parameter that is not on.
struct ParamBadge {
    std::string text;     // "on", "off", "used", "unused", "greedy", "off (>= V)", "v2", ...
    bool on = false;      // it changes something now
    std::string summary;  // non-empty: the name the llama.cpp group's "on: ..." line lists
};

// How a parameter acts on its stage.
enum class ParamRole : int {
    // It switches its stage (or a part of it) on: its badge says "on" or "off",
    // and the batch engine refuses it when it is on and not the contract's.
    Switch,
    // It only shapes what a switch turned on: its badge says "used" or "unused".
    Shapes,
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
    std::string_view formula;    // the tooltip: what it does, as a formula
    std::string_view valid_range;  // as stated in error messages
    // Its field: one of the two is set.
    double SamplingParams::*real = nullptr;
    std::int64_t SamplingParams::*whole = nullptr;
    // Valid values: finite (and whole for an integer), >= min (> min when
    // min_open) and <= max. valid_range says the same in words.
    double min = -std::numeric_limits<double>::infinity();
    double max = std::numeric_limits<double>::infinity();
    bool min_open = false;
    bool contract = false;  // one of the contract's seven
    ParamRole role = ParamRole::Shapes;
    // Whether it changes something now (for V ids): a Switch's stage (or its
    // part) is on with it; a Shapes parameter's stage is on.
    bool (*on)(const SamplingParams& params, std::size_t vocab) = nullptr;
    // A Switch set away from its default that is still not on says why: "off (>= V)".
    std::string_view blocked = {};
    // The llama.cpp group's name for it while it is on ("XTC"), for a Switch outside the contract.
    std::string_view summary = {};
    // A badge the generic one cannot say (temperature's "greedy"); null: the generic one.
    ParamBadge (*badge)(const SamplingParams& params, std::size_t vocab) = nullptr;

    constexpr bool integer() const { return whole != nullptr; }
};

// A list-valued parameter (logit_bias, dry_sequence_breakers): a field of
// SamplingParams with its own syntax, read as text.
struct ListParamInfo {
    std::string_view key;      // JSON key; its flag is --key with '-' for '_'
    std::string_view label;
    std::string_view syntax;   // the text it reads, as error messages show it: "\"id:bias,...\""
    ParamRole role = ParamRole::Shapes;
    bool (*set)(const SamplingParams& params) = nullptr;       // not empty
    bool (*on)(const SamplingParams& params, std::size_t vocab) = nullptr;
    std::string (*text)(const SamplingParams& params) = nullptr;  // in the syntax parse reads
    // Reads `text` into the field; throws InputError(key) naming what is wrong.
    void (*parse)(SamplingParams& params, std::string_view text) = nullptr;
    // Throws InputError(key) for an id outside [0, V).
    void (*check)(const SamplingParams& params, std::size_t vocab) = nullptr;
    // Throws InputError(key) for what no V makes valid (validate() calls it).
    void (*validate)(const SamplingParams& params) = nullptr;
    std::string_view summary = {};
    ParamBadge (*badge)(const SamplingParams& params, std::size_t vocab) = nullptr;
};

// The table, built from the stage descriptors when first read, in Param order:
// `for (const auto& info : kParams)`, kParams[i], kParams.size().
struct ParamTable {
    const ParamInfo* begin() const;
    const ParamInfo* end() const;
    std::size_t size() const { return kParamCount; }
    const ParamInfo& operator[](std::size_t i) const { return begin()[i]; }
};
inline constexpr ParamTable kParams{};

// The list-valued parameters, in the order of their stages.
struct ListParamTable {
    const ListParamInfo* begin() const;
    const ListParamInfo* end() const;
    std::size_t size() const { return static_cast<std::size_t>(end() - begin()); }
};
inline constexpr ListParamTable kListParams{};

const ParamInfo& param_info(Param param);
std::optional<Param> param_from_key(std::string_view key);
const ListParamInfo* list_param_from_key(std::string_view key);

double param_value(const SamplingParams& params, Param param);
// Sets the value after validating it; throws InputError (and leaves params unchanged) when invalid.
void set_param(SamplingParams& params, Param param, double value);
// Whether the parameter holds its default.
bool param_is_default(const SamplingParams& params, Param param);

// An integer parameter (ParamInfo::integer) exactly as stored; param_value's
// double rounds past 2^53.
std::int64_t integer_param(const SamplingParams& params, Param param);
// Sets an integer parameter exactly; throws InputError naming the value when
// it is outside the parameter's range.
void set_integer_param(SamplingParams& params, Param param, std::int64_t value);
// Sets a parameter from text as typed (a flag, a keyword): an integer
// parameter is read exactly from its digits (parse_exact_integer, so 2^63-1
// and 1e18 are kept whole), a real one by parse_real; throws InputError
// quoting the text when it is not a valid value.
void set_param_text(SamplingParams& params, Param param, std::string_view text);

// The contract's one-line message when the value is not valid, else nothing.
std::optional<std::string> param_error(Param param, double value);

// Throws InputError for the first invalid field.
void validate(const SamplingParams& params);

// The badge a parameter shows for these values (V ids; 0 when unknown).
ParamBadge param_badge(const ParamInfo& info, const SamplingParams& params, std::size_t vocab);
ParamBadge list_param_badge(const ListParamInfo& info, const SamplingParams& params, std::size_t vocab);

// The generic badges the descriptors' rows build on.
ParamBadge switch_badge(bool set, bool on, std::string_view blocked, std::string_view summary);
ParamBadge shapes_badge(bool on);

// A setting the batch engine cannot run: the key and the value as typed.
struct ParamSetting {
    std::string key;
    std::string value;
};
// The first parameter outside the contract that switches something on (a
// Switch row or list, in table order, then the lists), or nothing when only
// the contract's stages are on. The batch engine runs the contract's stages
// only and refuses a row with one.
std::optional<ParamSetting> outside_contract_switch(const SamplingParams& params, std::size_t vocab);

// Whether a stage's parameter is switched on for a vocabulary of size V: each
// is its stage descriptor's gate (engine/core/stage.h stage_on).
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
bool uses_logit_bias(const SamplingParams& params);

// The logit bias as typed: "id:bias,id:bias" (white space around items
// allowed; empty text is no bias). Each id a decimal integer >= 0, each bias
// a finite number or -inf. Throws InputError("logit_bias") naming the first bad
// item and what in it is wrong. Entries are kept in the order given.
std::vector<LogitBias> parse_logit_bias(std::string_view text);
// The list in the syntax parse_logit_bias reads ("" when empty).
std::string format_logit_bias(const std::vector<LogitBias>& bias);
// Throws InputError("logit_bias") for the first id >= V.
void check_logit_bias(const std::vector<LogitBias>& bias, std::size_t vocab_size);
// Throws InputError("logit_bias") for a negative id or a bias neither finite nor -inf.
void validate_logit_bias(const std::vector<LogitBias>& bias);

// DRY's sequence breakers as typed: id sequences separated by ';', the ids of
// one by ',' ("13;198,271": the breaker 13 and the breaker 198 271). Empty
// text is none. Throws InputError("dry_sequence_breakers") naming the bad item.
std::vector<std::vector<std::int64_t>> parse_dry_sequence_breakers(std::string_view text);
std::string format_dry_sequence_breakers(const std::vector<std::vector<std::int64_t>>& breakers);
// Throws InputError("dry_sequence_breakers") for the first id >= V.
void check_dry_sequence_breakers(const std::vector<std::vector<std::int64_t>>& breakers, std::size_t vocab_size);
// Throws InputError("dry_sequence_breakers") for an empty breaker or a negative id.
void validate_dry_sequence_breakers(const std::vector<std::vector<std::int64_t>>& breakers);

// A seed for a request that did not give one (random, 64 bits).
std::uint64_t choose_seed();
// The request's seed, or a chosen one only when it gave none (choosing opens
// the system's random device: no run with a seed should pay for that).
std::uint64_t seed_or_chosen(const std::optional<std::uint64_t>& seed);

// Parses a decimal seed in [0, 2^64 - 1]; throws InputError naming the text.
std::uint64_t parse_seed(std::string_view text);

}  // namespace samplescope
