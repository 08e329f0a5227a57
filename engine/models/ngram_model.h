// The `ngram` model: a back-off n-gram language model over words (Debian's
// pocketsphinx-en-us trigram model by default), giving the logits of the next
// word as natural-log probabilities.
//
// The row follows sphinxbase's scorer exactly (src/libsphinxbase/lm/lm_trie.c
// lm_trie_score: lm_trie_hist_score with a full history, lm_trie_nobo_score
// with a shorter one), so it equals ngram_tg_score / ngram_bg_score word by
// word (tests/models/test_ngram_model.cpp). For a history h2 h1 and a word w:
//   the trigram h2 h1 w exists:         s = P3(h2 h1 w)
//   else the bigram h1 w exists:        s = P2(h1 w) + B(h2 h1)
//   else:                               s = (P1(w) + B(h1)) + B(h2 h1)
// where B(h2 h1) is 0 when the bigram h2 h1 does not exist; the sums are
// float, as there. With only h1: P2(h1 w), else P1(w) + B(h1); with no
// history: P1(w). sphinxbase then truncates s to an integer score (int32) in
// units of log base 1.0001, and the logit is score x ln(1.0001).
//
// Instead of scoring all V words one by one, the row is one pass over the
// unigrams (the back-off value every word starts from) and then only the
// history's explicit successors: the bigrams h1 w, found through an index
// built at load (the file's trie lists a word's predecessors, not its
// successors), and the trigrams h2 h1 w below them.
//
// Words: the model's vocabulary is lower case; <s> starts a sentence and is
// never predicted (its logit is -inf), </s> ends one (it reads as "." in the
// text, and a sentence-ending ". ! ?" in a prompt becomes it). The context a
// row conditions on is the last one or two words after the last sentence
// start; a word outside the vocabulary cuts it (the model backs off to the
// words after it).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/models/language_model.h"
#include "engine/models/ngram_trie.h"

namespace samplescope {

class NgramModel final : public LanguageModel {
public:
    // Reads and checks the file (NgramTrie::read_file) and builds the
    // successor index. Throws InputError.
    static std::shared_ptr<const NgramModel> load(const std::string& path, std::uint64_t memory_budget = 0);
    static std::shared_ptr<const NgramModel> from_trie(NgramTrie trie, std::string path);

    // The same model conditioning on at most order - 1 words (order 1: the
    // unigram row, 2: bigrams), sharing the loaded data: a cheaper, worse
    // draft for speculative decoding. Throws InputError above the file's order.
    std::shared_ptr<const NgramModel> restricted(int order) const;

    std::string_view kind() const override { return "ngram"; }
    std::string description() const override;
    std::size_t vocab_size() const override;
    const std::vector<std::string>& labels() const override;
    void next_logits(const ModelContext& context, std::vector<double>& row) const override;
    std::vector<PromptWord> tokenize(std::string_view prompt) const override;
    std::string token_text(std::int64_t id) const override;
    std::optional<std::int64_t> end_id() const override;

    // The order the row conditions on (1 to 3) and the file's own.
    int order() const { return order_; }
    int file_order() const;
    const std::string& path() const;
    std::int64_t sentence_start_id() const;
    std::int64_t sentence_end_id() const;

    // The history a context gives: its last known words after the last
    // sentence start, most recent first, at most order() - 1 of them (<s>
    // included when the sentence started within them).
    std::vector<std::uint32_t> history_of(const ModelContext& context) const;
    // The row for such a history (most recent first, ids below V).
    void row_for_history(std::span<const std::uint32_t> history, std::vector<double>& row) const;
    // The integer scores behind the row, in units of log base 1.0001 (the
    // number sphinxbase's ngram_tg_score returns), <s> included.
    void scores_for_history(std::span<const std::uint32_t> history, std::vector<std::int32_t>& scores) const;

    struct Data;

private:
    NgramModel(std::shared_ptr<const Data> data, int order) : data_(std::move(data)), order_(order) {}
    std::shared_ptr<const Data> data_;
    int order_;
};

// ln(1.0001): the natural log of one unit of sphinxbase's log scale at
// pocketsphinx's default -logbase 1.0001 (logmath_log_to_ln).
double ngram_log_unit();

}  // namespace samplescope
