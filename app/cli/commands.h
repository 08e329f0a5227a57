// Each subcommand of samplescope-cli registers itself here and runs when chosen.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace samplescope::cli {

// A registered subcommand and what it does when chosen (returns the exit status).
struct Command {
    CLI::App* app;
    std::function<int()> run;
};

Command add_trace_command(CLI::App& app);
Command add_diff_command(CLI::App& app);
Command add_histogram_command(CLI::App& app);
Command add_batch_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_verify_command(CLI::App& app);
Command add_generate_command(CLI::App& app);
Command add_explain_command(CLI::App& app);
Command add_speculate_command(CLI::App& app);
Command add_beam_command(CLI::App& app);

}  // namespace samplescope::cli
