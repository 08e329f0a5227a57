// Properties of the reference sampler over thousands of random rows and
// parameter sets, and agreement with a deliberately naive second implementation
// (full sort, no lazy ranking, no shared snapshots) written only for this test.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>

#include "engine/pipelines/request.h"
#include "engine/pipelines/sampler.h"

using namespace samplescope;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct RandomCase {
    std::vector<double> logits;
    SamplingParams params;
    std::vector<std::int64_t> prompt;
    std::vector<std::int64_t> output;
};

RandomCase random_case(std::mt19937_64& gen) {
    RandomCase c;
    std::uniform_int_distribution<int> vocab_dist(1, 300);
    const int vocab = vocab_dist(gen);
    std::normal_distribution<double> normal(0.0, 1.0);
    const double scale = std::vector<double>{0.1, 1.0, 3.0, 20.0}[gen() % 4];
    const bool coarse = gen() % 3 == 0;  // rounded values make ties at every threshold
    for (int i = 0; i < vocab; ++i) {
        double x = normal(gen) * scale;
        if (coarse) x = std::round(x);
        if (gen() % 10 == 0) x = kNegInf;
        c.logits.push_back(x);
    }
    if (std::none_of(c.logits.begin(), c.logits.end(), [](double x) { return std::isfinite(x); })) c.logits[0] = 0.0;

    std::uniform_real_distribution<double> unit(0.0, 1.0);
    auto& p = c.params;
    switch (gen() % 4) {
        case 0: p.temperature = 0.0; break;
        case 1: p.temperature = 1.0; break;
        default: p.temperature = 0.05 + 3.0 * unit(gen); break;
    }
    if (gen() % 2) p.top_k = static_cast<std::int64_t>(gen() % static_cast<unsigned>(vocab + 5));
    switch (gen() % 4) {
        case 0: p.top_p = 0.0; break;
        case 1: p.top_p = 1.0; break;
        default: p.top_p = unit(gen); break;
    }
    switch (gen() % 4) {
        case 0: p.min_p = 1.0; break;
        case 1: p.min_p = 0.0; break;
        default: p.min_p = unit(gen) * 0.5; break;
    }
    if (gen() % 2) {
        p.repetition_penalty = 0.5 + 1.5 * unit(gen);
        p.presence_penalty = 2.0 * unit(gen) - 1.0;
        p.frequency_penalty = 2.0 * unit(gen) - 1.0;
        const int history = static_cast<int>(gen() % 20);
        for (int i = 0; i < history; ++i) {
            const auto id = static_cast<std::int64_t>(gen() % static_cast<unsigned>(vocab));
            (gen() % 2 ? c.prompt : c.output).push_back(id);
            if (gen() % 3 == 0) c.output.push_back(id);  // repeated ids
        }
    }
    p.seed = gen();
    return c;
}

// --- the naive second implementation ------------------------------------------

std::vector<double> naive_softmax(const std::vector<double>& l, const std::vector<int>& ids) {
    double m = kNegInf;
    for (int id : ids) m = std::max(m, l[id]);
    std::vector<double> e;
    double z = 0.0;
    for (int id : ids) {
        e.push_back(std::exp(l[id] - m));
        z += e.back();
    }
    for (auto& v : e) v /= z;
    return e;
}

struct NaiveResult {
    std::vector<int> top_k, top_p, min_p;
    int token;
    double logprob;
};

