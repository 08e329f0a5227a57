// Dump the next-token logits of a prompt from llama.cpp for SampleScope.
//
// Decodes the prompt once and writes llama_get_logits_ith(ctx, -1) (the logits
// after the prompt's last token, n_vocab floats) as a 1-D little-endian f32
// .npy, and the prompt ids as comma-separated text. The labels come from the
// same GGUF file (SampleScope reads only its metadata).
//
//   c++ -std=c++17 dump_logits_llama.cpp -I llama.cpp/include -I llama.cpp/ggml/include \
//       -L llama.cpp/build/bin -lllama -o dump_logits_llama
//   ./dump_logits_llama model.gguf "The cat sat on the" step.npy
//   samplescope-cli trace --logits step.npy --vocab model.gguf --prompt-ids "$(cat step.npy.prompt_ids.txt)"
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "llama.h"

namespace {

// The .npy 1.0 layout: magic, version, header length, a dict padded so the
// data starts on a 64-byte boundary, then the raw values.
bool write_npy_f32(const std::string& path, const float* values, int count) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    const unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                      static_cast<unsigned char>(header.size() & 0xFF),
                                      static_cast<unsigned char>(header.size() >> 8)};
    out.write(reinterpret_cast<const char*>(prefix), sizeof prefix);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(values), static_cast<std::streamsize>(sizeof(float) * count));  // x86/ARM: little-endian
    return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s MODEL.gguf PROMPT OUT.npy\n", argv[0]);
        return 2;
    }
    const std::string prompt = argv[2];
    const std::string out_path = argv[3];

    llama_backend_init();
    llama_model* model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) return 1;
    const llama_vocab* vocab = llama_model_get_vocab(model);
    llama_context* ctx = llama_init_from_model(model, llama_context_default_params());
    if (!ctx) return 1;

    // A first call with no room returns minus the number of tokens needed.
    const int needed = -llama_tokenize(vocab, prompt.c_str(), static_cast<int32_t>(prompt.size()), nullptr, 0, true, true);
    std::vector<llama_token> ids(static_cast<size_t>(needed));
    llama_tokenize(vocab, prompt.c_str(), static_cast<int32_t>(prompt.size()), ids.data(), needed, true, true);

    if (llama_decode(ctx, llama_batch_get_one(ids.data(), static_cast<int32_t>(ids.size()))) != 0) return 1;
    const float* logits = llama_get_logits_ith(ctx, -1);  // the batch's last output row
    const int n_vocab = llama_vocab_n_tokens(vocab);
    if (!logits || !write_npy_f32(out_path, logits, n_vocab)) return 1;

    std::ofstream ids_out(out_path + ".prompt_ids.txt");
    for (size_t i = 0; i < ids.size(); ++i) ids_out << (i ? "," : "") << ids[i];
    std::printf("saved %d logits to %s\n", n_vocab, out_path.c_str());

    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
