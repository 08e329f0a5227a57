// `samplescope-cli verify`: a sampler's own draws against the exact q of the
// pipeline it claims (engine/stats/verification.h; docs/verify.md).
#include <iostream>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "app/cli/commands.h"
#include "app/cli/pipeline_options.h"
#include "app/request_options.h"
#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/base/number_text.h"
#include "engine/io/logits_loader.h"
#include "engine/io/samples_reader.h"
#include "engine/json/params_json.h"
#include "engine/json/verify_json.h"
#include "engine/stats/verification.h"

namespace samplescope::cli {

namespace {

struct VerifyFlags {
    std::string samples_file;
    std::string params_file;
    double alpha = kDefaultVerifyAlpha;
    bool plan = false;
    double tv = 0.0;
    bool engine_defaults = false;
};

std::string trimmed(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return std::string(text);
}

// --params gives every row its parameters: a parameter flag beside it would
// be silently dropped, so it is refused, naming the first one.
void refuse_flags_beside_params(const RequestOptions& options, const VerifyFlags& flags) {
    const auto refuse = [&flags](const std::string& field, const std::string& flag, const std::string& text) {
        throw InputError(field, flag + (text.empty() ? "" : " \"" + text + "\"") + " cannot be given with --params " +
                                    flags.params_file + ": the file sets every row's parameters" +
                                    (text.empty() ? "" : " (put it there)"));
    };
    for (const auto& [key, text] : options.param_text) {
        if (text.empty()) continue;
        std::string flag = "--";
        for (const char c : key) flag.push_back(c == '_' ? '-' : c);
        refuse(key, flag, text);
    }
    const std::pair<const char*, const std::string*> others[] = {
        {"seed", &options.seed},
        {"logit_bias", &options.logit_bias},
        {"dry_sequence_breakers", &options.dry_sequence_breakers},
        {"mirostat_mu", &options.mirostat_mu},
        {"prompt_ids", &options.prompt_ids},
        {"output_ids", &options.output_ids},
        {"skip_draws", &options.skip_draws},
        {"row", &options.row},
    };
    for (const auto& [key, text] : others) {
        if (text->empty()) continue;
        std::string flag = "--";
        for (const char* c = key; *c; ++c) flag.push_back(*c == '_' ? '-' : *c);
        refuse(key, flag, *text);
    }
    if (flags.engine_defaults) refuse("engine-defaults", "--engine-defaults", "");
}

// The rows to verify: every row of the logits with --params (or when the
// draws have as many rows), else the one row the flags pick. With
// `samples_file`, the draws are read once the logits are, and the memory
// budget covers both.
std::vector<SamplerRow> gather_rows(RequestOptions& options, const VerifyFlags& flags, const Pipeline& pipeline,
                                    const std::string& samples_file) {
    if (!flags.params_file.empty()) refuse_flags_beside_params(options, flags);
    ResolvedRequest input = resolve_request(options);  // validates every flag
    if (flags.engine_defaults) apply_engine_defaults(options, pipeline, input);
    LogitsMatrix matrix;
    if (!options.logits_file.empty()) {
        LoadOptions load;
        load.memory_limit_bytes = input.memory_budget;
        load.tensor = options.tensor;
        load.u2_as_bfloat16 = options.u2_as_bf16;
        matrix = load_logits_file(options.logits_file, load);
    } else {
        matrix.rows = 1;
        matrix.cols = input.logits.size();
        matrix.values = input.logits;
    }
    std::optional<SampleRows> samples;
    if (!samples_file.empty()) {
        // What the run holds by then and while verifying: the process and one
        // trace (trace_memory_estimate), the matrix, each row's copy, and each
        // row's exact trace (about 48 bytes an id).
        const std::uint64_t logits_bytes = saturating_add(trace_memory_estimate(matrix.cols, 1, false, false),
                                                          saturating_mul(matrix.values.size(), 8 + 8 + 48));
        samples = load_samples_file(samples_file, input.memory_budget, logits_bytes);
    }
    const std::size_t sample_rows = samples ? samples->rows.size() : 0;
    const RowRequest flag_request{input.params, input.prompt_ids, input.output_ids, input.skip_draws};
    std::vector<SamplerRow> rows;
    if (!flags.params_file.empty()) {
        const std::vector<RowRequest> requests = load_row_requests_file(flags.params_file, matrix.rows);
        for (std::size_t r = 0; r < matrix.rows; ++r) rows.push_back({matrix.row(r), requests[r], r, {}});
    } else if (samples && sample_rows == matrix.rows && sample_rows > 1) {
        for (std::size_t r = 0; r < matrix.rows; ++r) rows.push_back({matrix.row(r), flag_request, r, {}});
    } else {
        // resolve_request has checked --row already.
        const std::string typed = trimmed(options.row);
        const auto row = typed.empty() ? std::uint64_t{0} : parse_uint_in_range(typed, "row", "--row", 0, UINT64_MAX);
        rows.push_back({input.logits, flag_request, static_cast<std::size_t>(row), {}});
    }
    if (samples) {
        if (sample_rows != rows.size()) {
            throw InputError("samples", "samples: " + samples_file + " has " + std::to_string(sample_rows) +
                                            " rows of draws, the logits give " + std::to_string(rows.size()) +
                                            " rows to verify (one row of draws per logits row)");
        }
        for (std::size_t r = 0; r < rows.size(); ++r) rows[r].samples = std::move(samples->rows[r]);
    }
    return rows;
}

}  // namespace

Command add_verify_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "verify", "Check a sampler's own draws against the exact q of the pipeline it claims: support, G-test, "
                  "tail test and power, per row, as JSON (exit 0 pass, 1 fail, 2 bad input)");
    auto options = std::make_shared<RequestOptions>();
    auto pipeline_options = std::make_shared<PipelineOptions>();
    auto flags = std::make_shared<VerifyFlags>();
    add_request_options(*command, *options);
    add_pipeline_options(*command, *pipeline_options);
    command->add_option("--samples", flags->samples_file,
                        "The sampler's draws: .npy int32/int64 [N] or [B, N], or text (one id a line, or one row "
                        "of ids a line)");
    command->add_option("--params", flags->params_file,
                        "Per-row parameters: a JSON list with one object per logits row (as `batch --params`)");
    command->add_option("--alpha", flags->alpha, "Significance level of the batch verdict (default 0.001)");
    command->add_flag("--plan", flags->plan, "Print the number of draws needed to detect --tv instead of verifying");
    command->add_option("--tv", flags->tv, "With --plan: the total-variation distance to detect with power 0.9");
    command->add_flag("--engine-defaults", flags->engine_defaults,
                      "Start from the pipeline's own parameter defaults (flags given still win)");
    command->footer(
        "JSON: verdict, pipeline, alpha, power, rows (row, verdict, samples, kept_count, ignored_params, "
        "support_violations, "
        "outside_ids, g_statistic, degrees_of_freedom, bins, p_value, p_value_holm, tail (ids, ids_below_2_24, "
        "mass, observed, expected, p_value, p_value_holm), detectable_tv, level, largest_deviations). "
        "With --plan: samples_needed per row and overall. docs/verify.md explains each.");

    return {command, [options, pipeline_options, flags, command]() {
        if (!(flags->alpha > 0.0 && flags->alpha < 1.0)) {
            throw InputError("alpha", "alpha must be in (0, 1), got " + format_number(flags->alpha));
        }
        const Pipeline pipeline = resolve_pipeline(*pipeline_options);
        if (flags->plan) {
            if (!flags->samples_file.empty()) {
                throw InputError("samples", "--plan verifies no draws: leave out --samples " + flags->samples_file);
            }
            if (!(flags->tv > 0.0 && flags->tv <= 1.0)) {
                throw InputError("tv", "--plan needs --tv in (0, 1], got " + format_number(flags->tv));
            }
            const std::vector<SamplerRow> rows = gather_rows(*options, *flags, pipeline, "");
            const std::vector<PipelineTrace> exact = exact_distributions(pipeline, rows);
            std::vector<std::size_t> indices;
            for (const auto& row : rows) indices.push_back(row.row);
            std::cout << verify_plan_to_json(exact, indices, flags->tv, flags->alpha, pipeline).dump(2) << "\n";
            return 0;
        }
        if (command->count("--tv") > 0) {
            throw InputError("tv", "--tv " + format_number(flags->tv) + " is read only with --plan");
        }
        if (flags->samples_file.empty()) {
            throw InputError("samples", "no draws: give --samples FILE (or --plan --tv D for the draws needed)");
        }
        const std::vector<SamplerRow> rows = gather_rows(*options, *flags, pipeline, flags->samples_file);
        const SamplerVerification verification = verify_sampler(pipeline, rows, flags->alpha);
        std::cout << verification_to_json(verification, pipeline).dump(2) << "\n";
        return verification.result.pass ? 0 : 1;
    }};
}

}  // namespace samplescope::cli
