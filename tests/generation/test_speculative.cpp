// Speculative decoding (engine/generation/speculative.h): the emitted tokens
// follow the target's distribution (the project's verify on 10^5 first
// tokens per case, and the same check failing when the residual is built
// wrong), the acceptance rate equals sum min(p, q), each preset takes its
// uniforms in its documented order (a replay of the stream), the worked
// example of docs/speculative.md, FlashInfer's documented example, the
// presets' differences at their edges, the pipeline and history each
// position sees, and bad input.
#include <QtTest>

#include <cmath>
#include <map>

#include "engine/base/input_error.h"
#include "engine/core/inverse_cdf.h"
#include "engine/generation/generation.h"
#include "engine/generation/speculative.h"
#include "engine/models/ngram_model.h"
#include "engine/models/rows_model.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"
#include "engine/stats/verification.h"
#include "tests/support/ngram_builder.h"
#include "tests/support/table_model.h"

using namespace samplescope;

namespace {

// A distribution from V probabilities (ids with q > 0 kept).
SpecRow row(const std::vector<double>& probs, bool greedy = false) {
    SpecRow r;
    for (std::size_t i = 0; i < probs.size(); ++i) {
        if (probs[i] > 0.0) {
            r.ids.push_back(static_cast<std::int32_t>(i));
            r.probs.push_back(probs[i]);
        }
    }
    r.greedy = greedy;
    return r;
}

const SpecPreset& preset(const char* name) { return spec_preset(name); }

using testing::TableModel;

std::shared_ptr<const NgramModel> tiny() {
    return NgramModel::from_trie(NgramTrie::parse(testing::write_ngram_trie(testing::tiny_trigram_model()), "tiny"),
                                 "tiny");
}

// The first emitted token of n one-token rounds of (p, q) under `preset`, the
// draft's token drawn from q with the same stream; accepted counts the
// acceptances. `residual` replaces the preset's residual when set.
std::vector<std::int64_t> first_tokens(const SpecPreset& preset, const SpecRow& p, const SpecRow& q, std::size_t n,
                                       std::uint64_t seed, std::size_t& accepted,
                                       const ResidualBuilder& residual = {}) {
    Pcg32 rng = stream(seed, kSampleLabel);
    const UniformSource next = [&] { return rng.uniform_f64(); };
    SpecRoundInput input;
    input.vocab = 6;
    input.draft = {q};
    input.target = {p, p};
    input.draft_tokens = {0};
    std::vector<std::int64_t> out;
    out.reserve(n);
    accepted = 0;
    for (std::size_t i = 0; i < n; ++i) {
        bool fell_back = false;
        input.draft_tokens[0] = inverse_cdf_draw(q.ids, q.probs, next(), nullptr, fell_back);
        const SpecVerification v = verify_round(preset, input, next, residual);
        out.push_back(v.emitted.front());
        accepted += v.accepted;
    }
    return out;
}

bool passes(const SpecRow& p, const std::vector<std::int64_t>& samples) {
    const VerifyRowInput input{&p.ids, &p.probs, samples};
    return verify_rows(std::span(&input, 1)).pass;
}

struct Pair {
    const char* name;
    std::vector<double> p;
    std::vector<double> q;
};

const std::vector<Pair>& pairs() {
    static const std::vector<Pair> cases{
        {"overlapping", {0.3, 0.25, 0.2, 0.1, 0.1, 0.05}, {0.1, 0.1, 0.2, 0.3, 0.2, 0.1}},
        {"q = 0 where p > 0", {0.2, 0.1, 0.3, 0.2, 0.1, 0.1}, {0.5, 0.5, 0, 0, 0, 0}},
        {"p = 0 where q > 0", {0.5, 0.5, 0, 0, 0, 0}, {0.2, 0.1, 0.3, 0.2, 0.1, 0.1}},
        {"nearly disjoint", {0.9, 0.1, 0, 0, 0, 0}, {0, 0.1, 0.9, 0, 0, 0}},
        {"p = q", {0.4, 0.3, 0.2, 0.05, 0.03, 0.02}, {0.4, 0.3, 0.2, 0.05, 0.03, 0.02}},
    };
    return cases;
}

// The residual built wrong: normalize(p) instead of normalize(max(0, p - q)).
void wrong_residual(const SpecRow& p, const SpecRow&, IdList& ids, Values& probs) {
    ids = p.ids;
    probs = p.probs;
}

// Every uniform a round recorded, in the order its preset takes them from the stream.
std::vector<double> recorded_order(const SpecPreset& preset, const SpeculativeRound& round) {
    std::vector<double> out;
    for (const auto& u : round.draft_u) {
        if (u) out.push_back(*u);
    }
    const SpecVerification& v = round.verification;
    if (preset.draws == SpecRule::DrawsVllm) {
        if (v.bonus_u) out.push_back(*v.bonus_u);
        for (const auto& at : v.positions) {
            if (at.u) out.push_back(*at.u);
        }
        // The recovered token's uniform: the final's when a residual was drawn.
        if (!v.final.bonus && v.final.u) out.push_back(*v.final.u);
    } else {
        for (const auto& at : v.positions) {
            if (at.u) out.push_back(*at.u);
        }
        if (v.final.u && preset.draws == SpecRule::DrawsContract) out.push_back(*v.final.u);
    }
    return out;
}

}  // namespace

