#include "app/cli/model_options.h"

#include <limits>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"
#include "engine/core/token_history.h"
#include "engine/io/byte_source.h"
#include "engine/models/model_source.h"

namespace samplescope::cli {

void add_model_options(CLI::App& app, ModelOptions& options) {
    app.add_option("--model", options.model,
                   "The model: ngram (Debian's English trigram model; ngram:bigram and ngram:unigram condition on "
                   "fewer words) or rows (a recorded [T, V] logits file, --logits, row t at step t)")
        ->check(non_empty_value());
    app.add_option("--model-path", options.model_path,
                   "The n-gram model's file (sphinxbase trie format; default $SAMPLESCOPE_NGRAM_MODEL or "
                   "pocketsphinx-en-us's en-us.lm.bin)")
        ->check(non_empty_value());
    app.add_option("--prompt", options.prompt, "The text the model continues (an n-gram model's words)");
    app.add_option("--prompt-file", options.prompt_file,
                   "Read the prompt from a file (UTF-8 text, at most 1 MiB): for prompts longer than a command line")
        ->check(non_empty_value());
}

void add_model_file_options(CLI::App& app, RequestOptions& options) {
    app.add_option("--logits", options.logits_file, "The rows model's recorded [T, V] logits file (--model rows)")
        ->check(non_empty_value());
    app.add_option("--vocab", options.vocab_file, "The rows model's vocabulary (tokenizer.json, vocab.json, vocab.txt, .gguf)")
        ->check(non_empty_value());
    app.add_option("--tensor", options.tensor, "The .safetensors tensor of the rows model")->check(non_empty_value());
    app.add_option("--row", options.row, "The batch row of a [B, T, V] rows file (default 0)")->check(non_empty_value());
    app.add_option("--prompt-ids", options.prompt_ids, "The prompt as ids, e.g. \"1,2,2\"");
    app.add_option("--max-memory", options.max_memory, "Memory the whole run may use, e.g. 4G or 512M")
        ->check(non_empty_value());
}

std::shared_ptr<const LanguageModel> load_named_model(const std::string& kind, const std::string& path,
                                                      const RequestOptions& request, std::uint64_t memory_budget,
                                                      const std::string& flag, std::vector<std::string>& warnings) {
    ModelSpec spec = parse_model_spec(kind, flag);
    if (spec.kind == "rows") {
        if (!path.empty()) {
            throw InputError("model_path", "--model-path names an n-gram model; the rows model reads --logits FILE");
        }
        spec.path = request.logits_file;
        spec.vocab = request.vocab_file;
        spec.tensor = request.tensor;
        if (!request.row.empty()) {
            spec.batch_row = parse_uint_in_range(request.row, "row", "--row", 0, std::numeric_limits<std::uint64_t>::max());
        }
    } else {
        if (!request.logits_file.empty()) {
            throw InputError("logits", "--logits is a rows model's file; give --model rows to replay it");
        }
        spec.path = path;
    }
    LoadedModel loaded = load_model(spec, memory_budget);
    warnings.insert(warnings.end(), loaded.warnings.begin(), loaded.warnings.end());
    return loaded.model;
}

ModelInput resolve_model(const ModelOptions& options, const RequestOptions& request, std::uint64_t memory_budget) {
    if (!request.values.empty()) {
        throw InputError("values", "--values is one row; a generation takes its rows from --model");
    }
    const int prompts = !options.prompt.empty() + !options.prompt_file.empty() + !request.prompt_ids.empty();
    if (prompts > 1) throw InputError("prompt", "give one of --prompt, --prompt-file and --prompt-ids");
    std::string prompt = options.prompt;
    if (!options.prompt_file.empty()) {
        const FileSource file(options.prompt_file);
        if (file.size() > kMaxPromptBytes) {
            throw InputError("prompt_file", options.prompt_file + ": " + std::to_string(file.size()) +
                                                " bytes, more than the " + std::to_string(kMaxPromptBytes) +
                                                " a prompt may hold");
        }
        prompt = file.read_all(kMaxPromptBytes);
    }
    ModelInput out;
    out.model = load_named_model(options.model, options.model_path, request, memory_budget, "model", out.warnings);
    if (!request.prompt_ids.empty()) {
        const auto vocab = static_cast<std::int64_t>(out.model->vocab_size());
        const auto ids = parse_id_list(request.prompt_ids, "prompt_ids");
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (ids[i] < 0 || ids[i] >= vocab) {
                throw InputError("prompt_ids", "prompt id " + std::to_string(ids[i]) + " at position " +
                                                   std::to_string(i) + " is outside [0, " + std::to_string(vocab) + ")");
            }
            out.prompt.push_back({out.model->token_text(ids[i]), ids[i]});
        }
    } else if (!prompt.empty() || out.model->kind() != "rows") {
        out.prompt = out.model->tokenize(prompt);
    }
    return out;
}

}  // namespace samplescope::cli
