#include "engine/models/ngram_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <unordered_map>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"

namespace samplescope {

struct NgramModel::Data {
    NgramTrie trie;
    std::string path;
    std::vector<float> unigram_prob;
    std::vector<float> unigram_backoff;
    // The bigrams h1 w by h1: entries [bigram_first[h1], bigram_first[h1 + 1])
    // give w (ascending), P(w | h1) and the bigram's back-off.
    std::vector<std::uint32_t> bigram_first;
    std::vector<std::uint32_t> bigram_word;
    std::vector<float> bigram_prob;
    std::vector<float> bigram_backoff;
    // The trigrams h2 h1 w by h1, then h2, then w: entries
    // [trigram_first[h1], trigram_first[h1 + 1]) give h2, w and P(w | h2 h1).
    std::vector<std::uint32_t> trigram_first;
    std::vector<std::uint32_t> trigram_history;
    std::vector<std::uint32_t> trigram_word;
    std::vector<float> trigram_prob;
    std::unordered_map<std::string_view, std::uint32_t> ids;
    std::int64_t start_id = -1;  // <s>
    std::int64_t end_id = -1;    // </s>
};

namespace {

// The successor index: the trie lists the n-grams that end in a word; a row
// needs the words that follow a history. Only entries sphinxbase's search
// reaches are kept (NgramTrie::reachable). The file is read in its own order
// (by w), decoding as it goes; the entries are then placed by h1 with one
// counting sort, and each h1's trigrams sorted by (h2, w) where they lie.
void build_index(NgramModel::Data& data) {
    const NgramTrie& trie = data.trie;
    const std::uint32_t vocab = trie.vocab_size();
    data.bigram_first.assign(std::size_t{vocab} + 1, 0);
    data.trigram_first.assign(std::size_t{vocab} + 1, 0);
    if (trie.order() < 2) return;
    struct Bigram {
        std::uint32_t h1, w;
        float prob, backoff;
    };
    struct Trigram {
        std::uint32_t h1, h2, w;
        float prob;
    };
    std::vector<Bigram> bigrams;
    std::vector<Trigram> trigrams;
    bigrams.reserve(trie.count(2));
    if (trie.order() >= 3) trigrams.reserve(trie.count(3));
    for (std::uint32_t w = 0; w < vocab; ++w) {
        const auto range = trie.bigrams_ending_in(w);
        for (std::uint32_t e = range.begin; e < range.end; ++e) {
            if (!trie.reachable(2, range, e)) continue;
            const std::uint32_t h1 = trie.entry_word(2, e);
            bigrams.push_back({h1, w, trie.entry_prob(2, e), trie.entry_backoff(2, e)});
            if (trie.order() < 3) continue;
            const auto children = trie.entry_children(2, e);
            for (std::uint32_t t = children.begin; t < children.end; ++t) {
                if (trie.reachable(3, children, t)) trigrams.push_back({h1, trie.entry_word(3, t), w, trie.entry_prob(3, t)});
            }
        }
    }
    // A stable counting sort by h1 keeps w ascending within each h1.
    const auto place_by_h1 = [vocab](const auto& items, auto& first) {
        first.assign(std::size_t{vocab} + 1, 0);
        for (const auto& item : items) ++first[item.h1 + 1];
        for (std::uint32_t h = 0; h < vocab; ++h) first[h + 1] += first[h];
        std::vector<std::uint32_t> at(first.begin(), first.end() - 1);
        std::remove_cvref_t<decltype(items)> placed(items.size());
        for (const auto& item : items) placed[at[item.h1]++] = item;
        return placed;
    };
    const auto by_h1 = place_by_h1(bigrams, data.bigram_first);
    bigrams = {};
    data.bigram_word.resize(by_h1.size());
    data.bigram_prob.resize(by_h1.size());
    data.bigram_backoff.resize(by_h1.size());
    for (std::size_t k = 0; k < by_h1.size(); ++k) {
        data.bigram_word[k] = by_h1[k].w;
        data.bigram_prob[k] = by_h1[k].prob;
        data.bigram_backoff[k] = by_h1[k].backoff;
    }
    auto tri = place_by_h1(trigrams, data.trigram_first);
    trigrams = {};
    for (std::uint32_t h = 0; h < vocab; ++h) {
        std::sort(tri.begin() + data.trigram_first[h], tri.begin() + data.trigram_first[h + 1],
                  [](const Trigram& a, const Trigram& b) { return a.h2 != b.h2 ? a.h2 < b.h2 : a.w < b.w; });
    }
    data.trigram_history.resize(tri.size());
    data.trigram_word.resize(tri.size());
    data.trigram_prob.resize(tri.size());
    for (std::size_t k = 0; k < tri.size(); ++k) {
        data.trigram_history[k] = tri[k].h2;
        data.trigram_word[k] = tri[k].w;
        data.trigram_prob[k] = tri[k].prob;
    }
}

}  // namespace

double ngram_log_unit() {
    static const double unit = std::log(1.0001);
    return unit;
}

std::shared_ptr<const NgramModel> NgramModel::load(const std::string& path, std::uint64_t memory_budget) {
    return from_trie(NgramTrie::read_file(path, memory_budget), path);
}

std::shared_ptr<const NgramModel> NgramModel::from_trie(NgramTrie trie, std::string path) {
    auto data = std::make_shared<Data>();
    data->trie = std::move(trie);
    data->path = std::move(path);
    const NgramTrie& read = data->trie;
    const std::uint32_t vocab = read.vocab_size();
    data->unigram_prob.resize(vocab);
    data->unigram_backoff.resize(vocab);
    for (std::uint32_t w = 0; w < vocab; ++w) {
        data->unigram_prob[w] = read.unigram_prob(w);
        data->unigram_backoff[w] = read.unigram_backoff(w);
    }
    build_index(*data);
    data->ids.reserve(vocab);
    for (std::uint32_t w = 0; w < vocab; ++w) data->ids.emplace(read.words()[w], w);
    if (const auto it = data->ids.find("<s>"); it != data->ids.end()) data->start_id = it->second;
    if (const auto it = data->ids.find("</s>"); it != data->ids.end()) data->end_id = it->second;
    const int order = read.order();
    return std::shared_ptr<const NgramModel>(new NgramModel(std::move(data), order));
}

std::shared_ptr<const NgramModel> NgramModel::restricted(int order) const {
    if (order < 1 || order > file_order()) {
        throw InputError("model", "an n-gram model of order " + std::to_string(order) + ": " + data_->path +
                                      " holds orders 1 to " + std::to_string(file_order()));
    }
    return std::shared_ptr<const NgramModel>(new NgramModel(data_, order));
}

int NgramModel::file_order() const { return data_->trie.order(); }
const std::string& NgramModel::path() const { return data_->path; }
std::int64_t NgramModel::sentence_start_id() const { return data_->start_id; }
std::int64_t NgramModel::sentence_end_id() const { return data_->end_id; }
std::size_t NgramModel::vocab_size() const { return data_->trie.vocab_size(); }
const std::vector<std::string>& NgramModel::labels() const { return data_->trie.words(); }
std::optional<std::int64_t> NgramModel::end_id() const {
    if (data_->end_id < 0) return std::nullopt;
    return data_->end_id;
}

std::string NgramModel::description() const {
    static constexpr const char* kNames[] = {"", "unigram", "bigram", "trigram"};
    const auto& trie = data_->trie;
    std::string counts;
    for (int n = 1; n <= trie.order(); ++n) {
        counts += (n > 1 ? ", " : "") + format_count(trie.count(n)) + " " + kNames[n] + "s";
    }
    std::string text = std::string(kNames[order_]) + " back-off model, V = " + format_count(trie.vocab_size()) +
                       " words (" + counts + ")";
    if (order_ < trie.order()) text += ", restricted from the file's " + std::string(kNames[trie.order()]) + "s";
    return text;
}

std::vector<std::uint32_t> NgramModel::history_of(const ModelContext& context) const {
    std::vector<std::uint32_t> history;
    const auto want = static_cast<std::size_t>(order_ - 1);
    if (want == 0) return history;
    const auto start = data_->start_id;
    for (std::size_t i = context.ids.size(); i-- > 0;) {
        const std::int64_t id = context.ids[i];
        if (id == kUnknownWord) return history;
        if (id == data_->end_id) break;  // the words after </s> follow a new <s>
        history.push_back(static_cast<std::uint32_t>(id));
        if (id == start || history.size() == want) return history;
    }
    if (start >= 0) history.push_back(static_cast<std::uint32_t>(start));
    return history;
}

namespace {

// sphinxbase's float score to its integer score (a C cast: toward zero).
std::int32_t truncate_score(float score) { return static_cast<std::int32_t>(score); }

}  // namespace

// One pass over every word with the back-off value, then the history's
// successors with their own probability. `all(a, b)` sets every word from
// s = (P1 + a) + b; `one(w, s)` overwrites one word.
template <class All, class One>
static void visit_scores(const NgramModel::Data& data, int order, std::span<const std::uint32_t> history, All all,
                         One one) {
    const std::size_t n = std::min<std::size_t>(history.size(), static_cast<std::size_t>(order - 1));
    if (n == 0) {
        all(0.0F, 0.0F);
        return;
    }
    const std::uint32_t h1 = history[0];
    const std::uint32_t begin = data.bigram_first[h1];
    const std::uint32_t end = data.bigram_first[h1 + 1];
    if (n == 1) {
        all(data.unigram_backoff[h1], 0.0F);
        for (std::uint32_t at = begin; at < end; ++at) one(data.bigram_word[at], data.bigram_prob[at]);
        return;
    }
    // B(h2 h1): the bigram h1 among h2's successors, 0 when there is none.
    const std::uint32_t h2 = history[1];
    const auto h2_words = std::span(data.bigram_word).subspan(data.bigram_first[h2],
                                                              data.bigram_first[h2 + 1] - data.bigram_first[h2]);
    const auto found = std::lower_bound(h2_words.begin(), h2_words.end(), h1);
    const float backoff2 = found != h2_words.end() && *found == h1
                               ? data.bigram_backoff[data.bigram_first[h2] + static_cast<std::uint32_t>(found - h2_words.begin())]
                               : 0.0F;
    all(data.unigram_backoff[h1], backoff2);
    for (std::uint32_t at = begin; at < end; ++at) one(data.bigram_word[at], data.bigram_prob[at] + backoff2);
    // The trigrams h2 h1 w: h1's run, sorted by h2.
    const auto histories = std::span(data.trigram_history)
                               .subspan(data.trigram_first[h1], data.trigram_first[h1 + 1] - data.trigram_first[h1]);
    const auto [from, to] = std::equal_range(histories.begin(), histories.end(), h2);
    const std::uint32_t first = data.trigram_first[h1] + static_cast<std::uint32_t>(from - histories.begin());
    const std::uint32_t last = data.trigram_first[h1] + static_cast<std::uint32_t>(to - histories.begin());
    for (std::uint32_t at = first; at < last; ++at) one(data.trigram_word[at], data.trigram_prob[at]);
}

void NgramModel::scores_for_history(std::span<const std::uint32_t> history, std::vector<std::int32_t>& scores) const {
    const auto& p1 = data_->unigram_prob;
    scores.resize(p1.size());
    visit_scores(
        *data_, order_, history,
        [&](float a, float b) {
            for (std::size_t w = 0; w < p1.size(); ++w) scores[w] = truncate_score((p1[w] + a) + b);
        },
        [&](std::uint32_t w, float s) { scores[w] = truncate_score(s); });
}

void NgramModel::row_for_history(std::span<const std::uint32_t> history, std::vector<double>& row) const {
    const auto& p1 = data_->unigram_prob;
    const double unit = ngram_log_unit();
    row.resize(p1.size());
    visit_scores(
        *data_, order_, history,
        [&](float a, float b) {
            for (std::size_t w = 0; w < p1.size(); ++w) {
                row[w] = static_cast<double>(truncate_score((p1[w] + a) + b)) * unit;
            }
        },
        [&](std::uint32_t w, float s) { row[w] = static_cast<double>(truncate_score(s)) * unit; });
    if (data_->start_id >= 0) row[static_cast<std::size_t>(data_->start_id)] = -std::numeric_limits<double>::infinity();
}

void NgramModel::next_logits(const ModelContext& context, std::vector<double>& row) const {
    const auto history = history_of(context);
    row_for_history(history, row);
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
constexpr std::string_view kLeading = "\"([{";
constexpr std::string_view kTrailing = "\")]},;:";
constexpr std::string_view kSentenceEnd = ".!?";

}  // namespace

std::vector<PromptWord> NgramModel::tokenize(std::string_view prompt) const {
    check_prompt_text(prompt);
    std::vector<PromptWord> words;
    const auto add = [&](std::string text, std::int64_t id) {
        if (words.size() == kMaxPromptWords) {
            throw InputError("prompt", "prompt: more than " + std::to_string(kMaxPromptWords) +
                                           " words (a prompt may hold at most that many)");
        }
        words.push_back({std::move(text), id});
    };
    std::size_t i = 0;
    while (i < prompt.size()) {
        while (i < prompt.size() && is_space(prompt[i])) ++i;
        std::size_t j = i;
        while (j < prompt.size() && !is_space(prompt[j])) ++j;
        const std::string_view original = prompt.substr(i, j - i);
        std::string_view piece = original;
        i = j;
        if (piece.empty()) continue;
        // Quotes and brackets around a word are not part of it; a sentence
        // end after it is </s>.
        bool sentence_end = false;
        while (!piece.empty() && kLeading.find(piece.front()) != std::string_view::npos) piece.remove_prefix(1);
        while (!piece.empty() && (kTrailing.find(piece.back()) != std::string_view::npos ||
                                  kSentenceEnd.find(piece.back()) != std::string_view::npos)) {
            sentence_end |= kSentenceEnd.find(piece.back()) != std::string_view::npos;
            piece.remove_suffix(1);
        }
        if (!piece.empty()) {
            std::string word(piece);
            for (auto& c : word) {
                if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            }
            const auto it = data_->ids.find(word);
            add(word, it == data_->ids.end() ? kUnknownWord : static_cast<std::int64_t>(it->second));
        }
        if (sentence_end) add(".", data_->end_id >= 0 ? data_->end_id : kUnknownWord);
        // Punctuation alone is not a word of the model: shown as unknown.
        if (piece.empty() && !sentence_end) add(std::string(original), kUnknownWord);
    }
    if (words.empty()) {
        throw InputError("prompt", "prompt: empty (type at least one word for the model to continue)");
    }
    return words;
}

std::string NgramModel::token_text(std::int64_t id) const {
    if (id == data_->end_id) return ".";
    if (id == data_->start_id) return "";
    return LanguageModel::token_text(id);
}

}  // namespace samplescope