class TestSpeculative : public QObject {
    Q_OBJECT

private slots:
    // docs/speculative.md's worked example: seed 0, V = 4, k = 2, the
    // contract's first five uniforms (its check table gives the first three).
    void workedExample() {
        SpecRoundInput input;
        input.vocab = 4;
        const SpecRow q = row({0.1, 0.2, 0.3, 0.4});
        input.draft = {q, q};
        input.target = {row({0.3, 0.3, 0.2, 0.2}), row({0.5, 0.4, 0.03, 0.07}), row({0.25, 0.25, 0.25, 0.25})};
        Pcg32 rng = stream(0, kSampleLabel);
        const UniformSource next = [&] { return rng.uniform_f64(); };
        bool fell_back = false;
        const double u1 = next();
        const double u2 = next();
        QCOMPARE(u1, 0.80209496430867);
        QCOMPARE(u2, 0.5753080244745853);
        input.draft_tokens = {inverse_cdf_draw(q.ids, q.probs, u1, nullptr, fell_back),
                              inverse_cdf_draw(q.ids, q.probs, u2, nullptr, fell_back)};
        QCOMPARE(input.draft_tokens, (std::vector<std::int32_t>{3, 2}));  // d, c

        const Pcg32 after_draft = rng;
        const SpecVerification v = verify_round(preset("spec"), input, next);
        QCOMPARE(v.positions[0].acceptance, 0.5);
        QCOMPARE(*v.positions[0].u, 0.35363254105843234);
        QVERIFY(v.positions[0].accepted);
        QCOMPARE(v.positions[0].overlap, 0.7);
        QVERIFY(std::abs(v.positions[1].acceptance - 0.1) < 1e-15);
        QCOMPARE(*v.positions[1].u, 0.1514950614073799);
        QVERIFY(!v.positions[1].accepted);
        QVERIFY(std::abs(v.positions[1].overlap - 0.4) < 1e-15);
        QCOMPARE(v.final.ids, (IdList{0, 1}));
        QVERIFY(std::abs(v.final.probs[0] - 2.0 / 3.0) < 1e-15 && std::abs(v.final.probs[1] - 1.0 / 3.0) < 1e-15);
        QCOMPARE(*v.final.u, 0.05333949583961406);
        QCOMPARE(v.emitted, (std::vector<std::int32_t>{3, 0}));  // d, a
        QCOMPARE(v.uniforms, 3U);                                // 2 draft + 3 = 5 in all

        // vLLM's order on the same seed: the bonus first (u3 on p_2: b), then
        // both tests (u4, u5: both accepted), then the recovered noise (u6).
        rng = after_draft;
        const SpecVerification vllm = verify_round(preset("vllm"), input, next);
        QCOMPARE(*vllm.bonus_u, 0.35363254105843234);
        QCOMPARE(*vllm.positions[0].u, 0.1514950614073799);
        QCOMPARE(*vllm.positions[1].u, 0.05333949583961406);
        QCOMPARE(vllm.emitted, (std::vector<std::int32_t>{3, 2, 1}));  // d, c, b
        QCOMPARE(vllm.uniforms, 4U);
        // FlashInfer: uniform_samples = (u3, u4, u5); the residual takes u[min(1 + 1, 2)] = u5.
        rng = after_draft;
        const SpecVerification fi = verify_round(preset("flashinfer"), input, next);
        QCOMPARE(fi.emitted, (std::vector<std::int32_t>{3, 0}));
        QCOMPARE(*fi.final.u, 0.05333949583961406);
        QCOMPARE(fi.uniforms, 3U);
        // The same three uniforms laid out alike: the three rules agree on this round.
        const std::vector<double> aligned{0.35363254105843234, 0.1514950614073799, 0.05333949583961406};
        const SpecRoundDiff d = diff_round(preset("vllm"), preset("flashinfer"), input, aligned);
        QVERIFY(d.same_emitted);
        QVERIFY(d.differences.empty());
        QCOMPARE(verify_round_aligned(preset("spec"), input, aligned).emitted, (std::vector<std::int32_t>{3, 0}));
    }

