// Beam search (engine/generation/beam.h): where the width covers the whole
// tree, the hypotheses equal an exhaustive search under each engine's rules;
// the length penalty's and early stopping's effect on docs/beam.md's worked
// example, computed by hand; HF's and vLLM's candidates, finished sets and
// lengths where they differ; the repetition penalty on log-probabilities;
// bad input.
#include <QtTest>

#include <cmath>
#include <functional>

#include "engine/base/input_error.h"
#include "engine/core/element_math.h"
#include "engine/core/row_math.h"
#include "engine/generation/beam.h"
#include "engine/models/ngram_model.h"
#include "engine/models/rows_model.h"
#include "tests/support/ngram_builder.h"
#include "tests/support/table_model.h"

using namespace samplescope;
using testing::TableModel;

namespace {

// docs/beam.md's model: 0 = </s>, 1 a, 2 b, 3 c, 4 d; the row follows the last token.
std::shared_ptr<const TableModel> worked_model() {
    return std::make_shared<TableModel>(std::vector<std::vector<double>>{
        {0.01, 0.5, 0.4, 0.05, 0.04},      // after the prompt
        {0.2, 0.2, 0.2, 0.2, 0.2},         // after </s> (never reached)
        {0.6, 0.1, 0.1, 0.1, 0.1},         // after a
        {0.025, 0.025, 0.025, 0.9, 0.025},  // after b
        {0.025, 0.025, 0.025, 0.025, 0.9},  // after c
        {0.9, 0.025, 0.025, 0.025, 0.025},  // after d
    }, 0);
}

const std::vector<PromptWord> kPrompt{{"x", kUnknownWord}, {"y", kUnknownWord}};

std::vector<BeamHypothesis> run(std::shared_ptr<const LanguageModel> model, BeamOptions options,
                                std::vector<BeamStep>* steps = nullptr) {
    BeamSearch search(std::move(model), kPrompt, options);
    while (!search.done()) {
        auto step = search.step();
        if (steps) steps->push_back(std::move(step));
    }
    return search.result();
}

// A V = 4 model (0 = </s>) whose rows follow the last token, no two sums equal.
std::shared_ptr<const TableModel> tree_model() {
    return std::make_shared<TableModel>(std::vector<std::vector<double>>{
        {0.11, 0.42, 0.29, 0.18},
        {0.25, 0.25, 0.25, 0.25},
        {0.37, 0.13, 0.31, 0.19},
        {0.07, 0.46, 0.23, 0.24},
        {0.52, 0.17, 0.09, 0.22},
    }, 0);
}

// Every hypothesis of at most `steps` tokens: ending at </s>, or running to
// the limit (HF finishes every sequence there; vLLM takes running beams into
// its result), scored under the rules, best first.
std::vector<BeamHypothesis> exhaustive(const LanguageModel& model, BeamRules rules, std::size_t steps, double alpha) {
    std::vector<BeamHypothesis> out;
    const std::size_t prompt = kPrompt.size();
    std::function<void(std::vector<std::int64_t>&, double)> walk = [&](std::vector<std::int64_t>& tokens, double sum) {
        std::vector<std::int64_t> context(prompt, kUnknownWord);
        context.insert(context.end(), tokens.begin(), tokens.end());
        std::vector<double> row;
        model.next_logits({context, prompt}, row);
        const auto sums = row_softmax_sums(row.data(), static_cast<std::int64_t>(row.size()));
        for (std::int64_t id = 0; id < static_cast<std::int64_t>(row.size()); ++id) {
            const double s = sum + log_softmax_at(row[static_cast<std::size_t>(id)], sums.max_logit, sums.partition);
            tokens.push_back(id);
            const bool eos = id == 0;
            if (eos || tokens.size() == steps) {
                BeamHypothesis h;
                h.tokens = tokens;
                h.logprob = s;
                h.length = rules == BeamRules::Hf ? tokens.size() : prompt + tokens.size() - (eos ? 1 : 0);
                h.score = s / std::pow(static_cast<double>(h.length), alpha);
                out.push_back(h);
            } else {
                walk(tokens, s);
            }
            tokens.pop_back();
        }
    };
    std::vector<std::int64_t> tokens;
    walk(tokens, 0.0);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.score > b.score; });
    return out;
}