NaiveResult naive_sample(const RandomCase& c, double u) {
    std::vector<double> l = c.logits;
    const auto& p = c.params;
    std::set<std::int64_t> context(c.prompt.begin(), c.prompt.end());
    context.insert(c.output.begin(), c.output.end());
    for (auto id : context) l[id] = l[id] > 0 ? l[id] / p.repetition_penalty : l[id] * p.repetition_penalty;
    for (auto id : std::set<std::int64_t>(c.output.begin(), c.output.end())) {
        const auto count = static_cast<double>(std::count(c.output.begin(), c.output.end(), id));
        l[id] = l[id] - p.frequency_penalty * count - p.presence_penalty;
    }
    std::vector<int> all;
    for (int i = 0; i < static_cast<int>(l.size()); ++i) {
        if (std::isfinite(l[i])) all.push_back(i);
    }
    double m = kNegInf, z = 0.0;
    for (int id : all) m = std::max(m, l[id]);
    for (int id : all) z += std::exp(l[id] - m);

    NaiveResult r{};
    if (p.temperature == 0.0) {
        r.token = all.front();
        for (int id : all) {
            if (l[id] > l[r.token]) r.token = id;
        }
        r.logprob = (l[r.token] - m) - std::log(z);
        return r;
    }
    const std::vector<double> penalised = l;
    if (p.temperature != 1.0) {
        for (int id : all) l[id] /= p.temperature;
    }
    std::vector<int> order = all;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return l[a] > l[b]; });
    if (p.top_k > 0 && static_cast<std::size_t>(p.top_k) < l.size() && static_cast<std::size_t>(p.top_k) < order.size()) {
        order.resize(static_cast<std::size_t>(p.top_k));
    }
    r.top_k = order;
    std::sort(r.top_k.begin(), r.top_k.end());
    if (p.top_p < 1.0) {
        const auto q = naive_softmax(l, r.top_k);
        double s = 0.0;
        std::size_t n = 0;
        while (n < order.size()) {
            const auto pos = std::lower_bound(r.top_k.begin(), r.top_k.end(), order[n]) - r.top_k.begin();
            s += q[static_cast<std::size_t>(pos)];
            ++n;
            if (s >= p.top_p) break;
        }
        order.resize(n);
    }
    r.top_p = order;
    std::sort(r.top_p.begin(), r.top_p.end());
    r.min_p = r.top_p;
    if (p.min_p > 0.0) {
        const auto q = naive_softmax(l, r.top_p);
        const double floor = p.min_p * *std::max_element(q.begin(), q.end());
        r.min_p.clear();
        for (std::size_t i = 0; i < q.size(); ++i) {
            if (q[i] >= floor) r.min_p.push_back(r.top_p[i]);
        }
    }
    const auto q = naive_softmax(l, r.min_p);
    double c_sum = 0.0;
    r.token = -1;
    for (std::size_t i = 0; i < q.size(); ++i) {
        c_sum += q[i];
        if (u < c_sum) {
            r.token = r.min_p[i];
            break;
        }
    }
    if (r.token < 0) {
        for (std::size_t i = q.size(); i-- > 0;) {
            if (q[i] > 0) {
                r.token = r.min_p[i];
                break;
            }
        }
    }
    r.logprob = (penalised[r.token] - m) - std::log(z);
    return r;
}

std::vector<int> as_ints(const IdList& ids) { return {ids.begin(), ids.end()}; }

bool subset(const IdList& inner, const IdList& outer) {
    return std::includes(outer.begin(), outer.end(), inner.begin(), inner.end());
}

}  // namespace