    // flashinfer/sampling.py chain_speculative_sampling's documented example:
    // output [2, 0, -1], one accepted, one emitted draft token, whatever the uniforms.
    void flashInferDocumentedExample() {
        SpecRoundInput input;
        input.vocab = 4;
        input.draft = {row({0.1, 0.2, 0.3, 0.4}), row({0.2, 0.3, 0.4, 0.1})};
        input.draft_tokens = {2, 1};
        input.target = {row({0.0, 0.1, 0.6, 0.3}), row({1.0, 0.0, 0.0, 0.0}), row({0.7, 0.1, 0.1, 0.1})};
        Pcg32 rng = stream(42, kSampleLabel);
        for (const auto& p : kSpecPresets) {
            for (int trial = 0; trial < 200; ++trial) {
                const std::vector<double> u{rng.uniform_f64() + 1e-9, rng.uniform_f64() + 1e-9, rng.uniform_f64()};
                const SpecVerification v = verify_round_aligned(p, input, u);
                QCOMPARE(v.emitted, (std::vector<std::int32_t>{2, 0}));
                QCOMPARE(v.accepted, 1U);
                QCOMPARE(v.final.ids, IdList{0});
            }
        }
    }

    // The emitted first token follows p for every (p, q) pair and preset; the
    // acceptance rate is sum min(p, q) within its 99.9% interval.
    void exactness_data() {
        QTest::addColumn<QString>("rules");
        QTest::addColumn<int>("pair");
        for (const auto& p : kSpecPresets) {
            for (std::size_t i = 0; i < pairs().size(); ++i) {
                QTest::newRow((std::string(p.name) + ": " + pairs()[i].name).c_str())
                    << QString::fromUtf8(p.name.data(), static_cast<qsizetype>(p.name.size())) << static_cast<int>(i);
            }
        }
    }
    void exactness() {
        QFETCH(QString, rules);
        QFETCH(int, pair);
        const Pair& c = pairs()[static_cast<std::size_t>(pair)];
        const SpecRow p = row(c.p);
        const SpecRow q = row(c.q);
        const std::size_t n = 100000;
        std::size_t accepted = 0;
        const auto tokens =
            first_tokens(preset(rules.toStdString().c_str()), p, q, n, 1000 + static_cast<std::uint64_t>(pair), accepted);
        QVERIFY2(passes(p, tokens), c.name);
        const double alpha = overlap(p, q);
        const double rate = static_cast<double>(accepted) / static_cast<double>(n);
        const double interval = 3.29 * std::sqrt(alpha * (1.0 - alpha) / static_cast<double>(n));
        QVERIFY2(std::abs(rate - alpha) <= interval + 1e-12,
                 qPrintable(QString("rate %1, expected %2 +- %3").arg(rate).arg(alpha).arg(interval)));
    }

    // The same check fails when the residual is normalize(p): it can tell.
    void wrongResidualFails_data() { exactness_data(); }
    void wrongResidualFails() {
        QFETCH(QString, rules);
        QFETCH(int, pair);
        const Pair& c = pairs()[static_cast<std::size_t>(pair)];
        if (std::string(c.name) == "p = q") QSKIP("p = q never rejects: the residual is never drawn");
        const SpecRow p = row(c.p);
        const SpecRow q = row(c.q);
        std::size_t accepted = 0;
        const auto tokens = first_tokens(preset(rules.toStdString().c_str()), p, q, 100000,
                                         1000 + static_cast<std::uint64_t>(pair), accepted, wrong_residual);
        QVERIFY2(!passes(p, tokens), c.name);
    }

