// The n-gram model: its row equals sphinxbase's scorer word by word (on a
// model built here and on Debian's en-us model), the issue's numbers for "the
// united", its history and tokenizer rules, and every broken file refused
// with one line.
#include <QtTest>

#include <cmath>
#include <random>

#include "engine/base/input_error.h"
#include "engine/models/model_source.h"
#include "engine/models/ngram_model.h"
#include "engine/models/sphinx_scorer.h"
#include "tests/support/ngram_builder.h"

using namespace samplescope;
using samplescope::testing::TinyNgram;

namespace {

std::shared_ptr<const NgramModel> tiny(const TinyNgram& spec = testing::tiny_trigram_model()) {
    return NgramModel::from_trie(NgramTrie::parse(testing::write_ngram_trie(spec), "tiny.lm.bin"), "tiny.lm.bin");
}

// Every history a model of V words can be asked about: none, one word, two.
std::vector<std::vector<std::uint32_t>> all_histories(std::uint32_t vocab) {
    std::vector<std::vector<std::uint32_t>> out{{}};
    for (std::uint32_t a = 0; a < vocab; ++a) {
        out.push_back({a});
        for (std::uint32_t b = 0; b < vocab; ++b) out.push_back({a, b});
    }
    return out;
}

std::vector<std::int64_t> ids_of(const std::vector<PromptWord>& words) {
    std::vector<std::int64_t> ids;
    for (const auto& w : words) ids.push_back(w.id);
    return ids;
}

QString refusal(const std::string& bytes) {
    try {
        NgramTrie::parse(bytes, "broken.lm.bin");
    } catch (const InputError& error) {
        return QString::fromStdString(error.what());
    }
    return {};
}

// Equal score vectors, or the first word where they differ.
void compare_scores(const std::vector<std::int32_t>& ours, const std::vector<std::int32_t>& theirs,
                    const std::vector<std::uint32_t>& history) {
    QCOMPARE(ours.size(), theirs.size());
    const auto at = std::mismatch(ours.begin(), ours.end(), theirs.begin());
    if (at.first == ours.end()) return;
    QString h;
    for (const auto id : history) h += QString::number(id) + ' ';
    QFAIL(qPrintable(QString("history [%1]: word %2 scores %3 here, %4 in sphinxbase")
                         .arg(h.trimmed())
                         .arg(at.first - ours.begin())
                         .arg(*at.first)
                         .arg(*at.second)));
}

void put32_at(std::string& bytes, std::size_t at, std::uint32_t value) {
    for (int i = 0; i < 4; ++i) bytes[at + static_cast<std::size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xFF);
}

}  // namespace

class TestNgramModel : public QObject {
    Q_OBJECT

private slots:
    // The back-off rule written out by hand for one history of the tiny model.
    void tinyRowFollowsTheBackOffRule() {
        const auto model = tiny();
        const auto spec = testing::tiny_trigram_model();
        std::vector<std::int32_t> scores;
        // History "<s> a" (most recent first: a, <s>): B(<s> a) = -1200, B(a) = -1500.
        const std::uint32_t history[] = {2, 1};
        model->scores_for_history(history, scores);
        QCOMPARE(scores[3], -1000);                                         // trigram <s> a b
        QCOMPARE(scores[4], -3000);                                         // trigram <s> a c
        QCOMPARE(scores[0], static_cast<std::int32_t>((-20000.0F + -1500.0F) + -1200.0F));  // no bigram a </s>
        QCOMPARE(scores[5], static_cast<std::int32_t>((-30000.0F + -1500.0F) + -1200.0F));
        // History "b a": the bigram b a exists (B = -900); a c has a trigram b a c, a b does not.
        const std::uint32_t history2[] = {2, 3};
        model->scores_for_history(history2, scores);
        QCOMPARE(scores[4], -5200);
        QCOMPARE(scores[3], static_cast<std::int32_t>(-5000.0F + -900.0F));
        QCOMPARE(scores[2], static_cast<std::int32_t>((-9000.0F + -1500.0F) + -900.0F));
        // History "d a": no bigram d a, so B(d a) = 0.
        const std::uint32_t history3[] = {2, 5};
        model->scores_for_history(history3, scores);
        QCOMPARE(scores[3], -5000);
        // One word: P(w | c) or P1 + B(c).
        const std::uint32_t one[] = {4};
        model->scores_for_history(one, scores);
        QCOMPARE(scores[5], -2000);
        QCOMPARE(scores[3], static_cast<std::int32_t>(-12000.0F + -700.0F));
        model->scores_for_history({}, scores);
        for (std::size_t w = 0; w < spec.words.size(); ++w) QCOMPARE(scores[w], static_cast<std::int32_t>(spec.unigrams[w].prob));
        // The row: scores in nats, <s> never predicted.
        std::vector<double> row;
        model->row_for_history(history, row);
        QCOMPARE(row[3], -1000.0 * std::log(1.0001));
        QVERIFY(std::isinf(row[1]) && row[1] < 0);
    }

