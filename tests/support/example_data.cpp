#include "tests/support/example_data.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "engine/io/npy_writer.h"
#include "engine/io/safetensors_writer.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"
#include "tests/support/file_builders.h"

namespace samplescope::testing {

namespace {

// A byte-level BPE vocabulary: `Ġ` is a space, `Ċ` a newline, `ĉ` a tab.
const std::vector<std::string> kPieces{
    "!", "\"", "a", "\xC4\xA0the", "\xC4\xA0" "cat", "\xC4\xA0sat", "\xC4\x8A", "\xC4\xA0on",
    "\xC4\xA0mat", ".", "\xC4\xA0The", "\xC4\xA0" "dog", "\xC4\xA0ran", "\xC4\x89", "\xC4\xA0",
};
const std::vector<std::string> kAdded{"<|endoftext|>"};
const std::vector<std::string> kWordPieces{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat", "on",
                                           "mat", ".", "The", "dog", "ran", "##s", "##ed", "!"};
const std::vector<std::string> kSentencePieces{"<unk>", "<s>", "</s>", "<0x0A>", "<0x09>", "\xE2\x96\x81the",
                                               "\xE2\x96\x81" "cat", "\xE2\x96\x81sat", "\xE2\x96\x81on",
                                               "\xE2\x96\x81mat", ".", "\xE2\x96\x81The", "\xE2\x96\x81" "dog",
                                               "\xE2\x96\x81ran", "\xE2\x96\x81", "!"};
const std::vector<std::int64_t> kPromptIds{10, 4, 5, 7};
const std::vector<std::int64_t> kOutputIds{3};

std::vector<double> first_row() {
    const auto logits = example_logits();
    return {logits.begin(), logits.begin() + static_cast<std::ptrdiff_t>(kExampleVocab)};
}

std::vector<std::string> labels() {
    std::vector<std::string> out{"!", "\"", "a", " the", " cat", " sat", "\\n", " on", " mat", ".", " The", " dog", " ran", "\\t", " ", "<|endoftext|>"};
    return out;
}

std::string text_numbers(const std::vector<double>& values, std::size_t cols, const char* separator) {
    std::string out;
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double v = values[i];
        out += std::isinf(v) ? std::string("-inf") : nlohmann::json(v).dump();
        out += (i + 1) % cols == 0 ? "\n" : separator;
    }
    return out;
}

}  // namespace

std::vector<double> example_logits() {
    // Values with a few exact binary fractions so every dtype keeps them, a
    // near-tie and one -inf (a banned token).
    std::vector<double> out{
        -2.0, -3.5, 0.25, 4.0, 3.75, 1.5, 0.5, 2.0, 3.0, 1.0, 2.5, 3.5, 0.75, -1.0, 1.25, -std::numeric_limits<double>::infinity(),
        0.0, -1.5, 1.0, 2.0, 5.0, 4.5, 0.125, 1.75, 4.5, 2.25, 0.5, 3.25, 1.0, -0.5, 0.0, -4.0,
    };
    return out;
}

