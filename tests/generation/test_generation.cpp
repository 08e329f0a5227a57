// Generation: each step samples the model's row for the context so far
// through the request, so it replays from its seed, counts draws as the
// contract says, resumes from a saved state, equals `trace` on a rows model's
// rows, and runs 10,000 steps in bounded memory.
#include <QtTest>

#include <sys/resource.h>

#include "engine/base/input_error.h"
#include "engine/generation/generation.h"
#include "engine/models/ngram_model.h"
#include "engine/models/rows_model.h"
#include "engine/pipelines/pipeline_presets.h"
#include "tests/support/ngram_builder.h"

using namespace samplescope;

namespace {

std::shared_ptr<const NgramModel> tiny() {
    return NgramModel::from_trie(NgramTrie::parse(testing::write_ngram_trie(testing::tiny_trigram_model()), "tiny"),
                                 "tiny");
}

Generation make(std::shared_ptr<const LanguageModel> model, SamplingParams params, const char* prompt = "a",
                GenerationOptions options = {}, GenerationState state = {}) {
    return Generation(model, preset_pipeline("spec"), params, model->tokenize(prompt), options, std::move(state));
}

std::vector<std::int64_t> run(Generation& generation, int steps) {
    std::vector<std::int64_t> tokens;
    for (int i = 0; i < steps && !generation.ended(); ++i) tokens.push_back(generation.step().token);
    return tokens;
}

long max_rss_kib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

}  // namespace

class TestGeneration : public QObject {
    Q_OBJECT

private slots:
    void sameSeedSameText() {
        SamplingParams params;
        params.seed = 7;
        params.temperature = 1.5;
        GenerationOptions options;
        options.stop_at_end = false;
        auto a = make(tiny(), params, "a", options);
        auto b = make(tiny(), params, "a", options);
        const auto tokens = run(a, 40);
        QCOMPARE(run(b, 40), tokens);
        QCOMPARE(a.text(), b.text());
        params.seed = 8;
        auto c = make(tiny(), params, "a", options);
        QVERIFY(run(c, 40) != tokens);
    }

    // One uniform per sampled token, none when greedy (contract section 1).
    void drawsAsTheContractCounts() {
        SamplingParams params;
        params.seed = 1;
        GenerationOptions options;
        options.stop_at_end = false;
        auto sampled = make(tiny(), params, "a", options);
        run(sampled, 12);
        QCOMPARE(sampled.request().draws_consumed(), 12U);
        params.temperature = 0.0;
        auto greedy = make(tiny(), params, "a", options);
        run(greedy, 12);
        QCOMPARE(greedy.request().draws_consumed(), 0U);
    }

    // A state saved after k tokens continues as the generation did.
    void resumesFromItsState() {
        SamplingParams params;
        params.seed = 3;
        params.repetition_penalty = 1.3;
        params.frequency_penalty = 0.4;
        GenerationOptions options;
        options.stop_at_end = false;
        auto whole = make(tiny(), params, "a b", options);
        std::vector<GenerationState> states;
        std::vector<std::int64_t> tokens;
        for (int i = 0; i < 10; ++i) {
            states.push_back(whole.state());
            tokens.push_back(whole.step().token);
        }
        for (std::size_t k : {0UL, 4UL, 9UL}) {
            auto resumed = make(tiny(), params, "a b", options, states[k]);
            QCOMPARE(resumed.generated().size(), k);
            const auto rest = run(resumed, static_cast<int>(10 - k));
            QCOMPARE(rest, std::vector<std::int64_t>(tokens.begin() + static_cast<std::ptrdiff_t>(k), tokens.end()));
        }
    }

    // Mirostat's mu is part of the state: a resumed llama.cpp chain goes on
    // with the mu the last step left.
    void resumesMirostat() {
        SamplingParams params;
        params.seed = 4;
        params.mirostat = 2;
        params.mirostat_tau = 1.5;
        GenerationOptions options;
        options.stop_at_end = false;
        const auto model = tiny();
        const auto prompt = model->tokenize("c");
        Generation whole(model, preset_pipeline("llamacpp"), params, prompt, options);
        std::vector<GenerationState> states;
        std::vector<std::int64_t> tokens;
        for (int i = 0; i < 12; ++i) {
            states.push_back(whole.state());
            tokens.push_back(whole.step().token);
        }
        QVERIFY(states[6].mirostat_mu.has_value());
        QVERIFY(*states[6].mirostat_mu != 2.0 * params.mirostat_tau);
        Generation resumed(model, preset_pipeline("llamacpp"), params, prompt, options, states[6]);
        QCOMPARE(run(resumed, 6), std::vector<std::int64_t>(tokens.begin() + 6, tokens.end()));
        GenerationState forgot = states[6];
        forgot.mirostat_mu.reset();
        Generation fresh(model, preset_pipeline("llamacpp"), params, prompt, options, forgot);
        QCOMPARE(fresh.request().mirostat_mu(), 2.0 * params.mirostat_tau);
    }