    // The same tiny file read by sphinxbase: every history, every word, equal scores.
    void tinyModelMatchesSphinxbase() {
        if (!SphinxScorer::available()) QSKIP("this build has no libsphinxbase (install libsphinxbase-dev)");
        for (const bool unordered : {false, true}) {
            auto spec = testing::tiny_trigram_model();
            if (unordered) {
                // Trigrams below "a b" out of order, as in two of en-us.lm.bin's ranges.
                spec.trigrams.push_back({5, 2, 3, -800});
                spec.trigrams.push_back({3, 2, 3, -900});
                spec.keep_trigram_order = true;
                spec.spare_bigrams = 3;
                spec.spare_trigrams = 2;
            }
            const std::string bytes = testing::write_ngram_trie(spec);
            const auto path = testing::write_temp_file(bytes, unordered ? "unordered.lm.bin" : "tiny.lm.bin");
            const auto model = NgramModel::load(path);
            SphinxScorer scorer(path);
            QCOMPARE(scorer.vocab_size(), 6U);
            std::vector<std::int32_t> ours;
            std::vector<std::int32_t> theirs;
            for (const auto& history : all_histories(6)) {
                model->scores_for_history(history, ours);
                scorer.scores(history, theirs);
                compare_scores(ours, theirs, history);
            }
        }
    }

    // Debian's model (pocketsphinx-en-us): the numbers for "the united",
    // and the row equal to ngram_tg_score's, word by word.
    void realModelTheUnited() {
        if (!default_ngram_model_installed()) QSKIP("Debian's pocketsphinx-en-us is not installed");
        const auto model = NgramModel::load(default_ngram_model_path());
        QCOMPARE(model->vocab_size(), 72547U);
        QCOMPARE(model->order(), 3);
        const auto words = model->tokenize("The United");
        QCOMPARE(words.size(), 2U);
        const auto ids = ids_of(words);
        std::vector<double> row;
        model->next_logits({ids, ids.size()}, row);
        const auto& labels = model->labels();
        const auto p = [&](const char* word) {
            const auto at = std::find(labels.begin(), labels.end(), std::string(word));
            return std::exp(row[static_cast<std::size_t>(at - labels.begin())]);
        };
        QCOMPARE(std::round(p("states") * 1000), 886.0);
        QCOMPARE(std::round(p("nations") * 1000), 53.0);
        QCOMPARE(std::round(p("kingdom") * 1000), 25.0);
        QCOMPARE(std::round(p("states'") * 1000), 6.0);
        QCOMPARE(std::round(p("</s>") * 1000), 2.0);
        double sum = 0.0;
        for (const double x : row) sum += std::exp(x);
        QCOMPARE(std::round(sum * 10000), 9993.0);

        if (!SphinxScorer::available()) QSKIP("this build has no libsphinxbase (install libsphinxbase-dev)");
        SphinxScorer scorer(default_ngram_model_path());
        std::vector<std::int32_t> theirs;
        const auto history = model->history_of({ids, ids.size()});
        scorer.scores(history, theirs);
        for (std::size_t w = 0; w < row.size(); ++w) {
            if (static_cast<std::int64_t>(w) == model->sentence_start_id()) continue;
            QVERIFY(std::abs(row[w] - scorer.to_ln(theirs[w])) <= 1e-12);
        }
    }

