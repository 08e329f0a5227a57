// `samplescope-cli compare`: the reference against the batch engine on the same
// batch, with the contract's four counts (rows, equal, near-tie, mismatch).
#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/batch_inputs.h"
#include "app/cli/commands.h"
#include "app/request_options.h"
#include "engine/base/number_text.h"
#include "kernels/tools/batch_compare.h"

namespace samplescope::cli {

Command add_compare_command(CLI::App& app) {
    auto* command = app.add_subcommand("compare", "Compare the batch engine with the CPU reference, row by row");
    auto flags = std::make_shared<BatchFlags>();
    auto backend = std::make_shared<std::string>("auto");
    auto draws_text = std::make_shared<std::string>();
    auto verbose = std::make_shared<bool>(false);
    add_batch_flags(*command, *flags);
    command->add_option("--backend", *backend, "The batch engine's backend: host, cuda or auto")->default_str("auto");
    command->add_option("--draws", *draws_text,
                        "Fast mode: draws per row (0 to 2147483647) for a chi-square goodness-of-fit test against the reference's q")
        ->default_str("0")
        ->check(non_empty_value());
    command->add_flag("--rows", *verbose, "Also print one line per row (tokens, verdict, logprob difference, kept counts)");
    command->footer(
        "JSON: rows, equal, near_tie, mismatch (the near-tie rule of the contract, section 4), "
        "worst_logprob_difference, kept_mismatches, kept_near_ties, goodness_of_fit (fast mode with --draws), "
        "reference_seconds, engine_seconds, backend, device.");

    return {command, [flags, backend, draws_text, verbose]() {
        const std::int32_t draws =
            draws_text->empty() ? 0
                                : static_cast<std::int32_t>(parse_int_in_range(*draws_text, "draws", "--draws", 0,
                                                                               std::numeric_limits<std::int32_t>::max()));
        const LoadedBatch loaded = load_batch(*flags, static_cast<std::uint64_t>(std::max(draws, 1)));
        batch::CompareOptions options;
        options.mode = batch::parse_mode(flags->mode);
        options.backend = batch::parse_backend(*backend);
        options.draws = draws;
        options.threads = batch_threads(*flags);
        const batch::BatchComparison result = batch::compare_batch(loaded.input(), options);

        nlohmann::ordered_json json;
        json["mode"] = std::string(batch::mode_name(result.mode));
        json["backend"] = std::string(batch::backend_name(result.backend));
        json["device"] = result.device;
        if (!result.note.empty()) json["note"] = result.note;
        json["source"] = loaded.source;
        json["delta"] = result.tolerance.delta;
        json["rows"] = result.counts.rows;
        json["equal"] = result.counts.equal;
        json["near_tie"] = result.counts.near_tie;
        json["mismatch"] = result.counts.mismatch;
        json["worst_logprob_difference"] = result.worst_logprob_difference;
        json["kept_mismatches"] = result.kept_mismatches;
        json["kept_near_ties"] = result.kept_near_ties;
        if (result.fit) {
            json["goodness_of_fit"] = {{"rows", result.fit->rows},
                                       {"draws_per_row", result.fit->draws_per_row},
                                       {"chi_square", result.fit->statistic},
                                       {"dof", result.fit->dof},
                                       {"p_value", result.fit->p_value}};
        }
        json["reference_seconds"] = result.reference_seconds;
        json["engine_seconds"] = result.engine_seconds;
        if (*verbose) {
            auto rows = nlohmann::ordered_json::array();
            for (std::size_t r = 0; r < result.rows.size(); ++r) {
                const auto& row = result.rows[r];
                rows.push_back({{"row", r},
                                {"reference_token", row.reference_token},
                                {"engine_token", row.engine_token},
                                {"verdict", std::string(verdict_name(row.row))},
                                {"logprob_difference", row.logprob_difference},
                                {"reference_kept", row.reference_kept},
                                {"engine_kept", row.engine_kept}});
            }
            json["per_row"] = rows;
        }
        std::cout << json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return result.counts.mismatch == 0 ? 0 : 1;
    }};
}

}  // namespace samplescope::cli