    // With context-free rows every emitted token follows p: the second one too.
    void laterTokensFollowP() {
        const std::vector<double> p{0.3, 0.25, 0.2, 0.1, 0.1, 0.05};
        const std::vector<double> q{0.1, 0.1, 0.2, 0.3, 0.2, 0.1};
        std::vector<std::vector<double>> rows(7, p);
        std::vector<std::vector<double>> draft_rows(7, q);
        const auto target = std::make_shared<TableModel>(rows);
        const auto draft = std::make_shared<TableModel>(draft_rows);
        std::vector<std::int64_t> second;
        for (std::uint64_t seed = 0; second.size() < 10000; ++seed) {
            SamplingParams params;
            params.seed = seed;
            SpeculativeOptions options;
            options.k = 3;
            Speculation s(target, draft, preset_pipeline("spec"), params, {{"a", 0}}, options);
            const auto round = s.round();
            if (round.emitted.size() >= 2) second.push_back(round.emitted[1]);
        }
        QVERIFY(passes(row(p), second));
    }

    // Each preset takes its uniforms from the request's stream in its order:
    // the recorded ones are the stream's, one after another, round by round.
    void drawOrderReplaysTheStream_data() {
        QTest::addColumn<QString>("rules");
        for (const auto& p : kSpecPresets) QTest::newRow(p.name.data()) << QString::fromUtf8(p.name.data());
    }
    void drawOrderReplaysTheStream() {
        QFETCH(QString, rules);
        const SpecPreset& p = preset(rules.toStdString().c_str());
        const auto model = tiny();
        SamplingParams params;
        params.seed = 5;
        params.temperature = 1.3;
        SpeculativeOptions options;
        options.k = 3;
        options.preset = &p;
        options.stop_at_end = false;
        Speculation s(model, model->restricted(2), preset_pipeline("spec"), params, model->tokenize("a"), options);
        Pcg32 rng = stream(5, kSampleLabel);
        std::uint64_t draws = 0;
        for (int r = 0; r < 12; ++r) {
            const auto round = s.round();
            QCOMPARE(round.draws_before, draws);
            // vLLM also draws a recovered uniform when the bonus is used; FlashInfer k + 1.
            std::vector<double> expected;
            const std::uint64_t taken = round.draws_after - round.draws_before;
            for (std::uint64_t i = 0; i < taken; ++i) expected.push_back(rng.uniform_f64());
            draws = round.draws_after;
            const auto recorded = recorded_order(p, round);
            QVERIFY2(recorded.size() <= expected.size(), "more uniforms recorded than taken");
            // Every recorded uniform sits at its place in the stream.
            if (p.draws == SpecRule::DrawsContract) {
                QCOMPARE(recorded, expected);
                QCOMPARE(taken, round.k + round.verification.tested + 1);
            } else if (p.draws == SpecRule::DrawsVllm) {
                QCOMPARE(taken, 2 * round.k + (round.k > 0 ? 2 : 1));
                QCOMPARE(std::vector<double>(expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(recorded.size())),
                         recorded);
                if (round.verification.final.bonus) QCOMPARE(*round.verification.final.u, expected[round.k]);
            } else {
                QCOMPARE(taken, 2 * round.k + 1);
                const std::size_t at = std::min(round.verification.final.position + 1, round.k);
                QCOMPARE(*round.verification.final.u, expected[round.k + at]);
                QCOMPARE(std::vector<double>(expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(recorded.size())),
                         recorded);
            }
        }
        QCOMPARE(s.draws_consumed(), draws);
    }