    // 1,000 random histories: the fast row equals the word-by-word scorer on
    // every word. Half are real text (a word and one of its successors), half
    // any ids; one and zero words too, and the file's out-of-order ranges.
    void realModelRandomHistories() {
        if (!default_ngram_model_installed()) QSKIP("Debian's pocketsphinx-en-us is not installed");
        if (!SphinxScorer::available()) QSKIP("this build has no libsphinxbase (install libsphinxbase-dev)");
        const auto model = NgramModel::load(default_ngram_model_path());
        SphinxScorer scorer(default_ngram_model_path());
        const auto vocab = static_cast<std::uint32_t>(model->vocab_size());
        std::mt19937_64 rng(20261203);
        std::uniform_int_distribution<std::uint32_t> any(0, vocab - 1);
        std::vector<std::int32_t> ours;
        std::vector<std::int32_t> theirs;
        std::vector<double> row;
        const auto check = [&](const std::vector<std::uint32_t>& history) {
            model->scores_for_history(history, ours);
            scorer.scores(history, theirs);
            compare_scores(ours, theirs, history);
        };
        for (int i = 0; i < 1000; ++i) {
            std::vector<std::uint32_t> history;
            if (i % 2 == 0) {
                // A word the model continues, and a likely next word after it.
                const std::uint32_t h2 = any(rng);
                model->row_for_history(std::vector<std::uint32_t>{h2}, row);
                const auto best = static_cast<std::uint32_t>(std::max_element(row.begin(), row.end()) - row.begin());
                history = {best, h2};
            } else {
                history = {any(rng), any(rng)};
            }
            history.resize(static_cast<std::size_t>(i % 10 == 1 ? 1 : i % 10 == 3 ? 0 : 2));
            check(history);
        }
        // The two trigram ranges the writer left out of order: every h2 listed
        // there, as the history of that bigram.
        const NgramTrie trie = NgramTrie::read_file(default_ngram_model_path());
        const auto& unordered = trie.unordered_ranges(3);
        QCOMPARE(unordered.size(), 2U);
        for (const std::uint32_t begin : unordered) {
            for (std::uint32_t w = 0; w < vocab; ++w) {
                const auto bigrams = trie.bigrams_ending_in(w);
                for (std::uint32_t e = bigrams.begin; e < bigrams.end; ++e) {
                    const auto children = trie.entry_children(2, e);
                    if (children.begin != begin || children.empty()) continue;
                    for (std::uint32_t t = children.begin; t < children.end; ++t) {
                        check({trie.entry_word(2, e), trie.entry_word(3, t)});
                    }
                }
            }
        }
    }

    void restrictedOrdersCondition() {
        const auto model = tiny();
        const auto bigram = model->restricted(2);
        const auto unigram = model->restricted(1);
        const std::int64_t context[] = {3, 2};  // "b a"
        const ModelContext at{context, 2};
        QCOMPARE(model->history_of(at), (std::vector<std::uint32_t>{2, 3}));
        QCOMPARE(bigram->history_of(at), (std::vector<std::uint32_t>{2}));
        QVERIFY(unigram->history_of(at).empty());
        std::vector<double> row;
        bigram->next_logits(at, row);
        QCOMPARE(row[3], -5000.0 * std::log(1.0001));  // P(b | a), no trigram
        QVERIFY_THROWS_EXCEPTION(InputError, model->restricted(4));
        QVERIFY(bigram->description().find("restricted") != std::string::npos);
    }

