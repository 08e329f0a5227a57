#include "app/request_options.h"

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "engine/core/input_error.h"
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

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::string current;
    for (const char c : text) {
        if (c == ',' || c == ' ' || c == '\t' || c == '\n') {
            if (!trim(current).empty()) items.push_back(trim(current));
            current.clear();
        } else {
            current.push_back(c);
        }
    }
    if (!trim(current).empty()) items.push_back(trim(current));
    return items;
}

// strtod accepts "nan", "inf" and hex floats, so NaN and inf reach the
// contract's checks and get its messages rather than a parse error.
std::optional<double> parse_double(const std::string& text) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) return std::nullopt;
    return value;
}

}  // namespace

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
    app.add_option("--row", options.row, "Row of a 2-D logits file (default 0)");
    for (const auto& info : kParams) {
        auto* option = app.add_option(flag_name(info.key), options.param_text[std::string(info.key)],
                                      std::string(info.formula) + " Valid: " + std::string(info.valid_range) + ".");
        option->default_str(format_number(info.default_value));
    }
    app.add_option("--seed", options.seed, "Seed, a decimal integer in [0, 2^64-1]; chosen and reported when absent");
    app.add_option("--prompt-ids", options.prompt_ids, "Prompt ids, e.g. \"1,2,2\" (repetition penalty)");
    app.add_option("--output-ids", options.output_ids,
                   "Ids generated so far, e.g. \"3,3\" (all three penalties)");
    app.add_option("--skip-draws", options.skip_draws, "Discard this many uniforms of the stream first");
}

bool has_logits_input(const RequestOptions& options) { return !options.logits_file.empty() || !options.values.empty(); }

std::vector<double> parse_value_list(const std::string& text) {
    std::vector<double> values;
    for (const auto& item : split_list(text)) {
        const auto value = parse_double(item);
        if (!value) throw InputError("values", "values must be numbers, got \"" + item + "\"");
        values.push_back(*value);
    }
    return values;
}

ResolvedRequest resolve_request(const RequestOptions& options) {
    ResolvedRequest out;
    std::vector<std::int64_t> file_prompt_ids;  // ids the logits file carries, used when no flag gives them
    std::vector<std::int64_t> file_output_ids;
    if (!options.logits_file.empty() && !options.values.empty()) {
        throw InputError("logits", "give either --logits or --values, not both");
    }
    if (!options.logits_file.empty()) {
        LoadOptions load;
        load.tensor = options.tensor;
        load.u2_as_bfloat16 = options.u2_as_bf16;
        LogitsMatrix matrix = load_logits_file(options.logits_file, load);
        if (options.row < 0 || static_cast<std::uint64_t>(options.row) >= matrix.rows) {
            throw InputError("row", "--row " + std::to_string(options.row) + " is outside [0, " +
                                        std::to_string(matrix.rows) + ") for " + options.logits_file);
        }
        out.logits = matrix.row(static_cast<std::size_t>(options.row));
        out.labels = std::move(matrix.labels);
        out.notes = std::move(matrix.notes);
        file_prompt_ids = std::move(matrix.prompt_ids);
        file_output_ids = std::move(matrix.output_ids);
    } else if (!options.values.empty()) {
        out.logits = parse_value_list(options.values);
    } else {
        throw InputError("logits", "no logits: give --logits FILE or --values \"1,3,2\"");
    }
    for (const auto& [key, text] : options.param_text) {
        if (text.empty()) continue;
        const auto param = param_from_key(key);
        const auto value = parse_double(trim(text));
        if (!value) throw InputError(key, key + " must be a number, got \"" + text + "\"");
        set_param(out.params, *param, *value);
    }
    if (!options.seed.empty()) out.params.seed = parse_seed(trim(options.seed));
    out.prompt_ids = options.prompt_ids.empty() ? file_prompt_ids : parse_id_list(options.prompt_ids, "prompt_ids");
    out.output_ids = options.output_ids.empty() ? file_output_ids : parse_id_list(options.output_ids, "output_ids");
    if (!options.vocab_file.empty()) {
        TokenLabels labels = token_labels(load_vocabulary(options.vocab_file), out.logits.size());
        out.labels = std::move(labels.labels);
        out.warnings.insert(out.warnings.end(), labels.warnings.begin(), labels.warnings.end());
    }
    out.skip_draws = options.skip_draws;
    check_logits(out.logits);
    return out;
}

}  // namespace samplescope