namespace {

// examples/responses/: what HF generate() returns for seven new tokens over the
// example vocabulary (" The cat sat on the mat."), saved as
// examples/dump_response_hf.py saves it: the raw logits with the ids and the
// prompt as .safetensors, and the processed scores as [T, V] .npy with the ids
// as text. The run used T = 0.7, top_p = 0.9 and generate()'s default top_k
// 50; hf_request.json says top_k 3, and the fifth token (rank 4) shows it.
void add_hf_response(GeneratedFiles& files) {
    const std::vector<std::int64_t> prompt{10, 11, 12};  // " The dog ran"
    const std::vector<std::int64_t> generated{10, 4, 5, 7, 3, 8, 9};
    std::vector<double> logits;
    for (std::size_t t = 0; t < generated.size(); ++t) {
        for (std::size_t v = 0; v < kExampleVocab; ++v) {
            logits.push_back(0.25 * static_cast<double>((v * 7 + t * 3) % 9) - 1.0);
        }
        double* row = logits.data() + t * kExampleVocab;
        row[15] = -std::numeric_limits<double>::infinity();  // <|endoftext|> banned
        row[generated[t]] = 3.0;
        if (t == 4) {  // three ids above " the": it is rank 4
            row[11] = 3.5;
            row[4] = 3.25;
            row[8] = 3.125;
        }
    }
    const auto add = [&](const std::string& name, std::string bytes) { files.emplace_back("examples/responses/" + name, std::move(bytes)); };
    add("hf_logits.safetensors",
        encode_safetensors({{"logits", {generated.size(), kExampleVocab}, logits, FloatType::F32, {}},
                            {"output_ids", {generated.size()}, {}, FloatType::F32, generated},
                            {"prompt_ids", {prompt.size()}, {}, FloatType::F32, prompt}}));
    // The processed scores: the row through HF's warpers (temperature, then top-p), -inf where cut.
    SamplingParams params;
    params.temperature = 0.7;
    params.top_p = 0.9;
    params.top_k = 50;
    params.seed = 0;
    std::vector<double> scores;
    for (std::size_t t = 0; t < generated.size(); ++t) {
        const std::vector<double> row(logits.begin() + static_cast<std::ptrdiff_t>(t * kExampleVocab),
                                      logits.begin() + static_cast<std::ptrdiff_t>((t + 1) * kExampleVocab));
        std::vector<std::int64_t> before(generated.begin(), generated.begin() + static_cast<std::ptrdiff_t>(t));
        const PipelineTrace trace = trace_pipeline_once(preset_pipeline("hf"), PipelineInput{row, params, prompt, before});
        const IdList& kept = trace.trace.final_kept();
        for (std::size_t v = 0; v < kExampleVocab; ++v) {
            const bool in = std::binary_search(kept.begin(), kept.end(), static_cast<std::int32_t>(v));
            scores.push_back(in ? row[v] / params.temperature : -std::numeric_limits<double>::infinity());
        }
    }
    add("hf_scores.npy", encode_npy({generated.size(), kExampleVocab}, scores, {{FloatType::F32, false}}));
    std::string ids;
    for (const auto id : generated) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    add("hf_generated_ids.txt", ids + "\n");
}

}  // namespace

GeneratedFiles example_data_files() {
    const auto logits = example_logits();
    const auto row = first_row();
    const std::vector<std::uint64_t> batch_shape{kExampleRows, kExampleVocab};
    const std::vector<std::uint64_t> row_shape{kExampleVocab};
    GeneratedFiles files;
    const auto add = [&](const std::string& name, std::string bytes) { files.emplace_back("examples/data/" + name, std::move(bytes)); };

    add("logits_f32.npy", encode_npy(batch_shape, logits, {{FloatType::F32, false}}));
    add("logits_f64_fortran.npy", encode_npy(batch_shape, logits, {{FloatType::F64, false}, true}));
    add("logits_f16_big_endian.npy", encode_npy(row_shape, row, {{FloatType::F16, true}}));
    add("logits_bf16.npy", encode_npy(batch_shape, logits, {{FloatType::BF16, false}}));
    add("logits_bf16_u2.npy", encode_npy(row_shape, row, {{FloatType::BF16, false}, false, Bfloat16Descr::Uint16}));

    add("logits_f32.safetensors", encode_safetensors({{"logits", row_shape, row, FloatType::F32, {}},
                                                       {"output_ids", {kOutputIds.size()}, {}, FloatType::F32, kOutputIds},
                                                       {"prompt_ids", {kPromptIds.size()}, {}, FloatType::F32, kPromptIds}}));
    add("logits_bf16.safetensors", encode_safetensors({{"logits", row_shape, row, FloatType::BF16, {}}}));
    // What model(...).logits gives for a 3-token prompt: [1, T, V]; the loader takes position T-1.
    std::vector<double> sequence;
    for (int t = 0; t < 3; ++t) {
        for (std::size_t v = 0; v < kExampleVocab; ++v) sequence.push_back(t == 2 ? row[v] : 0.5 * static_cast<double>(v) - t);
    }
    add("logits_f16_sequence.safetensors",
        encode_safetensors({{"logits", {1, 3, kExampleVocab}, sequence, FloatType::F16, {}}}));
    add("logits_f64_two_steps.safetensors",
        encode_safetensors({{"step0", row_shape, row, FloatType::F64, {}},
                            {"step1", row_shape, {logits.begin() + kExampleVocab, logits.end()}, FloatType::F64, {}}}));

    nlohmann::ordered_json doc;
    doc["logits"] = nlohmann::ordered_json::array();
    for (const double v : row) doc["logits"].push_back(std::isinf(v) ? nlohmann::ordered_json("-inf") : nlohmann::ordered_json(v));
    doc["tokens"] = labels();
    doc["prompt_ids"] = kPromptIds;
    doc["output_ids"] = kOutputIds;
    add("logits.json", doc.dump(1) + "\n");
    auto batch = nlohmann::ordered_json::array();
    for (std::size_t r = 0; r < kExampleRows; ++r) {
        auto json_row = nlohmann::ordered_json::array();
        for (std::size_t v = 0; v < kExampleVocab; ++v) {
            const double x = logits[r * kExampleVocab + v];
            json_row.push_back(std::isinf(x) ? nlohmann::ordered_json("-inf") : nlohmann::ordered_json(x));
        }
        batch.push_back(json_row);
    }
    add("logits_batch.json", batch.dump() + "\n");
    add("logits_batch.csv", "# two rows of logits, one per line\n" + text_numbers(logits, kExampleVocab, ","));
    add("logits_row.txt", text_numbers(row, 1, " "));
    std::string labelled = "# label<TAB>logit\n";
    const auto names = labels();
    for (std::size_t v = 0; v < kExampleVocab; ++v) {
        labelled += names[v] + "\t" + (std::isinf(row[v]) ? std::string("-inf") : nlohmann::json(row[v]).dump()) + "\n";
    }
    add("logits_labelled.tsv", labelled);

    add("tokenizer.json", tokenizer_json(kPieces, kAdded, true) + "\n");
    std::vector<std::string> with_added = kPieces;
    with_added.insert(with_added.end(), kAdded.begin(), kAdded.end());
    add("vocab.json", vocab_json(with_added) + "\n");
    std::string vocab_txt;
    for (const auto& piece : kWordPieces) vocab_txt += piece + "\n";
    add("vocab.txt", vocab_txt);
    add("tokenizer_unigram.json", unigram_tokenizer_json(kSentencePieces) + "\n");
    std::vector<std::int32_t> types(with_added.size(), 1);
    types.back() = 3;
    add("vocab.gguf", encode_gguf_vocab({with_added, "gpt2", types, true, 3}));
    add("vocab_sentencepiece.gguf", encode_gguf_vocab({kSentencePieces, "llama", {2, 3, 3, 6, 6}, false, 3}));
    add_hf_response(files);
    return files;
}

