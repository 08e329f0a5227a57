#include "tests/support/ngram_builder.h"

#include <algorithm>
#include <bit>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "engine/models/ngram_trie.h"

namespace samplescope::testing {

namespace {

void put32(std::string& out, std::uint32_t value) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}
void put_float(std::string& out, float value) { put32(out, std::bit_cast<std::uint32_t>(value)); }

// A bit array written from the least significant end, little-endian.
struct Bits {
    std::string bytes;
    void put(std::uint64_t bit, std::uint8_t width, std::uint32_t value) {
        for (std::uint8_t i = 0; i < width; ++i) {
            if ((value >> i) & 1U) {
                const std::uint64_t at = bit + i;
                bytes[static_cast<std::size_t>(at >> 3)] = static_cast<char>(
                    static_cast<unsigned char>(bytes[static_cast<std::size_t>(at >> 3)]) | (1U << (at & 7)));
            }
        }
    }
};

// A quantiser table: each distinct value gets the next code; the rest of the
// 2^16 slots repeat the last value.
struct Table {
    std::vector<float> values;
    std::uint32_t code(float value) {
        const auto at = std::find(values.begin(), values.end(), value);
        if (at != values.end()) return static_cast<std::uint32_t>(at - values.begin());
        values.push_back(value);
        return static_cast<std::uint32_t>(values.size() - 1);
    }
    void write(std::string& out) const {
        for (std::size_t i = 0; i < (1U << 16); ++i) put_float(out, values.empty() ? 0.0F : values[std::min(i, values.size() - 1)]);
    }
};

std::uint64_t array_bytes(std::uint32_t entries, std::uint8_t total_bits) {
    return ((std::uint64_t{entries} + 1) * total_bits + 7) / 8 + 8;
}

}  // namespace

