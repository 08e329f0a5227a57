// A back-off n-gram language model (order 1 to 3) in CMU Sphinx's binary trie
// format: the "Trie Language Model" files that sphinxbase's ngram_model_trie
// writes and Debian's pocketsphinx-en-us ships (en-us.lm.bin).
//
// The project reads the file itself instead of through sphinxbase for two
// reasons. sphinxbase's reader (ngram_model_trie_read_bin, lm_trie_read_bin)
// checks neither its reads nor its sizes: a truncated file is scored from
// zeroed memory, and a huge count ends the process inside ckd_calloc. And
// Debian's libsphinxbase exports no way to walk a history's successors (the
// ngram_iter_* functions are declared but not built), which the fast row in
// ngram_model.h needs. sphinxbase stays the independent scorer the tests
// compare against (sphinx_scorer.h).
//
// The layout, as sphinxbase's writer lays it out (src/libsphinxbase/lm/
// ngram_model_trie.c ngram_model_trie_write_bin, lm_trie.c, lm_trie_quant.c):
//   "Trie Language Model"                 19 bytes, no terminator
//   order                                 uint8
//   counts[order]                         uint32 each: unigrams, bigrams, trigrams
//   (order > 1) quantiser type            int32, unused
//   (order > 1) the quantiser's tables    per middle order two tables of 2^16
//                                         floats (probabilities, back-offs), then
//                                         one of 2^16 for the longest order
//   unigrams[counts[0] + 1]               float prob, float back-off, uint32 next
//   the middle orders' and the longest    bit-packed arrays (below)
//     order's entries
//   word strings                          int32 byte count, then counts[0]
//                                         NUL-terminated words
// The trie is keyed in reverse: unigram w's `next` range holds the bigrams
// "h1 w" (each entry names h1), and a bigram entry's range holds the trigrams
// "h2 h1 w" (each names h2). An entry of a middle order packs the word
// (bits(V)), a 16-bit back-off code, a 16-bit probability code and the next
// pointer (bits(count of the next order)); an entry of the longest order the
// word and a 16-bit probability code. Bits are packed from the least
// significant end, little-endian. Every probability and back-off is a float in
// units of log base 1.0001 (sphinxbase's logmath at pocketsphinx's -logbase).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace samplescope {

class NgramTrie {
public:
    // Entries [begin, end) of one order's array.
    struct Range {
        std::uint32_t begin = 0;
        std::uint32_t end = 0;
        bool empty() const { return begin == end; }
        std::uint32_t size() const { return end - begin; }
    };

    NgramTrie() = default;  // an empty model, for a value to assign a read one to

    // Reads and checks a whole file; `memory_budget` bytes (0: no limit) bound
    // the file and the tables built from it. Throws InputError naming the file
    // and what is wrong (a missing file, a truncated one, a count or pointer
    // that does not fit, unsorted entries, a non-finite value, a bad word list).
    static NgramTrie read_file(const std::string& path, std::uint64_t memory_budget = 0);
    // The same from bytes in memory; `source` names them in errors.
    static NgramTrie parse(std::string bytes, const std::string& source);

    int order() const { return order_; }
    // The number of n-grams of order n (1 to order()) the file holds. Its
    // header can state more: sphinxbase sizes each array by the count it was
    // given and fills it with the n-grams it kept (en-us.lm.bin's header says
    // 2,051,547 bigrams; its unigrams point to 2,051,541).
    std::uint32_t count(int n) const { return used_[static_cast<std::size_t>(n - 1)]; }
    std::uint32_t header_count(int n) const { return counts_[static_cast<std::size_t>(n - 1)]; }
    std::uint32_t vocab_size() const { return counts_[0]; }
    const std::vector<std::string>& words() const { return words_; }
    std::size_t file_bytes() const { return bytes_.size(); }

    float unigram_prob(std::uint32_t word) const;
    float unigram_backoff(std::uint32_t word) const;
    // The bigrams "h1 word" (each entry's word is h1); empty for a unigram model.
    Range bigrams_ending_in(std::uint32_t word) const;

    // Entries of order n (2 or 3): the word they add (h1 for a bigram entry,
    // h2 for a trigram entry), their probability and, for a middle order,
    // their back-off and the range of entries of order n + 1 below them.
    std::uint32_t entry_word(int n, std::uint32_t entry) const;
    float entry_prob(int n, std::uint32_t entry) const;
    float entry_backoff(int n, std::uint32_t entry) const;
    Range entry_children(int n, std::uint32_t entry) const;
    // The entry in `range` of order n whose word is `word`, found as
    // sphinxbase finds it (lm_trie.c uniform_find: an interpolation search
    // between the range's ends, taking words 0 and V as the bounds' values);
    // nothing when that search does not reach it. Entries are sorted by word
    // within a range, except in a few ranges the writer left out of order
    // (en-us.lm.bin has two), where the search can miss an entry the array
    // holds: the scorer misses it too, and so must a faithful row.
    std::optional<std::uint32_t> find(int n, Range range, std::uint32_t word) const;
    // Whether find(n, range, entry's word) reaches `entry`: always so in an
    // ordered range.
    bool reachable(int n, Range range, std::uint32_t entry) const;
    // The first entries of the ranges of order n (2 or 3) whose words are not
    // strictly increasing, ascending.
    const std::vector<std::uint32_t>& unordered_ranges(int n) const {
        return unordered_[static_cast<std::size_t>(n - 2)];
    }

private:
    struct Level {
        std::size_t offset = 0;        // of its bit array in bytes_
        std::uint32_t entries = 0;
        std::uint8_t word_bits = 0;
        std::uint8_t next_bits = 0;    // 0 for the longest order
        std::uint8_t total_bits = 0;
        bool middle = false;
        std::size_t prob_table = 0;    // offset of its 2^16-float probability table
        std::size_t backoff_table = 0; // a middle order's back-off table
    };

    void parse_all(const std::string& source);
    const Level& level(int n) const { return levels_[static_cast<std::size_t>(n - 2)]; }
    std::uint32_t bits_at(std::size_t base, std::uint64_t bit, std::uint8_t width) const;
    float float_at(std::size_t offset) const;

    std::string bytes_;
    int order_ = 0;
    std::vector<std::uint32_t> counts_;  // as the header states them
    std::vector<std::uint32_t> used_;    // as the arrays' pointers end
    // Per order 2 and 3, the first entry of each range whose words are not
    // strictly increasing, ascending.
    std::vector<std::vector<std::uint32_t>> unordered_;
    std::size_t unigrams_ = 0;  // offset of the unigram array
    std::vector<Level> levels_;  // orders 2 .. order()
    std::vector<std::string> words_;
};

// sphinxbase's bitarr_required_bits: the bits that hold every value up to max.
std::uint8_t required_bits(std::uint32_t max);

}  // namespace samplescope