GeneratedFiles fuzz_seed_files() {
    GeneratedFiles files;
    const auto row = first_row();
    const auto add = [&](const std::string& target, const std::string& name, std::string bytes) {
        files.emplace_back("tests/fuzz/corpus/" + target + "/" + name, std::move(bytes));
    };
    // Every example file seeds the parser that reads it.
    for (auto& [path, bytes] : example_data_files()) {
        const std::string name = path.substr(path.rfind('/') + 1);
        std::string target;
        if (path.starts_with("examples/responses/")) target = "responses";
        else if (name.ends_with(".npy")) target = "npy";
        else if (name.starts_with("logits") && name.ends_with(".safetensors")) target = "safetensors";
        else if (name.starts_with("logits") && name.ends_with(".json")) target = "json_logits";
        else if (name.starts_with("logits")) target = "text_logits";
        else if (name.ends_with(".gguf")) target = "gguf_vocab";
        else if (name.ends_with(".json")) target = "tokenizer_json";
        else target = "vocab_txt";
        add(target, name, bytes);
    }
    // Shapes the examples lack: 3-D Fortran, a tiny f16 row, ids as I64.
    std::vector<double> cube(2 * 3 * 4);
    for (std::size_t i = 0; i < cube.size(); ++i) cube[i] = static_cast<double>(i) - 5.0;
    add("npy", "cube_fortran_f16.npy", encode_npy({2, 3, 4}, cube, {{FloatType::F16, false}, true}));
    add("npy", "row_big_f64.npy", encode_npy({3}, std::vector<double>{1, 2, 3}, {{FloatType::F64, true}}));
    add("safetensors", "cube_bf16.safetensors", encode_safetensors({{"x", {2, 3, 4}, cube, FloatType::BF16, {}}}));
    add("json_logits", "nested.json", "{\"meta\": {\"a\": [1, {\"b\": null}]}, \"logits\": [[1, \"-inf\"], [2, 3]]}");
    add("text_logits", "mixed.txt", "1e-400\t+2.5;3\n4,5,6\n");
    add("token_display", "byte_level.bin", std::string("\x01") + "\xC4\xA0hello\xC4\x8A\xE2\x80\x8B");
    add("token_display", "sentencepiece.bin", std::string("\x02") + "<0x0A>");
    add("token_display", "broken_utf8.bin", std::string("\x00\xE2\x96\x81x\xF0\x9F\x98", 8));
    return files;
}

}  // namespace samplescope::testing