    // The context a row conditions on: the last words after the sentence start;
    // an unknown word cuts it; </s> starts a new sentence.
    void historyRules() {
        const auto model = tiny();
        const auto history = [&](std::vector<std::int64_t> ids) { return model->history_of({ids, ids.size()}); };
        using H = std::vector<std::uint32_t>;
        QCOMPARE(history({}), (H{1}));
        QCOMPARE(history({2}), (H{2, 1}));
        QCOMPARE(history({2, 3, 4}), (H{4, 3}));
        QCOMPARE(history({kUnknownWord, 4}), (H{4}));
        QCOMPARE(history({4, kUnknownWord}), H{});
        QCOMPARE(history({2, 0}), (H{1}));
        QCOMPARE(history({2, 0, 3}), (H{3, 1}));
        QCOMPARE(history({3, 1, 2}), (H{2, 1}));
    }

    void tokenizer() {
        const auto model = tiny();
        auto words = model->tokenize("  A b,\t(C) d! e ");
        QCOMPARE(words.size(), 6U);
        QCOMPARE(words[0].text, std::string("a"));
        QCOMPARE(words[0].id, 2);
        QCOMPARE(words[2].id, 4);
        QCOMPARE(words[3].id, 5);
        QCOMPARE(words[4].id, 0);  // "!" ends the sentence: </s>
        QCOMPARE(words[4].text, std::string("."));
        QCOMPARE(words[5].id, kUnknownWord);
        QCOMPARE(words[5].text, std::string("e"));
        words = model->tokenize("a , b");
        QCOMPARE(words.size(), 3U);
        QCOMPARE(words[1].id, kUnknownWord);  // punctuation alone is shown, unknown
        QCOMPARE(model->token_text(0), std::string("."));
        QCOMPARE(model->token_text(3), std::string("b"));
    }

    void badPrompts_data() {
        QTest::addColumn<QByteArray>("prompt");
        QTest::addColumn<QString>("message");
        QTest::newRow("empty") << QByteArray("") << "prompt: empty";
        QTest::newRow("blank") << QByteArray(" \n\t ") << "prompt: empty";
        QTest::newRow("control byte") << QByteArray("a\x01" "b") << "a control character at byte 1";
        QTest::newRow("escape") << QByteArray("a \x1b[31m") << "a control character at byte 2";
        QTest::newRow("invalid utf-8") << QByteArray("caf\xe9") << "not valid UTF-8 at byte 3";
        QTest::newRow("truncated utf-8") << QByteArray("a \xe2\x82") << "not valid UTF-8 at byte 2";
        QByteArray many;
        for (int i = 0; i < 100000; ++i) many += "a ";
        QTest::newRow("100,000 words") << many << "more than 10000 words";
        QTest::newRow("2 MB") << QByteArray(2 << 20, 'a') << "bytes, more than the 1048576";
    }
    void badPrompts() {
        QFETCH(QByteArray, prompt);
        QFETCH(QString, message);
        const auto model = tiny();
        try {
            model->tokenize(prompt.toStdString());
            QFAIL("accepted");
        } catch (const InputError& error) {
            const QString what = QString::fromStdString(error.what());
            QCOMPARE(error.field(), std::string("prompt"));
            QVERIFY2(what.contains(message), qPrintable(what));
            QVERIFY(!what.contains('\n'));
            QVERIFY(what.size() < 300);
        }
    }

