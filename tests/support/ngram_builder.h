// Builds small n-gram models in the trie format engine/models/ngram_trie.h
// reads (the layout sphinxbase writes), so tests know every number in a
// model, can hand the same file to sphinxbase, and can break it on purpose.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace samplescope::testing {

struct TinyNgram {
    struct Unigram {
        float prob = 0.0F;     // in units of log base 1.0001
        float backoff = 0.0F;
    };
    struct Bigram {
        std::uint32_t h1 = 0, w = 0;  // "h1 w"
        float prob = 0.0F, backoff = 0.0F;
    };
    struct Trigram {
        std::uint32_t h2 = 0, h1 = 0, w = 0;  // "h2 h1 w"; the bigram "h1 w" must be listed
        float prob = 0.0F;
    };
    int order = 3;
    std::vector<std::string> words;
    std::vector<Unigram> unigrams;  // one per word
    std::vector<Bigram> bigrams;
    std::vector<Trigram> trigrams;
    // Write the trigrams below one bigram "h1 w" in the order listed instead
    // of sorted (as sphinxbase's writer left two ranges of en-us.lm.bin).
    bool keep_trigram_order = false;
    // The header's counts may state more n-grams than the arrays hold, as
    // en-us.lm.bin's does: extra slots at each order's end.
    std::uint32_t spare_bigrams = 0;
    std::uint32_t spare_trigrams = 0;
};

// The file's bytes.
std::string write_ngram_trie(const TinyNgram& model);

// A V = 6 trigram model with bigrams and trigrams of several kinds (and a
// sentence start and end), used by the model's tests and the fuzz seeds.
TinyNgram tiny_trigram_model();

// tiny_trigram_model() written once to a temporary file; its path.
std::string tiny_trigram_model_file();

// Writes bytes to a fresh file under the system's temporary folder; returns its path.
std::string write_temp_file(const std::string& bytes, const std::string& name);

}  // namespace samplescope::testing
