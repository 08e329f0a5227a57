// `samplescope-cli batch`: every row of a [B, V] batch through the reference,
// the host twin or the CUDA backend; prints each row's result as JSON.
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/batch_inputs.h"
#include "app/cli/commands.h"
#include "kernels/tools/batch_reference.h"

namespace samplescope::cli {

Command add_batch_command(CLI::App& app) {
    auto* command = app.add_subcommand("batch", "Sample every row of a [B, V] batch on the reference, host twin or GPU");
    auto flags = std::make_shared<BatchFlags>();
    auto backend = std::make_shared<std::string>("auto");
    add_batch_flags(*command, *flags);
    command->add_option("--backend", *backend,
                        "reference (the CPU reference engine), host (the batch engine's host twin), cuda, or auto "
                        "(the GPU when one answers, else the host twin)")
        ->default_str("auto");
    command->footer(
        "JSON: backend (what really ran), device, note, mode, seconds, and rows: token, logprob, draws_consumed, "
        "kept_count per row.");

    return {command, [flags, backend]() {
        const LoadedBatch loaded = load_batch(*flags);
        const batch::BatchInput input = loaded.input();
        const batch::Mode mode = batch::parse_mode(flags->mode);
        batch::BatchOutput output;
        std::string ran;
        if (*backend == "reference") {
            output = batch::run_reference(input);
            ran = "reference";
        } else {
            batch::BatchOptions options;
            options.mode = mode;
            options.backend = batch::parse_backend(*backend);
            options.threads = batch_threads(*flags);
            output = batch::run_batch(input, options);
            ran = std::string(batch::backend_name(output.backend));
        }
        nlohmann::ordered_json json;
        json["backend"] = ran;
        json["device"] = output.device;
        if (!output.note.empty()) json["note"] = output.note;
        json["mode"] = *backend == "reference" ? "reference" : std::string(batch::mode_name(mode));
        json["source"] = loaded.source;
        json["rows_count"] = input.rows;
        json["vocab"] = input.vocab;
        json["seconds"] = output.seconds;
        auto rows = nlohmann::ordered_json::array();
        for (std::size_t r = 0; r < input.rows; ++r) {
            nlohmann::ordered_json row;
            row["row"] = r;
            row["token"] = output.token_at(r);
            row["logprob"] = output.logprob_at(r);
            row["draws_consumed"] = output.draws_after[r];
            row["kept_count"] = output.kept_count[r];
            row["seed"] = std::to_string(input.seed[r]);
            rows.push_back(row);
        }
        json["rows"] = rows;
        std::cout << json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return 0;
    }};
}

}  // namespace samplescope::cli