    // The tokens of a seed are fixed: a replay gives them again, another seed others.
    void exactSequenceForASeed() {
        const auto model = tiny();
        SamplingParams params;
        params.seed = 1;
        SpeculativeOptions options;
        options.k = 3;
        options.stop_at_end = false;
        options.max_tokens = 16;
        const auto run = [&](const SamplingParams& with) {
            Speculation s(model, model->restricted(2), preset_pipeline("spec"), with, model->tokenize("a"), options);
            while (!s.exhausted()) s.round();
            return std::make_pair(std::vector<std::int64_t>(s.generated().begin(), s.generated().end()),
                                  s.draws_consumed());
        };
        const auto [tokens, draws] = run(params);
        QCOMPARE(tokens.size(), 16U);
        // c b a b b </s> b a a b </s> a c b a d, in 28 uniforms.
        const std::vector<std::int64_t> recorded{4, 3, 2, 3, 3, 0, 3, 2, 2, 3, 0, 2, 4, 3, 2, 5};
        QCOMPARE(tokens, recorded);
        QCOMPARE(draws, 28U);
        QCOMPARE(run(params), std::make_pair(tokens, draws));
        params.seed = 2;
        QVERIFY(run(params).first != tokens);
    }

    // Greedy rows take no uniform (spec, vllm); the text is the target's greedy text.
    void greedyIsTheTargetsGreedyText() {
        const auto model = tiny();
        SamplingParams params;
        params.seed = 3;
        params.temperature = 0.0;
        GenerationOptions generation_options;
        generation_options.stop_at_end = false;
        Generation greedy(model, preset_pipeline("spec"), params, model->tokenize("a"), generation_options);
        std::vector<std::int64_t> expected;
        for (int i = 0; i < 20; ++i) expected.push_back(greedy.step().token);
        for (const auto& p : kSpecPresets) {
            SpeculativeOptions options;
            options.k = 4;
            options.preset = &p;
            options.stop_at_end = false;
            options.max_tokens = 20;
            Speculation s(model, model->restricted(1), preset_pipeline("spec"), params, model->tokenize("a"), options);
            std::uint64_t rounds = 0;
            std::uint64_t k_sum = 0;
            while (!s.exhausted()) {
                const auto round = s.round();
                ++rounds;
                k_sum += round.k;
            }
            QCOMPARE(std::vector<std::int64_t>(s.generated().begin(), s.generated().end()), expected);
            const std::uint64_t draws = p.draws == SpecRule::DrawsFlashInfer ? k_sum + rounds : 0;
            QCOMPARE(s.draws_consumed(), draws);
        }
    }

    // Both models' rows go through the pipeline with the history of their
    // position: the first token follows the target pipeline's distribution
    // (every preset), and position 1 sees draft token 0 in its history.
    void throughThePipeline_data() {
        QTest::addColumn<QString>("pipeline");
        for (const char* name : {"spec", "vllm", "sglang", "hf", "llamacpp", "flashinfer-joint"}) {
            QTest::newRow(name) << QString(name);
        }
    }
    void throughThePipeline() {
        QFETCH(QString, pipeline);
        const std::vector<std::vector<double>> target_rows{
            {0.05, 0.3, 0.25, 0.2, 0.15, 0.05}, {0.1, 0.1, 0.4, 0.2, 0.1, 0.1},  {0.3, 0.3, 0.1, 0.1, 0.1, 0.1},
            {0.2, 0.2, 0.2, 0.2, 0.1, 0.1},     {0.05, 0.05, 0.1, 0.5, 0.2, 0.1}, {0.6, 0.1, 0.1, 0.1, 0.05, 0.05},
            {0.1, 0.2, 0.3, 0.2, 0.1, 0.1}};
        std::vector<std::vector<double>> draft_rows(7, {0.2, 0.2, 0.2, 0.15, 0.15, 0.1});
        const auto target = std::make_shared<TableModel>(target_rows);
        const auto draft = std::make_shared<TableModel>(draft_rows);
        const Pipeline pipe = preset_pipeline(pipeline.toStdString());
        SamplingParams params;
        params.temperature = 0.8;
        params.top_k = 4;
        params.top_p = 0.95;
        params.repetition_penalty = 1.5;
        if (pipeline == "llamacpp") {
            params.xtc_probability = 0.5;
            params.xtc_threshold = 0.1;
            params.min_p = 0.05;
        }
        const std::vector<PromptWord> prompt{{"b", 1}};
        // The target's exact distribution after the prompt, as the pipeline gives it.
        std::vector<double> logits;
        target->next_logits({std::vector<std::int64_t>{1}, 1}, logits);
        const std::vector<std::int64_t> prompt_ids{1};
        const SpecRow p0 = exact_distribution(pipe, PipelineInput{logits, params, prompt_ids, {}});
        std::vector<std::int64_t> first;
        for (std::uint64_t seed = 0; seed < 3000; ++seed) {
            params.seed = seed;
            SpeculativeOptions options;
            options.k = 2;
            Speculation s(target, draft, pipe, params, prompt, options);
            const auto round = s.round();
            first.push_back(round.emitted.front());
            if (seed == 0) {
                // Position 1's target row: the context and history hold x_0.
                const std::int64_t x0 = round.rows.draft_tokens[0];
                target->next_logits({std::vector<std::int64_t>{1, x0}, 1}, logits);
                const std::vector<std::int64_t> output{x0};
                const SpecRow p1 = exact_distribution(pipe, PipelineInput{logits, params, prompt_ids, output});
                QCOMPARE(round.rows.target[1].ids, p1.ids);
                QCOMPARE(round.rows.target[1].probs, p1.probs);
                QCOMPARE(round.rows.target[0].probs, p0.probs);
            }
        }
        QVERIFY(passes(p0, first));
    }

