// samplescope-cli: the reference sampler and the batch engine from a shell.
// Exit status: 0 on success, 2 with one line on stderr for any bad input.
#include <iostream>
#include <new>
#include <system_error>
#include <vector>

#include "app/cli/commands.h"
#include "engine/base/input_error.h"

int main(int argc, char** argv) {
    CLI::App app{"samplescope-cli: trace how a token is sampled, stage by stage", "samplescope-cli"};
    app.require_subcommand(1);
    app.set_help_all_flag("--help-all", "Show every subcommand's help");

    const std::vector<samplescope::cli::Command> commands{
        samplescope::cli::add_trace_command(app),
        samplescope::cli::add_diff_command(app),
        samplescope::cli::add_histogram_command(app),
        samplescope::cli::add_batch_command(app),
        samplescope::cli::add_compare_command(app),
        samplescope::cli::add_verify_command(app),
        samplescope::cli::add_generate_command(app),
        samplescope::cli::add_explain_command(app),
        samplescope::cli::add_speculate_command(app),
        samplescope::cli::add_beam_command(app),
    };

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& help) {
        return app.exit(help);
    } catch (const CLI::CallForAllHelp& help) {
        return app.exit(help);
    } catch (const CLI::ParseError& error) {
        std::cerr << "samplescope-cli: " << samplescope::escape_text(error.what()) << "\n";
        return 2;
    }
    // Every failure is one escaped line. Bad input and what the machine cannot
    // give (memory, a thread) exit 2; only an internal error exits 1.
    try {
        for (const auto& command : commands) {
            if (command.app->parsed()) return command.run();
        }
    } catch (const samplescope::InputError& error) {
        std::cerr << "samplescope-cli: " << error.what() << "\n";
        return 2;
    } catch (const std::bad_alloc&) {
        std::cerr << "samplescope-cli: out of memory (try a smaller input or a lower --max-memory)\n";
        return 2;
    } catch (const std::system_error& error) {
        std::cerr << "samplescope-cli: the system refused a resource: " << samplescope::escape_text(error.what()) << "\n";
        return 2;
    } catch (const std::exception& error) {
        std::cerr << "samplescope-cli: " << samplescope::escape_text(error.what()) << "\n";
        return 1;
    }
    return 2;
}