std::string write_ngram_trie(const TinyNgram& model) {
    const auto vocab = static_cast<std::uint32_t>(model.words.size());
    if (model.unigrams.size() != vocab) throw std::logic_error("one unigram per word");
    // Bigrams by (w, h1); each with its trigrams by h2 (or as listed).
    std::vector<TinyNgram::Bigram> bigrams = model.order >= 2 ? model.bigrams : std::vector<TinyNgram::Bigram>{};
    std::sort(bigrams.begin(), bigrams.end(),
              [](const auto& a, const auto& b) { return a.w != b.w ? a.w < b.w : a.h1 < b.h1; });
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<TinyNgram::Trigram>> below;
    if (model.order >= 3) {
        for (const auto& t : model.trigrams) below[{t.h1, t.w}].push_back(t);
    }
    if (!model.keep_trigram_order) {
        for (auto& [key, list] : below) {
            std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.h2 < b.h2; });
        }
    }
    std::uint32_t trigram_total = 0;
    for (const auto& [key, list] : below) trigram_total += static_cast<std::uint32_t>(list.size());

    const std::uint32_t bigram_slots = static_cast<std::uint32_t>(bigrams.size()) + model.spare_bigrams;
    const std::uint32_t trigram_slots = trigram_total + model.spare_trigrams;
    std::string out = "Trie Language Model";
    out.push_back(static_cast<char>(model.order));
    put32(out, vocab);
    if (model.order >= 2) put32(out, bigram_slots);
    if (model.order >= 3) put32(out, trigram_slots);

    const std::uint8_t word_bits = required_bits(vocab);
    Table bigram_prob;
    Table bigram_backoff;
    Table trigram_prob;
    Bits middle;
    Bits longest;
    if (model.order >= 2) {
        const bool is_middle = model.order == 3;
        const std::uint8_t next_bits = is_middle ? required_bits(trigram_slots) : 0;
        const auto bigram_bits = static_cast<std::uint8_t>(word_bits + (is_middle ? 32 : 16) + next_bits);
        Bits& bits = is_middle ? middle : longest;
        bits.bytes.assign(static_cast<std::size_t>(array_bytes(bigram_slots, bigram_bits)), '\0');
        const auto trigram_bits = static_cast<std::uint8_t>(word_bits + 16);
        if (is_middle) longest.bytes.assign(static_cast<std::size_t>(array_bytes(trigram_slots, trigram_bits)), '\0');
        std::uint32_t next = 0;
        for (std::uint32_t e = 0; e < bigrams.size(); ++e) {
            const auto& b = bigrams[e];
            const std::uint64_t at = std::uint64_t{e} * bigram_bits;
            bits.put(at, word_bits, b.h1);
            if (is_middle) {
                bits.put(at + word_bits, 16, bigram_backoff.code(b.backoff));
                bits.put(at + word_bits + 16, 16, bigram_prob.code(b.prob));
                bits.put(at + word_bits + 32, next_bits, next);
                const auto it = below.find({b.h1, b.w});
                if (it == below.end()) continue;
                for (const auto& t : it->second) {
                    const std::uint64_t t_at = std::uint64_t{next} * trigram_bits;
                    longest.put(t_at, word_bits, t.h2);
                    longest.put(t_at + word_bits, 16, trigram_prob.code(t.prob));
                    ++next;
                }
            } else {
                bits.put(at + word_bits, 16, bigram_prob.code(b.prob));
            }
        }
        // The next pointer after the last bigram: where its trigrams end.
        if (is_middle) bits.put(std::uint64_t{static_cast<std::uint32_t>(bigrams.size())} * bigram_bits + word_bits + 32,
                               next_bits, next);
        put32(out, 1);  // the quantiser's type, unused
        if (is_middle) {
            bigram_prob.write(out);
            bigram_backoff.write(out);
            trigram_prob.write(out);
        } else {
            bigram_prob.write(out);
        }
    }
    // Unigrams: prob, back-off, and where their bigrams start; one more at the end.
    std::uint32_t first = 0;
    for (std::uint32_t w = 0; w <= vocab; ++w) {
        put_float(out, w < vocab ? model.unigrams[w].prob : 0.0F);
        put_float(out, w < vocab ? model.unigrams[w].backoff : 0.0F);
        put32(out, first);
        while (first < bigrams.size() && bigrams[first].w == w) ++first;
    }
    out += middle.bytes;
    out += longest.bytes;
    std::string words;
    for (const auto& word : model.words) words += word + '\0';
    put32(out, static_cast<std::uint32_t>(words.size()));
    out += words;
    return out;
}

TinyNgram tiny_trigram_model() {
    TinyNgram m;
    m.words = {"</s>", "<s>", "a", "b", "c", "d"};
    m.unigrams = {{-20000, 0}, {-99999, -3000}, {-9000, -1500}, {-12000, -2500}, {-16000, -700}, {-30000, 0}};
    m.bigrams = {
        {1, 2, -4000, -1200},  // <s> a
        {1, 3, -9000, -800},   // <s> b
        {2, 3, -5000, -2000},  // a b
        {2, 4, -8000, -300},   // a c
        {3, 0, -3000, 0},      // b </s>
        {3, 2, -6000, -900},   // b a
        {4, 5, -2000, 0},      // c d
        {4, 2, -11000, -100},  // c a
    };
    m.trigrams = {
        {1, 2, 3, -1000},   // <s> a b
        {1, 2, 4, -3000},   // <s> a c
        {2, 3, 2, -2500},   // a b a
        {4, 2, 3, -1500},   // c a b
        {3, 2, 4, -5200},   // b a c
    };
    return m;
}

std::string tiny_trigram_model_file() {
    static const std::string path = write_temp_file(write_ngram_trie(tiny_trigram_model()), "tiny.lm.bin");
    return path;
}

std::string write_temp_file(const std::string& bytes, const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("samplescope-test-" + std::to_string(std::hash<std::string>{}(bytes) % 1000000007));
    std::filesystem::create_directories(dir);
    const auto path = (dir / name).string();
    std::ofstream file(path, std::ios::binary);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
}

}  // namespace samplescope::testing