    // The penalties read the generated text: a token generated once is
    // penalised in the next step's row.
    void penaltiesActOnGeneratedText() {
        SamplingParams params;
        params.seed = 11;
        params.presence_penalty = 2.0;
        GenerationOptions options;
        options.stop_at_end = false;
        auto generation = make(tiny(), params, "a", options);
        const auto first = generation.step();
        const auto row = generation.next_row();
        const auto second = generation.step();
        const auto& stages = second.trace.trace.stages;
        const auto presence = std::find_if(stages.begin(), stages.end(),
                                           [](const auto& s) { return s.stage == Stage::PresenceFrequency; });
        QVERIFY(presence != stages.end() && presence->active);
        const auto id = static_cast<std::size_t>(first.token);
        QCOMPARE((*presence->logits)[id], row[id] - 2.0);
    }

    // A rows model's generation is `trace` on row t at step t, with the same
    // request carried across the steps.
    void rowsModelEqualsTraceOnEachRow() {
        LogitsMatrix rows;
        rows.rows = 6;
        rows.cols = 5;
        for (int t = 0; t < 6; ++t) {
            for (int v = 0; v < 5; ++v) rows.values.push_back(std::sin(t * 5 + v) * 3.0);
        }
        const auto model = std::make_shared<const RowsModel>(rows, std::vector<std::string>{}, "rows");
        SamplingParams params;
        params.seed = 42;
        params.top_p = 0.8;
        params.repetition_penalty = 1.2;
        Generation generation(model, preset_pipeline("vllm"), params, {{"", 3}});
        Request request(preset_pipeline("vllm"), params, {3});
        for (std::size_t t = 0; t < 6; ++t) {
            const auto step = generation.step();
            const auto expected = request.step_pipeline(rows.row(t));
            QCOMPARE(step.token, static_cast<std::int64_t>(expected.trace.token));
            QCOMPARE(step.trace.trace.logprob, expected.trace.logprob);
            QCOMPARE(step.trace.trace.u, expected.trace.u);
            QCOMPARE(step.trace.trace.final_kept(), expected.trace.final_kept());
            QCOMPARE(step.trace.trace.final_probs(), expected.trace.final_probs());
        }
        QVERIFY_THROWS_EXCEPTION(InputError, generation.step());  // row 6 does not exist
        QCOMPARE(generation.generated().size(), 6U);               // and nothing changed
    }

    void endsAtTheEndOfText() {
        SamplingParams params;
        params.seed = 5;
        params.temperature = 0.0;
        // After "c a b" the greedy word is </s> in the tiny model's rows... find
        // a prompt whose greedy continuation ends, then step past it.
        auto generation = make(tiny(), params, "b");
        run(generation, 50);
        QVERIFY(generation.ended());
        QVERIFY(generation.generated_text().back() == '.');
        QVERIFY_THROWS_EXCEPTION(InputError, generation.step());
        GenerationOptions options;
        options.stop_at_end = false;
        auto on = make(tiny(), params, "b", options);
        QCOMPARE(run(on, 50).size(), 50U);
    }

    void refusesIdsOutsideTheVocabulary() {
        const auto model = tiny();
        SamplingParams params;
        QVERIFY_THROWS_EXCEPTION(InputError, Generation(model, preset_pipeline("spec"), params, {{"x", 6}}));
        QVERIFY_THROWS_EXCEPTION(InputError, Generation(model, preset_pipeline("spec"), params, {{"x", -2}}));
        GenerationState state;
        state.generated = {1, 9};
        QVERIFY_THROWS_EXCEPTION(InputError, Generation(model, preset_pipeline("spec"), params, {{"a", 2}}, {}, state));
        params.temperature = -1.0;
        QVERIFY_THROWS_EXCEPTION(InputError, Generation(model, preset_pipeline("spec"), params, {{"a", 2}}));
    }

    // 10,000 tokens: no trace is kept, so memory grows by the context alone.
    void tenThousandStepsInBoundedMemory() {
        SamplingParams params;
        params.seed = 9;
        params.repetition_penalty = 1.1;
        params.top_k = 4;
        GenerationOptions options;
        options.stop_at_end = false;
        auto generation = make(tiny(), params, "a", options);
        run(generation, 100);
        const long before = max_rss_kib();
        run(generation, 9900);
        const long after = max_rss_kib();
        QCOMPARE(generation.generated().size(), 10000U);
        QCOMPARE(generation.request().output_ids().size(), 10000U);
#if defined(__SANITIZE_ADDRESS__)
        // AddressSanitizer keeps freed memory in quarantine (256 MB by
        // default), so the peak says nothing about what the steps hold.
        (void)before;
        (void)after;
#else
        QVERIFY2(after - before < 8 * 1024, qPrintable(QString("max RSS grew by %1 KiB").arg(after - before)));
#endif
    }

    void runningText() {
        const std::vector<std::string> texts{"the", "cat", ".", "", "it", "sat", "."};
        QCOMPARE(join_token_texts(texts), std::string("the cat. it sat."));
    }
};

QTEST_GUILESS_MAIN(TestGeneration)
#include "test_generation.moc"
