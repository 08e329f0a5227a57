// Writes examples/data/ and tests/fuzz/corpus/ under the repository root given
// as the only argument: `make_example_data .` from a checkout.
#include <filesystem>
#include <iostream>

#include "engine/io/npy_writer.h"
#include "tests/support/example_data.h"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: make_example_data REPOSITORY_ROOT\n";
        return 2;
    }
    const std::filesystem::path root(argv[1]);
    try {
        for (auto* files : {&samplescope::testing::example_data_files, &samplescope::testing::fuzz_seed_files}) {
            for (const auto& [path, bytes] : (*files)()) {
                const auto target = root / path;
                std::filesystem::create_directories(target.parent_path());
                samplescope::write_file_bytes(target.string(), bytes);
                std::cout << path << " (" << bytes.size() << " bytes)\n";
            }
        }
    } catch (const std::exception& error) {
        std::cerr << "make_example_data: " << error.what() << "\n";
        return 1;
    }
    return 0;
}
