// The contract written a second time, as plainly as docs/contract.md section 2
// states it (full sorts, no caches, no lazy ranking, nothing shared with
// engine/pipelines/ but the generator), against the engine's `spec` on 3,000
// random rows: token, logprob, u, draw count, the kept set after each
// truncation, the final probabilities and the inverse-CDF walk must be equal
// to the last bit. The engine's runner is the only implementation the
// product uses; this one exists so that a change to the runner's arithmetic
// or order has something independent to fail against.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "engine/core/generator.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"
#include "tests/support/random_cases.h"

using namespace samplescope;

namespace {

struct Naive {
    std::int32_t token = -1;
    double logprob = 0.0;
    std::optional<double> u;
    std::uint64_t draws = 0;
    IdList after_top_k, after_top_p, after_min_p;
    Values probs;
    Values cumulative;
};

// Softmax over `ids` (ascending): max-subtracted, summed in ascending id order.
Values softmax(const std::vector<double>& l, const IdList& ids) {
    double m = -INFINITY;
    for (const auto id : ids) m = std::max(m, l[static_cast<std::size_t>(id)]);
    Values q;
    double z = 0.0;
    for (const auto id : ids) {
        q.push_back(std::exp(l[static_cast<std::size_t>(id)] - m));
        z += q.back();
    }
    for (auto& x : q) x /= z;
    return q;
}

IdList by_rank(const std::vector<double>& l, IdList ids) {
    std::sort(ids.begin(), ids.end(), [&l](std::int32_t a, std::int32_t b) {
        const double la = l[static_cast<std::size_t>(a)];
        const double lb = l[static_cast<std::size_t>(b)];
        return la != lb ? la > lb : a < b;
    });
    return ids;
}

Naive contract(std::vector<double> l, const SamplingParams& p, const std::vector<std::int64_t>& prompt,
               const std::vector<std::int64_t>& output, std::uint64_t skip) {
    const std::size_t v = l.size();
    // Repetition over the distinct ids of prompt and output.
    std::set<std::int64_t> context(prompt.begin(), prompt.end());
    context.insert(output.begin(), output.end());
    if (p.repetition_penalty != 1.0) {
        for (const auto id : context) {
            double& x = l[static_cast<std::size_t>(id)];
            x = x > 0.0 ? x / p.repetition_penalty : x * p.repetition_penalty;
        }
    }
    // Presence and frequency over generated ids.
    std::map<std::int64_t, double> counts;
    for (const auto id : output) counts[id] += 1.0;
    if (p.presence_penalty != 0.0 || p.frequency_penalty != 0.0) {
        for (const auto& [id, c] : counts) {
            double& x = l[static_cast<std::size_t>(id)];
            x = x - p.frequency_penalty * c - p.presence_penalty;
        }
    }
    Naive out;
    // The logprob's normaliser: all V ids, ascending.
    double m = -INFINITY;
    for (const double x : l) m = std::max(m, x);
    double z = 0.0;
    for (const double x : l) z += std::exp(x - m);
    IdList kept;
    for (std::size_t i = 0; i < v; ++i) {
        if (std::isfinite(l[i])) kept.push_back(static_cast<std::int32_t>(i));
    }
    const auto logprob_of = [&](std::int32_t token) { return (l[static_cast<std::size_t>(token)] - m) - std::log(z); };
    if (p.temperature == 0.0) {
        out.token = by_rank(l, kept).front();
        out.logprob = logprob_of(out.token);
        out.after_top_k = out.after_top_p = out.after_min_p = {out.token};
        out.probs = {1.0};
        out.cumulative = {1.0};
        out.draws = skip;
        return out;
    }
    std::vector<double> scaled = l;
    if (p.temperature != 1.0) {
        for (const auto id : kept) scaled[static_cast<std::size_t>(id)] /= p.temperature;
    }
    // Top-k: the first k by (logit desc, id asc).
    if (p.top_k > 0 && static_cast<std::size_t>(p.top_k) < kept.size()) {
        IdList ranked = by_rank(scaled, kept);
        ranked.resize(static_cast<std::size_t>(p.top_k));
        std::sort(ranked.begin(), ranked.end());
        kept = ranked;
    }
    out.after_top_k = kept;
    // Top-p: walk in rank order; the id whose running mass first reaches p is the last kept.
    if (p.top_p < 1.0) {
        const Values q = softmax(scaled, kept);
        std::map<std::int32_t, double> q_of;
        for (std::size_t i = 0; i < kept.size(); ++i) q_of[kept[i]] = q[i];
        IdList walked;
        double mass = 0.0;
        for (const auto id : by_rank(scaled, kept)) {
            walked.push_back(id);
            mass += q_of[id];
            if (mass >= p.top_p) break;
        }
        std::sort(walked.begin(), walked.end());
        kept = walked;
    }
    out.after_top_p = kept;
    // Min-p: q >= min_p x max q over the kept set.
    if (p.min_p > 0.0) {
        const Values q = softmax(scaled, kept);
        const double floor = p.min_p * *std::max_element(q.begin(), q.end());
        IdList stay;
        for (std::size_t i = 0; i < kept.size(); ++i) {
            if (q[i] >= floor) stay.push_back(kept[i]);
        }
        kept = stay;
    }
    out.after_min_p = kept;
    out.probs = softmax(scaled, kept);
    // One draw; the inverse CDF in ascending id order, falling back to the
    // largest kept id with q > 0.
    Pcg32 rng = stream_after(*p.seed, skip);
    const double u = rng.uniform_f64();
    out.u = u;
    out.draws = skip + 1;
    double cum = 0.0;
    for (std::size_t i = 0; i < kept.size(); ++i) {
        cum += out.probs[i];
        out.cumulative.push_back(cum);
        if (out.token < 0 && u < cum) out.token = kept[i];
    }
    if (out.token < 0) {
        for (std::size_t i = kept.size(); i-- > 0;) {
            if (out.probs[i] > 0.0) {
                out.token = kept[i];
                break;
            }
        }
    }
    out.logprob = logprob_of(out.token);
    return out;
}

}  // namespace