std::shared_ptr<const NgramModel> tiny() {
    return NgramModel::from_trie(NgramTrie::parse(testing::write_ngram_trie(testing::tiny_trigram_model()), "tiny"),
                                 "tiny");
}

}  // namespace

class TestBeam : public QObject {
    Q_OBJECT

private slots:
    // With w = 40 the search keeps every branch of the V = 4, 3-step tree (40
    // hypotheses in all), so it must find exactly what enumeration finds.
    void equalsExhaustiveSearch_data() {
        QTest::addColumn<int>("rules");
        QTest::addColumn<double>("alpha");
        for (const double alpha : {0.0, 1.0, 2.0, -0.5}) {
            QTest::newRow(("hf, alpha " + std::to_string(alpha)).c_str()) << 0 << alpha;
            QTest::newRow(("vllm, alpha " + std::to_string(alpha)).c_str()) << 1 << alpha;
        }
    }
    void equalsExhaustiveSearch() {
        QFETCH(int, rules);
        QFETCH(double, alpha);
        BeamOptions options;
        options.rules = rules == 0 ? BeamRules::Hf : BeamRules::Vllm;
        options.width = 40;
        options.steps = 3;
        options.length_penalty = alpha;
        if (options.rules == BeamRules::Hf) options.early_stopping = EarlyStopping::Never;
        const auto model = tree_model();
        const auto found = run(model, options);
        const auto all = exhaustive(*model, options.rules, 3, alpha);
        QCOMPARE(all.size(), 40U);
        QCOMPARE(found.size(), all.size());
        for (std::size_t i = 0; i < all.size(); ++i) {
            QCOMPARE(found[i].tokens, all[i].tokens);
            QCOMPARE(found[i].logprob, all[i].logprob);
            QCOMPARE(found[i].score, all[i].score);
            QCOMPARE(found[i].length, all[i].length);
        }
        // A narrower beam keeps the best of the same tree only where it reaches it: its best
        // never beats the exhaustive best.
        options.width = 2;
        QVERIFY(run(model, options).front().score <= all.front().score);
    }