    // exact_distribution equals the traced step's exact_ids / exact_probs bit
    // for bit, XTC's mixture included, on random rows of every preset.
    void exactDistributionEqualsTheTrace() {
        Pcg32 rng = stream(77, kSampleLabel);
        for (const auto& info : kPresets) {
            for (int trial = 0; trial < 40; ++trial) {
                std::vector<double> logits(50);
                for (double& l : logits) l = 6.0 * rng.uniform_f64() - 3.0;
                SamplingParams params;
                params.seed = trial;
                params.temperature = trial % 5 == 0 ? 0.0 : 0.5 + rng.uniform_f64();
                params.top_k = trial % 3 == 0 ? 10 : 0;
                params.top_p = trial % 4 == 0 ? 0.9 : 1.0;
                params.min_p = trial % 6 == 0 ? 0.05 : 0.0;
                params.repetition_penalty = 1.2;
                if (trial % 2 == 1) {
                    params.xtc_probability = 0.6;
                    params.xtc_threshold = 0.02;
                }
                const std::vector<std::int64_t> prompt{1, 2, 3};
                const PipelineInput input{logits, params, prompt, {}};
                const Pipeline pipe = preset_pipeline(info.name);
                const PipelineTrace trace = trace_pipeline_once(pipe, input);
                const ExactDistribution exact = exact_distribution(pipe, input);
                QCOMPARE(exact.ids, trace.exact_ids());
                QCOMPARE(exact.probs, trace.exact_probs());
                QCOMPARE(exact.greedy, !trace.trace.u.has_value());
            }
        }
    }

    // Where the presets part on the same rows and uniforms.
    void presetsPartAtTheEdges() {
        SpecRoundInput input;
        input.vocab = 4;
        input.draft = {row({0.0, 0.5, 0.5, 0.0})};
        input.draft_tokens = {1};
        input.target = {row({0.0, 0.25, 0.25, 0.5}), row({0.25, 0.25, 0.25, 0.25})};
        const auto verdicts = [&](std::vector<double> u) {
            std::vector<bool> out;
            for (const auto& p : kSpecPresets) out.push_back(verify_round_aligned(p, input, u).positions[0].accepted);
            return out;
        };
        // u = p / q exactly: only vLLM's >= accepts.
        QCOMPARE(verdicts({0.5, 0.1}), (std::vector<bool>{false, true, false}));
        QCOMPARE(verdicts({0.4999, 0.1}), (std::vector<bool>{true, true, true}));
        // p(x) = 0 and u = 0: vLLM accepts a token the target cannot produce.
        input.target[0] = row({0.0, 0.0, 0.5, 0.5});
        QCOMPARE(verdicts({0.0, 0.1}), (std::vector<bool>{false, true, false}));
        const SpecRoundDiff zero = diff_round(preset("spec"), preset("vllm"), input, std::vector<double>{0.0, 0.1});
        QVERIFY(!zero.same_emitted);
        QCOMPARE(zero.b.emitted.front(), 1);
        // q(x) = 0 with p(x) > 0 (a supplied token the draft cannot propose): FlashInfer accepts.
        input.target[0] = row({0.0, 0.25, 0.25, 0.5});
        input.draft_tokens = {3};
        QCOMPARE(verdicts({0.3, 0.1}), (std::vector<bool>{false, false, true}));
        const SpecRoundDiff q0 = diff_round(preset("spec"), preset("flashinfer"), input, std::vector<double>{0.3, 0.1});
        QVERIFY(!q0.differences.empty());
        // p = q and x outside both: every preset rejects and max(0, p - q) is
        // empty; the contract draws from p, vLLM gives id 0, FlashInfer d - 1.
        input.draft = {row({0.0, 0.5, 0.5, 0.0})};
        input.target[0] = row({0.0, 0.5, 0.5, 0.0});
        const std::vector<double> u{0.3, 0.7};
        QCOMPARE(verify_round_aligned(preset("spec"), input, u).emitted.back(), 2);
        QCOMPARE(verify_round_aligned(preset("vllm"), input, u).emitted.back(), 0);
        QCOMPARE(verify_round_aligned(preset("flashinfer"), input, u).emitted.back(), 3);
        QVERIFY(verify_round_aligned(preset("vllm"), input, u).final.empty_residual);
    }

