// Draw N next tokens of one prompt with llama.cpp's own sampler chain, for
// `samplescope-cli verify`.
//
// Decodes the prompt once, writes llama_get_logits_ith(ctx, -1) as a 1-D f32
// .npy (as dump_logits_llama.cpp does), then samples the same position N times
// through a chain top-k -> top-p -> min-p -> temperature -> dist (the
// `llamacpp` pipeline's order) and writes the tokens, one id a line. The chain
// holds no penalty sampler, so sampling the same logits again changes only the
// dist sampler's random state.
//
//   c++ -std=c++17 dump_draws_llama.cpp -I llama.cpp/include -I llama.cpp/ggml/include \
//       -L llama.cpp/build/bin -lllama -o dump_draws_llama
//   ./dump_draws_llama model.gguf "The cat sat on the" 100000 row.npy draws.txt 40 0.95 0.05 0.8
//   samplescope-cli verify --pipeline llamacpp --logits row.npy --samples draws.txt \
//       --top-k 40 --top-p 0.95 --min-p 0.05 --temperature 0.8
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "llama.h"

namespace {

// .npy 1.0: magic, version, header length, a dict padded to a 64-byte boundary, the values.
bool write_npy_f32(const std::string& path, const float* values, int count) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    const unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                      static_cast<unsigned char>(header.size() & 0xFF),
                                      static_cast<unsigned char>(header.size() >> 8)};
    out.write(reinterpret_cast<const char*>(prefix), sizeof prefix);
    out << header;
    out.write(reinterpret_cast<const char*>(values), static_cast<std::streamsize>(sizeof(float)) * count);
    return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 10) {
        std::fprintf(stderr, "usage: %s MODEL.gguf PROMPT N ROW.npy DRAWS.txt TOP_K TOP_P MIN_P TEMPERATURE\n", argv[0]);
        return 2;
    }
    const std::string prompt = argv[2];
    const long draws = std::atol(argv[3]);
    const int top_k = std::atoi(argv[6]);
    const float top_p = std::strtof(argv[7], nullptr);
    const float min_p = std::strtof(argv[8], nullptr);
    const float temperature = std::strtof(argv[9], nullptr);

    llama_backend_init();
    llama_model* model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) return 1;
    llama_context* ctx = llama_init_from_model(model, llama_context_default_params());
    const llama_vocab* vocab = llama_model_get_vocab(model);

    const int n = -llama_tokenize(vocab, prompt.c_str(), static_cast<int>(prompt.size()), nullptr, 0, true, true);
    std::vector<llama_token> ids(static_cast<std::size_t>(n));
    llama_tokenize(vocab, prompt.c_str(), static_cast<int>(prompt.size()), ids.data(), n, true, true);
    if (llama_decode(ctx, llama_batch_get_one(ids.data(), n)) != 0) return 1;
    if (!write_npy_f32(argv[4], llama_get_logits_ith(ctx, -1), llama_vocab_n_tokens(vocab))) return 1;

    llama_sampler* chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(chain, llama_sampler_init_top_k(top_k));
    llama_sampler_chain_add(chain, llama_sampler_init_top_p(top_p, 1));
    llama_sampler_chain_add(chain, llama_sampler_init_min_p(min_p, 1));
    llama_sampler_chain_add(chain, llama_sampler_init_temp(temperature));
    llama_sampler_chain_add(chain, llama_sampler_init_dist(1234));
    std::ofstream out(argv[5]);
    for (long i = 0; i < draws; ++i) out << llama_sampler_sample(chain, ctx, -1) << '\n';
    std::printf("wrote %s and %ld draws to %s\n", argv[4], draws, argv[5]);

    llama_sampler_free(chain);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