    // docs/beam.md: "a ." against "b c d ." under HF's rules, w = 2, 4 steps.
    void lengthPenaltyByHand() {
        const double a_end = std::log(0.5) + std::log(0.6);                     // -1.20397
        const double bcd_end = std::log(0.4) + 3 * std::log(0.9);               // -1.23237
        QVERIFY(std::abs(a_end - -1.20397) < 5e-6);
        QVERIFY(std::abs(bcd_end - -1.23237) < 5e-6);
        BeamOptions options;
        options.width = 2;
        options.steps = 4;
        options.length_penalty = 0.0;  // the plain sum: the short sentence wins
        auto result = run(worked_model(), options);
        QCOMPARE(result.front().tokens, (std::vector<std::int64_t>{1, 0}));
        QVERIFY(std::abs(result.front().score - a_end) < 1e-12);
        QCOMPARE(result[1].tokens, (std::vector<std::int64_t>{2, 3, 4, 0}));
        QVERIFY(std::abs(result[1].score - bcd_end) < 1e-12);

        options.length_penalty = 1.0;  // divided by the generated length, EOS included: 2 and 4
        std::vector<BeamStep> steps;
        result = run(worked_model(), options, &steps);
        QCOMPARE(result.front().tokens, (std::vector<std::int64_t>{2, 3, 4, 0}));
        QVERIFY(std::abs(result.front().score - bcd_end / 4) < 1e-12);  // -0.30809
        QVERIFY(std::abs(result.front().score - -0.30809) < 5e-6);
        QCOMPARE(result[1].tokens, (std::vector<std::int64_t>{1, 0}));
        QVERIFY(std::abs(result[1].score - a_end / 2) < 1e-12);  // -0.60199
        QCOMPARE(steps.size(), 4U);
        // Step 3: "b c ." ends but ranks third of the 2w: not a hypothesis.
        bool bc_end_seen = false;
        for (const auto& c : steps[2].candidates) {
            if (c.token == 0 && steps[2].beams[c.beam].tokens == std::vector<std::int64_t>{2, 3}) {
                bc_end_seen = true;
                QCOMPARE(c.rank, 2U);
                QCOMPARE(c.fate, CandidateFate::NotFinished);
            }
        }
        QVERIFY(bc_end_seen);
        // After step 3 the best running beam "b c d" could still win: -1.12703 / 3 > "a a ." at -3.50656 / 3.
        QVERIFY(std::abs(*steps[2].best_possible - (std::log(0.4) + 2 * std::log(0.9)) / 3) < 1e-12);
        QVERIFY(std::abs(*steps[2].worst_finished - (std::log(0.5) + std::log(0.1) + std::log(0.6)) / 3) < 1e-12);

        // early_stopping true stops once w = 2 are finished (after step 3) and misses it.
        options.early_stopping = EarlyStopping::True;
        steps.clear();
        result = run(worked_model(), options, &steps);
        QCOMPARE(steps.size(), 3U);
        QCOMPARE(result.front().tokens, (std::vector<std::int64_t>{1, 0}));
        QCOMPARE(result[1].tokens, (std::vector<std::int64_t>{1, 1, 0}));

        // vLLM divides by the prompt's 2 tokens plus the generated ones, EOS left out: 3 and 5.
        options = BeamOptions{};
        options.rules = BeamRules::Vllm;
        options.width = 2;
        options.steps = 4;
        result = run(worked_model(), options);
        QCOMPARE(result.front().tokens, (std::vector<std::int64_t>{2, 3, 4, 0}));
        QVERIFY(std::abs(result.front().score - bcd_end / 5) < 1e-12);  // -0.24647
        QCOMPARE(result[1].tokens, (std::vector<std::int64_t>{1, 0}));
        QVERIFY(std::abs(result[1].score - a_end / 3) < 1e-12);  // -0.40132
        options.length_penalty = 0.0;
        QCOMPARE(run(worked_model(), options).front().tokens, (std::vector<std::int64_t>{1, 0}));
    }

    // vLLM completes every EOS among each beam's 2w; HF only those ranked in the first w.
    void finishedSetsDiffer() {
        BeamOptions options;
        options.width = 2;
        options.steps = 2;
        options.rules = BeamRules::Vllm;
        std::vector<BeamStep> steps;
        run(worked_model(), options, &steps);
        // Step 2: "a ." and the unlikely "b ." (0.4 x 0.025) are both completed.
        QCOMPARE(steps[1].finished.size(), 2U);
        options.rules = BeamRules::Hf;
        steps.clear();
        run(worked_model(), options, &steps);
        // HF's step 2 is the length limit: the first w = 2 candidates finish ("b c", "a ."), no other.
        QCOMPARE(steps[1].finished.size(), 2U);
        for (const auto& h : steps[1].finished) QVERIFY(h.tokens != (std::vector<std::int64_t>{2, 0}));
    }

    // With the end of text ignored, both rules keep the same w beams at every step.
    void sameBeamsWithoutEos() {
        const auto model = tiny();
        for (const std::size_t w : {1UL, 2UL, 3UL}) {
            BeamOptions options;
            options.width = w;
            options.steps = 6;
            options.ignore_eos = true;
            BeamSearch hf(model, model->tokenize("a b"), options);
            options.rules = BeamRules::Vllm;
            BeamSearch vllm(model, model->tokenize("a b"), options);
            while (!hf.done()) {
                const auto a = hf.step();
                const auto b = vllm.step();
                if (a.step == options.steps) break;  // HF's length limit finishes every candidate
                QCOMPARE(a.kept.size(), b.kept.size());
                for (std::size_t i = 0; i < a.kept.size(); ++i) {
                    QCOMPARE(a.kept[i].tokens, b.kept[i].tokens);
                    QCOMPARE(a.kept[i].logprob, b.kept[i].logprob);
                }
            }
        }
    }