    void rowsModels() {
        LogitsMatrix target_rows;
        target_rows.rows = 8;
        target_rows.cols = 5;
        LogitsMatrix draft_rows = target_rows;
        for (int t = 0; t < 8; ++t) {
            for (int v = 0; v < 5; ++v) {
                target_rows.values.push_back(std::sin(t * 5 + v) * 2.0);
                draft_rows.values.push_back(std::cos(t * 3 + v));
            }
        }
        const auto target = std::make_shared<const RowsModel>(target_rows, std::vector<std::string>{}, "target");
        const auto draft = std::make_shared<const RowsModel>(draft_rows, std::vector<std::string>{}, "draft");
        SamplingParams params;
        params.seed = 9;
        SpeculativeOptions options;
        options.k = 3;
        options.max_tokens = 8;
        Speculation s(target, draft, preset_pipeline("spec"), params, {}, options);
        while (!s.exhausted()) {
            const auto round = s.round();
            QVERIFY(round.k <= 3);
        }
        QCOMPARE(s.generated().size(), 8U);
        QVERIFY_THROWS_EXCEPTION(InputError, s.round());
    }

    void refusals() {
        const auto model = tiny();
        SamplingParams params;
        SpeculativeOptions options;
        const auto make = [&](std::shared_ptr<const LanguageModel> draft) {
            Speculation s(model, draft, preset_pipeline("llamacpp"), params, model->tokenize("a"), options);
        };
        options.k = 0;
        QVERIFY_THROWS_EXCEPTION(InputError, make(model->restricted(2)));
        options.k = kMaxSpeculativeK + 1;
        QVERIFY_THROWS_EXCEPTION(InputError, make(model->restricted(2)));
        options.k = 4;
        params.mirostat = 2;
        try {
            make(model->restricted(2));
            QFAIL("mirostat accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.field(), std::string("mirostat"));
        }
        params.mirostat = 0;
        const auto other = std::make_shared<TableModel>(std::vector<std::vector<double>>(7, std::vector<double>(6, 1.0 / 6)));
        try {
            make(other);  // V = 6 both, but other labels
            QFAIL("another vocabulary accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.field(), std::string("draft"));
        }
        const auto smaller = std::make_shared<TableModel>(std::vector<std::vector<double>>(6, std::vector<double>(5, 0.2)));
        QVERIFY_THROWS_EXCEPTION(InputError, make(smaller));
        QVERIFY_THROWS_EXCEPTION(InputError, spec_preset("sglang"));
        SpecRoundInput input;
        input.vocab = 4;
        input.draft = {row({0.5, 0.5, 0, 0})};
        input.draft_tokens = {4};
        input.target = {row({0.5, 0.5, 0, 0}), row({0.5, 0.5, 0, 0})};
        QVERIFY_THROWS_EXCEPTION(InputError, verify_round_aligned(preset("spec"), input, std::vector<double>{0.1, 0.2}));
        input.draft_tokens = {1};
        QVERIFY_THROWS_EXCEPTION(InputError, verify_round_aligned(preset("spec"), input, std::vector<double>{0.1}));
    }
};

QTEST_GUILESS_MAIN(TestSpeculative)
#include "test_speculative.moc"