    // Every way a file can be broken is refused with one line naming the file.
    void brokenFiles_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("message");
        const std::string good = testing::write_ngram_trie(testing::tiny_trigram_model());
        const auto add = [](const char* name, const std::string& bytes, const char* message) {
            QTest::newRow(name) << QByteArray::fromStdString(bytes) << QString(message);
        };
        add("empty", "", "not a CMU Sphinx trie language model");
        add("ARPA text", "\\data\\\nngram 1=3\n", "not a CMU Sphinx trie language model");
        add("header only", "Trie Language Model", "truncated: the order");
        std::string order4 = good;
        order4[19] = 4;
        add("order 4", order4, "order 4: only unigram, bigram and trigram models");
        std::string zero = good;
        put32_at(zero, 20, 0);
        add("no unigrams", zero, "1-gram count 0 is outside");
        std::string huge = good;
        put32_at(huge, 24, 0xFFFFFFFFU);
        add("huge bigram count", huge, "2-gram count 4294967295 is outside");
        for (const std::size_t cut : {30UL, 1000UL, good.size() / 2, good.size() - 40, good.size() - 1}) {
            const std::string name = "truncated at " + std::to_string(cut);
            QTest::newRow(name.c_str()) << QByteArray::fromStdString(good.substr(0, cut)) << QString("truncated");
        }
        // The last word's NUL and the whole word list.
        add("extra bytes", good + std::string(5, 'x'), "bytes follow the word list");
        std::string duplicate = good;
        duplicate.replace(duplicate.size() - 2, 1, "c");  // "d" becomes "c"
        add("duplicate word", duplicate, "word 5 \"c\" appears twice");
        std::string nan_value = good;
        put32_at(nan_value, 19 + 1 + 12 + 4, 0x7FC00000U);  // the first quantiser value
        add("NaN quantiser value", nan_value, "quantiser value 0 is not finite");
        // The unigrams follow the three 2^16-float tables.
        const std::size_t unigrams = 19 + 1 + 12 + 4 + 3 * 65536 * 4;
        std::string inf_unigram = good;
        put32_at(inf_unigram, unigrams, 0xFF800000U);
        add("-inf unigram", inf_unigram, "unigram 0 has a probability or back-off that is not finite");
        std::string huge_value = good;
        put32_at(huge_value, unigrams + 2 * 12 + 4, 0x72BBE000U);  // unigram 2's back-off: 7.4e30
        add("value too large", huge_value, "unigram 2 has a probability or back-off that is 7.4");
        std::string huge_quant = good;
        put32_at(huge_quant, 36 + 4 * 7, 0xCF000001U);  // quantiser value 7: -2^31 and a bit
        add("quantiser value too large", huge_quant, "quantiser value 7 is -2147483904, outside +-268435456");
        std::string backwards = good;
        put32_at(backwards, unigrams + 4 * 12 + 8, 2);  // unigram 3's bigrams [4, 2)
        add("pointer going back", backwards, "points to 2-grams");
        std::string past_end = good;
        put32_at(past_end, unigrams + 6 * 12 + 8, 99);
        add("pointer past the array", past_end, "points to 2-grams");
    }
    void brokenFiles() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, message);
        const QString what = refusal(bytes.toStdString());
        QVERIFY2(what.contains(message), qPrintable(what));
        QVERIFY2(what.startsWith("broken.lm.bin: "), qPrintable(what));
        QVERIFY(!what.contains('\n'));
    }

    // A word outside the vocabulary in a trigram entry's slot.
    void wordOutsideVocabulary() {
        auto spec = testing::tiny_trigram_model();
        spec.trigrams.push_back({6, 1, 2, -1000});  // h2 = 6 in a model of 6 words
        const QString what = refusal(testing::write_ngram_trie(spec));
        QVERIFY2(what.contains("has word 6, outside the vocabulary of 6"), qPrintable(what));
    }

    void missingFiles() {
        try {
            NgramModel::load("/nonexistent/en-us.lm.bin");
            QFAIL("accepted");
        } catch (const InputError& error) {
            QVERIFY(std::string(error.what()).find("/nonexistent/en-us.lm.bin") != std::string::npos);
        }
        qputenv("SAMPLESCOPE_NGRAM_MODEL", "/nonexistent/model.lm.bin");
        try {
            load_model(ModelSpec{}, 0);
            QFAIL("accepted");
        } catch (const InputError& error) {
            QVERIFY2(std::string(error.what()).find("install Debian's pocketsphinx-en-us") != std::string::npos,
                     error.what());
        }
        qunsetenv("SAMPLESCOPE_NGRAM_MODEL");
        QVERIFY_THROWS_EXCEPTION(InputError, parse_model_spec("ngram:4gram", "model"));
        QCOMPARE(parse_model_spec("ngram:bigram", "model").order, 2);
        QCOMPARE(parse_model_spec("rows", "model").kind, std::string("rows"));
    }
};

QTEST_GUILESS_MAIN(TestNgramModel)
#include "test_ngram_model.moc"