class SamplerPropertiesTest : public QObject {
    Q_OBJECT
private slots:
    void randomRowsHoldEveryProperty() {
        std::mt19937_64 gen(20261129);
        int greedy_rows = 0;
        int sampled_rows = 0;
        for (int trial = 0; trial < 4000; ++trial) {
            const RandomCase c = random_case(gen);
            const HistoryCounts history = count_history(c.prompt, c.output, c.logits.size());
            Pcg32 rng = stream(*c.params.seed, kSampleLabel);
            const SampleTrace trace = trace_step(StepInput{c.logits, c.params, history}, rng, *c.params.seed, 0);

            // Draw accounting: one uniform per sampled token, none when greedy.
            Pcg32 expected_rng = stream(*c.params.seed, kSampleLabel);
            if (!trace.greedy) expected_rng.uniform_f64();
            QCOMPARE(rng.state, expected_rng.state);
            QCOMPARE(trace.draws_consumed, std::uint64_t{trace.greedy ? 0U : 1U});
            (trace.greedy ? greedy_rows : sampled_rows)++;

            // Nested kept sets, token inside, no NaN, probabilities summing to 1.
            QVERIFY(subset(*trace.stage(Stage::TopK).kept, *trace.stage(Stage::Temperature).kept));
            QVERIFY(subset(*trace.stage(Stage::TopP).kept, *trace.stage(Stage::TopK).kept));
            QVERIFY(subset(*trace.stage(Stage::MinP).kept, *trace.stage(Stage::TopP).kept));
            QVERIFY(std::binary_search(trace.final_kept().begin(), trace.final_kept().end(), trace.token));
            QVERIFY(std::isfinite(trace.logprob) && trace.logprob <= 0.0);
            for (const auto& stage : trace.stages) {
                QVERIFY(!stage.kept->empty());
                QCOMPARE(stage.probs->size(), stage.kept->size());
                double sum = 0.0;
                for (const double q : *stage.probs) {
                    QVERIFY(std::isfinite(q) && q >= 0.0);
                    sum += q;
                }
                QVERIFY2(std::fabs(sum - 1.0) <= 1e-12, qPrintable(QString::number(sum, 'g', 17)));
                for (const double l : *stage.logits) QVERIFY(!std::isnan(l) && l != std::numeric_limits<double>::infinity());
                for (const auto id : *stage.kept) QVERIFY(std::isfinite((*stage.logits)[id]));
            }
            if (trace.u) QVERIFY(*trace.u >= 0.0 && *trace.u < 1.0);

            // The naive implementation agrees stage by stage.
            const NaiveResult naive = naive_sample(c, trace.u.value_or(0.0));
            QCOMPARE(trace.token, naive.token);
            QVERIFY(std::fabs(trace.logprob - naive.logprob) <= 1e-12 * std::max(1.0, std::fabs(naive.logprob)));
            if (!trace.greedy) {
                QCOMPARE(as_ints(*trace.stage(Stage::TopK).kept), naive.top_k);
                QCOMPARE(as_ints(*trace.stage(Stage::TopP).kept), naive.top_p);
                QCOMPARE(as_ints(*trace.stage(Stage::MinP).kept), naive.min_p);
            }

            // The lean path gives the same token, logprob and u.
            Pcg32 lean_rng = stream(*c.params.seed, kSampleLabel);
            const SampleResult lean = sample_step(StepInput{c.logits, c.params, history}, lean_rng);
            QCOMPARE(lean.token, trace.token);
            QCOMPARE(lean.logprob, trace.logprob);
            QCOMPARE(lean.u.has_value(), trace.u.has_value());
            if (lean.u) QCOMPARE(*lean.u, *trace.u);
            QCOMPARE(lean.kept_count, trace.final_kept().size());
            QCOMPARE(lean_rng.state, rng.state);
        }
        QVERIFY(greedy_rows > 500 && sampled_rows > 2000);
    }

    void greedyTiesGoToTheLowestId() {
        std::mt19937_64 gen(7);
        for (int trial = 0; trial < 500; ++trial) {
            const int vocab = 2 + static_cast<int>(gen() % 50);
            std::vector<double> x(static_cast<std::size_t>(vocab));
            for (auto& v : x) v = static_cast<double>(gen() % 5);
            SamplingParams p;
            p.temperature = 0.0;
            p.seed = 1;
            const auto trace = trace_once(x, p);
            const double best = *std::max_element(x.begin(), x.end());
            const auto lowest = static_cast<std::int32_t>(std::find(x.begin(), x.end(), best) - x.begin());
            QCOMPARE(trace.token, lowest);
            QVERIFY(trace.greedy);
            QVERIFY(!trace.u.has_value());
            QCOMPARE(trace.draws_consumed, std::uint64_t{0});
        }
    }

    void negativeInfinityIsNeverKeptOrDrawn() {
        std::vector<double> x{kNegInf, 0.0, kNegInf, 0.0, kNegInf};
        SamplingParams p;
        p.min_p = 0.0;
        for (std::uint64_t seed = 0; seed < 200; ++seed) {
            p.seed = seed;
            const auto trace = trace_once(x, p);
            QCOMPARE(trace.final_kept(), (IdList{1, 3}));
            QVERIFY(trace.token == 1 || trace.token == 3);
        }
    }

    void topPZeroKeepsOnlyTheTopToken() {
        SamplingParams p;
        p.top_p = 0.0;
        p.seed = 5;
        const auto trace = trace_once(std::vector<double>{1.0, 4.0, 4.0, 2.0}, p);
        QCOMPARE(trace.final_kept(), (IdList{1}));
        QCOMPARE(trace.token, 1);
    }