class ContractReferenceTest : public QObject {
    Q_OBJECT
private slots:
    void workedExample() {
        SamplingParams p;
        p.top_k = 3;
        p.top_p = 0.8;
        p.seed = 0;
        const Naive n = contract({1, 3, 2, 3, -1}, p, {}, {}, 0);
        QCOMPARE(n.after_top_k, (IdList{1, 2, 3}));
        QCOMPARE(n.after_top_p, (IdList{1, 3}));
        QCOMPARE(*n.u, 0.80209496430867);
        QCOMPARE(n.token, 3);
        QVERIFY(std::fabs(n.logprob - -0.92487) < 5e-6);
    }

    void specEqualsThePlainContractOnRandomRows() {
        std::mt19937_64 random(20261201);
        const Pipeline spec = preset_pipeline("spec");
        int greedy_rows = 0;
        int truncated_rows = 0;
        for (int row = 0; row < 3000; ++row) {
            const testing::RandomCase c = testing::random_case(random, 60);
            const auto& [logits, params, prompt, output, skip] = c;
            const std::size_t vocab = logits.size();

            const Naive n = contract(logits, params, prompt, output, skip);
            const PipelineTrace t = trace_pipeline_once(spec, PipelineInput{logits, params, prompt, output}, skip);
            const QByteArray where = QByteArray("row ") + QByteArray::number(row);
            QVERIFY2(t.trace.token == n.token, where);
            QVERIFY2(t.trace.logprob == n.logprob, where);
            QVERIFY2(t.trace.u == n.u, where);
            QVERIFY2(t.trace.draws_consumed == n.draws, where);
            QVERIFY2(t.trace.final_kept() == n.after_min_p, where);
            QVERIFY2(t.trace.final_probs() == n.probs, where);
            QVERIFY2(t.trace.cumulative == n.cumulative, where);
            if (!t.trace.greedy) {
                QVERIFY2(*t.trace.stage(Stage::TopK).kept == n.after_top_k, where);
                QVERIFY2(*t.trace.stage(Stage::TopP).kept == n.after_top_p, where);
                QVERIFY2(*t.trace.stage(Stage::MinP).kept == n.after_min_p, where);
            }
            greedy_rows += t.trace.greedy ? 1 : 0;
            truncated_rows += n.after_min_p.size() < vocab ? 1 : 0;
        }
        QVERIFY(greedy_rows > 150);
        QVERIFY(truncated_rows > 1500);
    }

    // Rows whose top-p walk goes deep into the ranking, where the engine
    // buckets and radix-sorts the kept ids: broad rows, logits alike in all
    // their leading bits (too alike for the buckets), runs of ties, +0 and
    // -0 together, rows partly -inf (a kept set short of the row). The walk
    // must visit the ids in the plain sort's order and keep what the plain
    // contract keeps, to the last bit.
    void deepWalksFollowThePlainSort() {
        std::mt19937_64 random(20261202);
        const Pipeline spec = preset_pipeline("spec");
        const auto broad = [&](std::size_t v, double sd) {
            std::normal_distribution<double> normal(0.0, sd);
            std::vector<double> l(v);
            for (auto& x : l) x = normal(random);
            return l;
        };
        std::vector<std::pair<const char*, std::vector<double>>> rows;
        rows.emplace_back("broad", broad(50'000, 0.5));
        rows.emplace_back("very broad", broad(30'000, 0.05));
        {
            // Distinct logits sharing their leading 40 bits.
            std::vector<double> l(20'000);
            std::uniform_int_distribution<int> step(0, 4'000);
            for (auto& x : l) x = 1.0 + std::ldexp(static_cast<double>(step(random)), -40);
            rows.emplace_back("alike", l);
        }
        {
            std::vector<double> l(40'000);
            const double levels[] = {0.5, -0.25, 0.0, -0.0, 0.5, 1.0};
            std::uniform_int_distribution<int> pick(0, 5);
            for (auto& x : l) x = levels[pick(random)];
            rows.emplace_back("ties and signed zeros", l);
        }
        {
            std::vector<double> l = broad(60'000, 0.5);
            std::bernoulli_distribution drop(0.3);
            for (auto& x : l) x = drop(random) ? -INFINITY : x;
            rows.emplace_back("part -inf", l);
        }
        for (const auto& [name, logits] : rows) {
            for (const double top_p : {0.5, 0.9, 0.999}) {
                SamplingParams p;
                p.top_p = top_p;
                p.seed = 7;
                const Naive n = contract(logits, p, {}, {}, 0);
                const PipelineTrace t = trace_pipeline_once(spec, PipelineInput{logits, p, {}, {}}, 0);
                const QByteArray where = QByteArray(name) + " p " + QByteArray::number(top_p);
                const StageTrace& stage = t.trace.stage(Stage::TopP);
                IdList finite;
                for (std::size_t i = 0; i < logits.size(); ++i) {
                    if (std::isfinite(logits[i])) finite.push_back(static_cast<std::int32_t>(i));
                }
                IdList order = by_rank(logits, finite);
                order.resize(stage.walk_ids->size());
                QVERIFY2(*stage.walk_ids == order, where);
                QVERIFY2(*stage.kept == n.after_top_p, where);
                QVERIFY2(t.trace.final_probs() == n.probs, where);
                QVERIFY2(t.trace.token == n.token, where);
            }
        }
    }
};

QTEST_GUILESS_MAIN(ContractReferenceTest)
#include "test_contract_reference.moc"
