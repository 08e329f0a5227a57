// sphinxbase's own scorer (libsphinxbase, ngram_tg_score and its siblings),
// asked word by word: the independent reference that the n-gram model's fast
// row (ngram_model.h) is tested and benchmarked against. Built only where
// libsphinxbase-dev is installed; elsewhere available() is false and the
// constructor refuses.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace samplescope {

class SphinxScorer {
public:
    static bool available();

    // Reads the model with sphinxbase's ngram_model_read at log base 1.0001.
    // sphinxbase checks nothing it reads: pass only a file NgramTrie::read_file
    // accepted. Throws InputError when sphinxbase is absent or refuses it.
    explicit SphinxScorer(const std::string& path);
    ~SphinxScorer();
    SphinxScorer(const SphinxScorer&) = delete;
    SphinxScorer& operator=(const SphinxScorer&) = delete;

    std::uint32_t vocab_size() const;
    std::string word(std::uint32_t id) const;
    // The integer score of every word after `history` (most recent first):
    // ngram_tg_score with two words, ngram_bg_score with one, ngram_ng_score
    // with none, one call per word.
    void scores(std::span<const std::uint32_t> history, std::vector<std::int32_t>& out);
    // logmath_log_to_ln of a score.
    double to_ln(std::int32_t score) const;

private:
    struct Handles;
    std::unique_ptr<Handles> handles_;
};

}  // namespace samplescope