    // HF's repetition penalty acts on the log-probabilities (s < 0: s x r), so
    // r < 1 raises a repeated token: at step 2 "a" scores 0.5 ln 0.1 after "a".
    void repetitionPenaltyOnLogProbabilities() {
        BeamOptions options;
        options.width = 1;
        options.steps = 2;
        options.ignore_eos = true;
        options.repetition_penalty = 0.5;
        std::vector<BeamStep> steps;
        run(worked_model(), options, &steps);
        QCOMPARE(steps[0].kept.front().tokens, std::vector<std::int64_t>{1});
        QVERIFY(std::abs(steps[0].candidates.front().token_logprob - std::log(0.5)) < 1e-12);  // the prompt: no penalty
        QCOMPARE(steps[1].candidates.size(), 2U);
        QCOMPARE(steps[1].candidates[0].token, 0);  // </s>, ln 0.6 = -0.51
        QVERIFY(std::abs(steps[1].candidates[0].token_logprob - std::log(0.6)) < 1e-12);
        QCOMPARE(steps[1].candidates[1].token, 1);  // a again: 0.5 ln 0.1 = -1.15, above b, c, d at ln 0.1
        QVERIFY(std::abs(steps[1].candidates[1].token_logprob - 0.5 * std::log(0.1)) < 1e-12);
    }

    void refusals() {
        const auto model = worked_model();
        const auto refused = [&](BeamOptions options, const char* field) {
            try {
                BeamSearch search(model, kPrompt, options);
            } catch (const InputError& e) {
                return e.field() == field;
            }
            return false;
        };
        BeamOptions options;
        options.width = 0;
        QVERIFY(refused(options, "width"));
        options.width = kMaxBeamWidth + 1;
        QVERIFY(refused(options, "width"));
        options = BeamOptions{};
        options.steps = 0;
        QVERIFY(refused(options, "steps"));
        options.steps = kMaxBeamSteps + 1;
        QVERIFY(refused(options, "steps"));
        options = BeamOptions{};
        options.length_penalty = std::nan("");
        QVERIFY(refused(options, "length_penalty"));
        options = BeamOptions{};
        options.rules = BeamRules::Vllm;
        options.early_stopping = EarlyStopping::True;
        QVERIFY(refused(options, "early_stopping"));
        options.early_stopping = EarlyStopping::False;
        options.repetition_penalty = 1.2;
        QVERIFY(refused(options, "repetition_penalty"));
        options = BeamOptions{};
        options.repetition_penalty = 0.0;
        QVERIFY(refused(options, "repetition_penalty"));
        QVERIFY_THROWS_EXCEPTION(InputError, parse_beam_rules("sglang", "beam-rules"));
        QVERIFY_THROWS_EXCEPTION(InputError, parse_early_stopping("True", "early-stopping"));
        // A rows model holds T steps.
        LogitsMatrix rows;
        rows.rows = 3;
        rows.cols = 4;
        rows.values.assign(12, 0.5);
        const auto recorded = std::make_shared<const RowsModel>(rows, std::vector<std::string>{}, "rows");
        options = BeamOptions{};
        options.steps = 4;
        QVERIFY_THROWS_EXCEPTION(InputError, BeamSearch(recorded, {}, options));
        BeamSearch done(model, kPrompt, [] {
            BeamOptions o;
            o.steps = 1;
            return o;
        }());
        done.step();
        QVERIFY(done.done());
        QVERIFY_THROWS_EXCEPTION(InputError, done.step());
    }
};

QTEST_GUILESS_MAIN(TestBeam)
#include "test_beam.moc"