    void boundariesAtExactEquality() {
        // Four equal logits: q = 0.25 each, so the running mass reaches 0.5 exactly at
        // the second token, which stays (the contract's "s >= p").
        const std::vector<double> flat{0.0, 0.0, 0.0, 0.0};
        SamplingParams p;
        p.seed = 1;
        for (const auto& [top_p, kept] : std::vector<std::pair<double, IdList>>{
                 {0.25, {0}}, {0.5, {0, 1}}, {0.75, {0, 1, 2}}, {0.7500001, {0, 1, 2, 3}}}) {
            p.top_p = top_p;
            QCOMPARE(*trace_once(flat, p).stage(Stage::TopP).kept, kept);
        }
        // min_p = 1 keeps every id tied with the maximum (q >= floor, not >).
        p.top_p = 1.0;
        p.min_p = 1.0;
        QCOMPARE(trace_once(std::vector<double>{1.0, 1.0, 0.0}, p).final_kept(), (IdList{0, 1}));
        // top-k breaks a tie at the k-th logit by the lower id.
        p.min_p = 0.0;
        p.top_k = 2;
        const auto trace = trace_once(std::vector<double>{1.0, 2.0, 1.0, 1.0}, p);
        QCOMPARE(*trace.stage(Stage::TopK).kept, (IdList{0, 1}));
        QCOMPARE(*trace.stage(Stage::TopK).kth_logit, 1.0);
    }

    void requestFeedsPenaltiesAndAdvancesTheStream() {
        SamplingParams p;
        p.seed = 42;
        p.frequency_penalty = 0.7;
        const std::vector<double> x{2.0, 1.9, 1.8, 0.5};
        Request request(p, {3});
        Pcg32 expected = stream(42, kSampleLabel);
        for (int i = 0; i < 20; ++i) {
            const auto before = request.output_ids();
            const auto trace = request.step(x);
            QCOMPARE(trace.draws_before, static_cast<std::uint64_t>(i));
            QCOMPARE(*trace.u, expected.uniform_f64());
            QCOMPARE(request.output_ids().size(), before.size() + 1);
            QCOMPARE(request.output_ids().back(), static_cast<std::int64_t>(trace.token));
            // The penalties saw every earlier token.
            for (int id = 0; id < 4; ++id) {
                const auto count = static_cast<double>(std::count(before.begin(), before.end(), id));
                const double expected_logit = count > 0 ? x[static_cast<std::size_t>(id)] - 0.7 * count : x[static_cast<std::size_t>(id)];
                QCOMPARE((*trace.stage(Stage::PresenceFrequency).logits)[static_cast<std::size_t>(id)], expected_logit);
            }
        }
        QCOMPARE(request.draws_consumed(), std::uint64_t{20});
        request.reset();
        QCOMPARE(request.draws_consumed(), std::uint64_t{0});
        QVERIFY(request.output_ids().empty());
    }

    void skippingDrawsMatchesAPrefillWorker() {
        SamplingParams p;
        p.seed = 9;
        const std::vector<double> x{0.1, 0.2, 0.3, 0.4, 0.5};
        Request prefill(p);
        prefill.step(x);
        const auto second = prefill.step(x);
            // Same history as the prefill request had before its second step.
        Request decode_same_history(p, {}, {prefill.output_ids().front()});
        decode_same_history.skip_draws(1);
        const auto resumed = decode_same_history.step(x);
        QCOMPARE(resumed.token, second.token);
        QCOMPARE(*resumed.u, *second.u);
        QCOMPARE(resumed.draws_consumed, std::uint64_t{2});
    }

    void greedyStepTakesNoDraw() {
        SamplingParams p;
        p.seed = 3;
        Request request(p);
        const std::vector<double> x{0.0, 1.0};
        request.step(x);
        SamplingParams greedy = p;
        greedy.temperature = 0.0;
        request.set_params(greedy);
        request.step(x);
        QCOMPARE(request.draws_consumed(), std::uint64_t{1});
        request.set_params(p);
        const auto third = request.step(x);
        Pcg32 expected = stream(3, kSampleLabel);
        expected.uniform_f64();
        QCOMPARE(*third.u, expected.uniform_f64());
    }
};

QTEST_APPLESS_MAIN(SamplerPropertiesTest)
#include "test_sampler_properties.moc"
