#include "app/request_options.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>

#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/base/number_text.h"
#include "engine/core/stage.h"
#include "engine/io/logits_loader.h"
#include "engine/pipelines/sampler.h"
#include "engine/core/token_history.h"
#include "engine/io/vocabulary.h"

namespace samplescope {

namespace {

std::string flag_name(std::string_view key) {
    std::string flag = "--";
    for (const char c : key) flag.push_back(c == '_' ? '-' : c);
    return flag;
}

std::string trim(std::string_view text) {
    std::size_t begin = 0;
    std::size_t end = text.size();
    while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
    while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
    return std::string(text.substr(begin, end - begin));
}

// Items separated by commas or white space; an empty field between two commas
// (or before the first) is refused rather than dropped, so ids never shift.
std::vector<std::string> split_list(const std::string& text, const char* field) {
    std::vector<std::string> items;
    std::string current;
    bool field_open = true;  // no item since the last comma (or the start)
    std::optional<std::size_t> empty_at;  // the first empty field's position
    const auto flush = [&]() {
        const std::string item = trim(current);
        if (!item.empty()) {
            items.push_back(item);
            field_open = false;
        }
        current.clear();
    };
    for (const char c : text) {
        if (c == ',') {
            flush();
            if (field_open && !empty_at) empty_at = items.size();
            field_open = true;
        } else if (c == ' ' || c == '\t' || c == '\n') {
            flush();
        } else {
            current.push_back(c);
        }
    }
    flush();
    // Nothing but separators is no values at all (the contract's V = 0 message).
    if (empty_at && !items.empty()) {
        throw InputError(field, std::string(field) + " has an empty field at position " + std::to_string(*empty_at) +
                                    " in \"" + text + "\"");
    }
    return items;
}

}  // namespace

CLI::Validator non_empty_value() {
    return CLI::Validator(
        [](std::string& value) -> std::string {
            return trim(value).empty() ? std::string("the value is empty; give one or leave the flag out") : std::string();
        },
        "", "non-empty");
}

void add_request_options(CLI::App& app, RequestOptions& options) {
    app.add_option("--logits", options.logits_file,
                   "Logits file: .npy (f16/bf16/f32/f64), .safetensors (F16/BF16/F32/F64), JSON, or plain "
                   "text/CSV/TSV (numbers, or label<TAB>logit lines); 1-D, 2-D [B, V] (pick with --row) or "
                   "3-D [B, T, V] (the last position is taken)");
    app.add_option("--tensor", options.tensor,
                   "The .safetensors tensor to load (default: the only one, else \"logits\")");
    app.add_option("--vocab", options.vocab_file,
                   "Token labels: a tokenizer.json, vocab.json, vocab.txt or .gguf (metadata only)");
    app.add_flag("--u2-as-bf16", options.u2_as_bf16, "Read .npy uint16 data (<u2, >u2) as bfloat16 bits");
    app.add_option("--values", options.values, "Logits typed inline, comma separated, e.g. \"1,3,2,3,-1\"");
    app.add_option("--row", options.row, "Row of a 2-D logits file (default 0)")->check(non_empty_value());
    add_param_options(app, options);
    app.add_option("--logit-bias", options.logit_bias,
                   "Added to the listed logits before the penalties, \"id:bias,id:bias\" (a bias of -inf bans the "
                   "id); read by the pipelines with a logit_bias step (llamacpp). Off when empty.");
    app.add_option("--dry-sequence-breakers", options.dry_sequence_breakers,
                   "DRY's sequence breakers as token ids: sequences separated by ';', the ids of one by ',' "
                   "(\"13;198,271\"). A repeat never reaches across one. Default none.");
    app.add_option("--mirostat-mu", options.mirostat_mu,
                   "Mirostat's state mu to start the request from, a finite number (default 2 x mirostat_tau): "
                   "give the mu_after of a step to continue from it")
        ->check(non_empty_value());
    app.add_option("--seed", options.seed, "Seed, a decimal integer in [0, 2^64-1]; chosen and reported when absent")
        ->check(non_empty_value());
    app.add_option("--prompt-ids", options.prompt_ids, "Prompt ids, e.g. \"1,2,2\" (repetition penalty)");
    app.add_option("--output-ids", options.output_ids,
                   "Ids generated so far, e.g. \"3,3\" (all three penalties)");
    app.add_option("--skip-draws", options.skip_draws,
                   "Discard this many uniforms of the stream first, 0 to 2^64-2 (an O(log n) jump)")
        ->check(non_empty_value());
    app.add_option("--max-memory", options.max_memory,
                   "Memory the whole run may use, e.g. 4G or 512M (default: half of the smaller of physical "
                   "memory and the address-space limit)")
        ->check(non_empty_value());
}

void add_param_options(CLI::App& app, RequestOptions& options) {
    for (const auto& info : kParams) {
        auto* option = app.add_option(flag_name(info.key), options.param_text[std::string(info.key)],
                                      std::string(info.formula) + " Valid: " + std::string(info.valid_range) + ".");
        option->default_str(format_number(info.default_value));
        option->check(non_empty_value());
    }
}

namespace {

// One parameter flag's text into `params`: a number (refused naming the flag
// otherwise), checked by the table, an integer read exactly.
Param apply_param_text(SamplingParams& params, const std::string& key, const std::string& text) {
    const auto param = param_from_key(key);
    if (!parse_real(trim(text))) throw InputError(key, key + " must be a number, got \"" + text + "\"");
    if (real_overflows(trim(text))) {
        throw InputError(key, key + " must be a number, got \"" + text + "\" (outside the range of a double)");
    }
    set_param_text(params, *param, trim(text));
    return *param;
}

}  // namespace

std::vector<std::pair<Param, double>> given_params(const RequestOptions& options) {
    std::vector<std::pair<Param, double>> out;
    SamplingParams checked;
    for (const auto& [key, text] : options.param_text) {
        if (text.empty()) continue;
        const Param param = apply_param_text(checked, key, text);
        out.emplace_back(param, param_value(checked, param));
    }
    return out;
}

bool has_logits_input(const RequestOptions& options) { return !options.logits_file.empty() || !options.values.empty(); }

std::vector<double> parse_value_list(const std::string& text) {
    std::vector<double> values;
    for (const auto& item : split_list(text, "values")) {
        const auto value = parse_real(item);
        if (!value) throw InputError("values", "values must be numbers, got \"" + item + "\"");
        values.push_back(*value);
    }
    return values;
}

void resolve_param_flags(const RequestOptions& options, std::size_t vocab, ResolvedRequest& out) {
    for (const auto& [key, text] : options.param_text) {
        if (!text.empty()) apply_param_text(out.params, key, text);
    }
    if (!options.seed.empty()) out.params.seed = parse_seed(trim(options.seed));
    if (!options.mirostat_mu.empty()) {
        const auto mu = parse_real(trim(options.mirostat_mu));
        if (!mu || !std::isfinite(*mu) || real_overflows(trim(options.mirostat_mu))) {
            throw InputError("mirostat_mu", "mirostat_mu must be a finite number, got \"" + options.mirostat_mu + "\"");
        }
        out.mirostat_mu = *mu;
    }
    out.params.logit_bias = parse_logit_bias(options.logit_bias);
    check_logit_bias(out.params.logit_bias, vocab);
    out.params.dry_sequence_breakers = parse_dry_sequence_breakers(options.dry_sequence_breakers);
    check_dry_sequence_breakers(out.params.dry_sequence_breakers, vocab);
}

ResolvedRequest resolve_request(const RequestOptions& options) {
    ResolvedRequest out;
    std::vector<std::int64_t> file_prompt_ids;  // ids the logits file carries, used when no flag gives them
    std::vector<std::int64_t> file_output_ids;
    if (!options.logits_file.empty() && !options.values.empty()) {
        throw InputError("logits", "give either --logits or --values, not both");
    }
    out.memory_budget = parse_memory_budget(trim(options.max_memory));
    const std::int64_t row = options.row.empty() ? 0
                                                 : parse_int_in_range(trim(options.row), "row", "--row", 0,
                                                                      std::numeric_limits<std::int64_t>::max());
    out.skip_draws = options.skip_draws.empty()
                         ? 0
                         : parse_uint_in_range(trim(options.skip_draws), "skip_draws", "--skip-draws", 0,
                                               std::numeric_limits<std::uint64_t>::max());
    // Every command takes at least one draw after the skipped ones.
    check_draw_counter(out.skip_draws, 1, "skip_draws");
    if (!options.logits_file.empty()) {
        LoadOptions load;
        load.memory_limit_bytes = out.memory_budget;
        load.tensor = options.tensor;
        load.u2_as_bfloat16 = options.u2_as_bf16;
        LogitsMatrix matrix = load_logits_file(options.logits_file, load);
        if (static_cast<std::uint64_t>(row) >= matrix.rows) {
            throw InputError("row", "--row " + std::to_string(row) + " is outside [0, " +
                                        std::to_string(matrix.rows) + ") for " + options.logits_file);
        }
        out.logits = matrix.row(static_cast<std::size_t>(row));
        out.labels = std::move(matrix.labels);
        out.notes = std::move(matrix.notes);
        file_prompt_ids = std::move(matrix.prompt_ids);
        file_output_ids = std::move(matrix.output_ids);
    } else if (!options.values.empty()) {
        out.logits = parse_value_list(options.values);
    } else {
        throw InputError("logits", "no logits: give --logits FILE or --values \"1,3,2\"");
    }
    resolve_param_flags(options, out.logits.size(), out);
    out.prompt_ids = options.prompt_ids.empty() ? file_prompt_ids : parse_id_list(options.prompt_ids, "prompt_ids");
    out.output_ids = options.output_ids.empty() ? file_output_ids : parse_id_list(options.output_ids, "output_ids");
    if (!options.vocab_file.empty()) {
        VocabularyLabels labels = token_labels(load_vocabulary(options.vocab_file), out.logits.size());
        out.labels = std::move(labels.labels);
        out.warnings.insert(out.warnings.end(), labels.warnings.begin(), labels.warnings.end());
    }
    check_logits(out.logits);
    check_memory(trace_memory_estimate(out.logits.size(), 1, false, true), out.memory_budget,
                 "one trace of V = " + std::to_string(out.logits.size()));
    return out;
}

std::uint64_t trace_memory_estimate(std::size_t vocab, std::uint64_t steps, bool full, bool kept_json) {
    const auto v = static_cast<std::uint64_t>(vocab);
    // Measured peaks (docs/loaders.md): about 200 bytes per id for one trace
    // at V = 10^6, with or without --full. The estimate stays above them: a
    // fixed 48 MiB for the process and its reading, about 40 V-long vectors
    // of doubles and ids inside the engine, and a step's JSON (an nlohmann
    // value is 16 bytes plus its share of containers and text): the kept ids,
    // probabilities, cumulative sums and labels of the top level, and the one
    // stage being written (its kept ids and probabilities, and with --full its
    // logits; engine/json/json_stream.h writes a trace one stage at a time).
    constexpr std::uint64_t kBase = 48ULL << 20;
    const std::uint64_t working = saturating_mul(v, 40 * 8);
    const std::uint64_t json_per_step = saturating_mul(v, full ? 9 * 80 : 8 * 80);
    const std::uint64_t held_steps = kept_json ? steps : 1;
    return saturating_add(saturating_add(kBase, working), saturating_mul(json_per_step, held_steps));
}

}  // namespace samplescope
