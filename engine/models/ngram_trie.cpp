#include "engine/models/ngram_trie.h"

#include <bit>
#include <cmath>
#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/io/byte_source.h"

namespace samplescope {

namespace {

constexpr std::string_view kHeader = "Trie Language Model";
constexpr std::size_t kUnigramBytes = 12;     // float prob, float back-off, uint32 next
constexpr std::size_t kQuantTable = 1U << 16;  // floats per quantiser table
constexpr std::uint8_t kCodeBits = 16;         // one probability or back-off code
// sphinxbase packs words and pointers in 32-bit reads (bitarr_read_int25): a
// field and its bit offset within a byte must fit 32 bits.
constexpr std::uint32_t kMaxCount = (1U << 25) - 1;
constexpr float kMaxValue = 268435456.0F;  // 2^28 units of log base 1.0001

std::uint32_t le32(const char* p) {
    const auto* b = reinterpret_cast<const unsigned char*>(p);
    return static_cast<std::uint32_t>(b[0]) | static_cast<std::uint32_t>(b[1]) << 8 |
           static_cast<std::uint32_t>(b[2]) << 16 | static_cast<std::uint32_t>(b[3]) << 24;
}

// The bytes of one order's bit array: sphinxbase's base_size.
std::uint64_t array_bytes(std::uint32_t entries, std::uint8_t total_bits) {
    return ((std::uint64_t{entries} + 1) * total_bits + 7) / 8 + sizeof(std::uint64_t);
}

}  // namespace

std::uint8_t required_bits(std::uint32_t max) {
    std::uint8_t bits = 0;
    while (max != 0) {
        ++bits;
        max >>= 1;
    }
    return bits;
}

NgramTrie NgramTrie::read_file(const std::string& path, std::uint64_t memory_budget) {
    const FileSource source(path);
    // The bytes, the bigram index (two uint32 per bigram) and the words.
    const std::uint64_t needed = saturating_mul(source.size(), 2);
    if (memory_budget != 0) check_memory(needed, memory_budget, "the language model " + path);
    return parse(source.read_all(source.size()), path);
}

NgramTrie NgramTrie::parse(std::string bytes, const std::string& source) {
    NgramTrie trie;
    trie.bytes_ = std::move(bytes);
    trie.parse_all(source);
    return trie;
}

std::uint32_t NgramTrie::bits_at(std::size_t base, std::uint64_t bit, std::uint8_t width) const {
    const std::uint32_t word = le32(bytes_.data() + base + static_cast<std::size_t>(bit >> 3));
    return (word >> (bit & 7)) & ((width >= 32 ? 0U : (1U << width)) - 1U);
}

float NgramTrie::float_at(std::size_t offset) const { return std::bit_cast<float>(le32(bytes_.data() + offset)); }

float NgramTrie::unigram_prob(std::uint32_t word) const { return float_at(unigrams_ + word * kUnigramBytes); }
float NgramTrie::unigram_backoff(std::uint32_t word) const {
    return float_at(unigrams_ + word * kUnigramBytes + 4);
}

NgramTrie::Range NgramTrie::bigrams_ending_in(std::uint32_t word) const {
    if (order_ < 2) return {};
    return {le32(bytes_.data() + unigrams_ + word * kUnigramBytes + 8),
            le32(bytes_.data() + unigrams_ + (word + 1) * kUnigramBytes + 8)};
}

std::uint32_t NgramTrie::entry_word(int n, std::uint32_t entry) const {
    const Level& at = level(n);
    return bits_at(at.offset, std::uint64_t{entry} * at.total_bits, at.word_bits);
}

float NgramTrie::entry_prob(int n, std::uint32_t entry) const {
    const Level& at = level(n);
    const std::uint64_t bit = std::uint64_t{entry} * at.total_bits + at.word_bits + (at.middle ? kCodeBits : 0);
    return float_at(at.prob_table + bits_at(at.offset, bit, kCodeBits) * sizeof(float));
}

float NgramTrie::entry_backoff(int n, std::uint32_t entry) const {
    const Level& at = level(n);
    if (!at.middle) return 0.0F;
    const std::uint64_t bit = std::uint64_t{entry} * at.total_bits + at.word_bits;
    return float_at(at.backoff_table + bits_at(at.offset, bit, kCodeBits) * sizeof(float));
}

NgramTrie::Range NgramTrie::entry_children(int n, std::uint32_t entry) const {
    const Level& at = level(n);
    if (!at.middle) return {};
    const std::uint64_t field = at.word_bits + 2U * kCodeBits;
    return {bits_at(at.offset, std::uint64_t{entry} * at.total_bits + field, at.next_bits),
            bits_at(at.offset, std::uint64_t{entry + 1} * at.total_bits + field, at.next_bits)};
}

std::optional<std::uint32_t> NgramTrie::find(int n, Range range, std::uint32_t word) const {
    // The bounds sit just outside the range with the values 0 and V; each
    // probe lands where `word` would lie if the words between were spread
    // evenly. The arithmetic is uint32 as there (the pivot's product can
    // wrap; the probe stays inside the bounds all the same).
    std::uint32_t before = range.begin - 1;
    std::uint32_t before_value = 0;
    std::uint32_t after = range.end;
    std::uint32_t after_value = vocab_size();
    if (word > after_value) return std::nullopt;
    while (after - before > 1) {
        const std::uint32_t offset = word - before_value;
        const std::uint32_t width = after - before - 1;
        const std::uint32_t spread = after_value - before_value + 1;
        const std::uint32_t pivot = before + 1 + static_cast<std::uint32_t>(offset * width) / spread;
        const std::uint32_t at = entry_word(n, pivot);
        if (at < word) {
            before = pivot;
            before_value = at;
        } else if (at > word) {
            after = pivot;
            after_value = at;
        } else {
            return pivot;
        }
    }
    return std::nullopt;
}

bool NgramTrie::reachable(int n, Range range, std::uint32_t entry) const {
    const auto& unordered = unordered_[static_cast<std::size_t>(n - 2)];
    if (!std::binary_search(unordered.begin(), unordered.end(), range.begin)) return true;
    return find(n, range, entry_word(n, entry)) == entry;
}

void NgramTrie::parse_all(const std::string& source) {
    const auto fail = [&source](const std::string& problem) -> void {
        throw InputError("model", source + ": " + problem);
    };
    const std::size_t size = bytes_.size();
    std::size_t at = 0;
    const auto need = [&](std::uint64_t n, const std::string& what) {
        if (n > size - at) {
            fail("truncated: " + what + " needs " + std::to_string(n) + " bytes at byte " + std::to_string(at) +
                 ", but the file has " + std::to_string(size) + " bytes");
        }
    };

    if (size < kHeader.size() || std::string_view(bytes_).substr(0, kHeader.size()) != kHeader) {
        fail("not a CMU Sphinx trie language model (it does not start with \"Trie Language Model\"; an ARPA "
             "text model can be converted with sphinx_lm_convert -ofmt bin)");
    }
    at = kHeader.size();
    need(1, "the order");
    order_ = static_cast<unsigned char>(bytes_[at]);
    at += 1;
    if (order_ < 1 || order_ > 3) {
        fail("order " + std::to_string(order_) + ": only unigram, bigram and trigram models (order 1 to 3) are read");
    }
    need(4U * static_cast<std::uint64_t>(order_), "the n-gram counts");
    for (int n = 1; n <= order_; ++n) {
        const std::uint32_t count = le32(bytes_.data() + at);
        at += 4;
        if (count == 0 || count > kMaxCount) {
            fail(std::to_string(n) + "-gram count " + std::to_string(count) + " is outside [1, " +
                 std::to_string(kMaxCount) + "]");
        }
        counts_.push_back(count);
    }
    const std::uint32_t vocab = counts_[0];

    std::size_t tables = 0;
    if (order_ > 1) {
        need(4, "the quantiser's type");
        at += 4;
        const std::uint64_t table_bytes = (2U * (order_ - 2U) + 1U) * kQuantTable * sizeof(float);
        need(table_bytes, "the quantiser's tables");
        tables = at;
        at += static_cast<std::size_t>(table_bytes);
    }

    need((std::uint64_t{vocab} + 1) * kUnigramBytes, "the unigrams");
    unigrams_ = at;
    at += (std::size_t{vocab} + 1) * kUnigramBytes;

    const std::uint8_t word_bits = required_bits(vocab);
    for (int n = 2; n <= order_; ++n) {
        Level level;
        level.entries = counts_[static_cast<std::size_t>(n - 1)];
        level.middle = n < order_;
        level.word_bits = word_bits;
        level.next_bits = level.middle ? required_bits(counts_[static_cast<std::size_t>(n)]) : 0;
        level.total_bits = static_cast<std::uint8_t>(word_bits + (level.middle ? 2 * kCodeBits : kCodeBits) +
                                                     level.next_bits);
        const std::size_t table = tables + static_cast<std::size_t>(2 * (n - 2)) * kQuantTable * sizeof(float);
        level.prob_table = table;
        level.backoff_table = level.middle ? table + kQuantTable * sizeof(float) : 0;
        const std::uint64_t bytes = array_bytes(level.entries, level.total_bits);
        need(bytes, "the " + std::to_string(n) + "-gram array");
        level.offset = at;
        at += static_cast<std::size_t>(bytes);
        levels_.push_back(level);
    }

    need(4, "the word list's size");
    const auto word_bytes = static_cast<std::int32_t>(le32(bytes_.data() + at));
    at += 4;
    if (word_bytes < 0) fail("the word list's size is negative (" + std::to_string(word_bytes) + ")");
    need(static_cast<std::uint64_t>(word_bytes), "the word list");
    if (size - at != static_cast<std::size_t>(word_bytes)) {
        fail(std::to_string(size - at - static_cast<std::size_t>(word_bytes)) +
             " bytes follow the word list (a file of another layout, or two files joined)");
    }

    // The quantiser's values and the unigrams: finite (infinite or NaN values
    // would turn into undefined integer scores).
    // A score is the sum of at most three values truncated to int32, so each
    // must be finite and within +-2^28 (e^-26843: far below any real model's).
    const auto fits = [](float value) { return std::isfinite(value) && std::fabs(value) <= kMaxValue; };
    const auto value_text = [](float value) {
        return std::isfinite(value) ? "is " + format_number(value) + ", outside +-268435456" : std::string("is not finite");
    };
    if (order_ > 1) {
        const std::size_t floats = (2U * (order_ - 2U) + 1U) * kQuantTable;
        for (std::size_t i = 0; i < floats; ++i) {
            const float value = float_at(tables + i * sizeof(float));
            if (!fits(value)) fail("quantiser value " + std::to_string(i) + " " + value_text(value));
        }
    }
    for (std::uint32_t w = 0; w < vocab; ++w) {
        for (const float value : {unigram_prob(w), unigram_backoff(w)}) {
            if (!fits(value)) fail("unigram " + std::to_string(w) + " has a probability or back-off that " + value_text(value));
        }
    }

    // Pointers: each order's ranges start at 0, never go back and end at the
    // next order's count; words are below V and increase within a range.
    used_ = counts_;
    unordered_.assign(2, {});
    const auto check_ranges = [&](int n, auto range_of, std::uint32_t parents, const char* parent_name) {
        const std::uint32_t entries = counts_[static_cast<std::size_t>(n - 1)];
        if (parents == 0) fail("it holds no " + std::to_string(n - 1) + "-grams");
        if (range_of(0).begin != 0) fail(std::string("the first ") + parent_name + "'s range does not start at 0");
        for (std::uint32_t p = 0; p < parents; ++p) {
            const Range range = range_of(p);
            if (range.end < range.begin || range.end > entries) {
                fail(std::string(parent_name) + " " + std::to_string(p) + " points to " + std::to_string(n) +
                     "-grams [" + std::to_string(range.begin) + ", " + std::to_string(range.end) + ") of " +
                     std::to_string(entries));
            }
            std::uint32_t previous = 0;
            bool ordered = true;
            for (std::uint32_t e = range.begin; e < range.end; ++e) {
                const std::uint32_t word = entry_word(n, e);
                if (word >= vocab) {
                    fail(std::to_string(n) + "-gram " + std::to_string(e) + " has word " + std::to_string(word) +
                         ", outside the vocabulary of " + std::to_string(vocab));
                }
                ordered = ordered && (e == range.begin || word > previous);
                previous = word;
            }
            if (!ordered) unordered_[static_cast<std::size_t>(n - 2)].push_back(range.begin);
        }
        // The last range's end is the number of entries the array holds.
        used_[static_cast<std::size_t>(n - 1)] = range_of(parents - 1).end;
    };
    if (order_ >= 2) check_ranges(2, [&](std::uint32_t w) { return bigrams_ending_in(w); }, vocab, "unigram");
    if (order_ >= 3) check_ranges(3, [&](std::uint32_t e) { return entry_children(2, e); }, used_[1], "bigram");
    if (count(order_) == 0) fail("it holds no " + std::to_string(order_) + "-grams");

    // The words: V of them, each terminated, non-empty, unique.
    words_.reserve(vocab);
    std::unordered_set<std::string_view> seen;
    seen.reserve(vocab);
    std::size_t start = at;
    for (std::size_t i = at; i < size; ++i) {
        if (bytes_[i] != '\0') continue;
        if (words_.size() == vocab) fail("the word list holds more than " + std::to_string(vocab) + " words");
        const std::string_view word(bytes_.data() + start, i - start);
        if (word.empty()) fail("word " + std::to_string(words_.size()) + " is empty");
        if (!seen.insert(word).second) {
            fail("word " + std::to_string(words_.size()) + " \"" + std::string(word) + "\" appears twice");
        }
        words_.emplace_back(word);
        start = i + 1;
    }
    if (start != size) fail("the word list's last word has no terminating NUL");
    if (words_.size() != vocab) {
        fail("the word list holds " + std::to_string(words_.size()) + " words, not the unigram count " +
             std::to_string(vocab));
    }
}

}  // namespace samplescope
