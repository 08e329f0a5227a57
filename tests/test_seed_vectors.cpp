// Exact values from the project's source documents:
// - the contract's worked example (sampling contract, section 2; design page "Worked example"),
// - every number of the teaching page "Sampling From a Probability Distribution, Concretely"
//   that this pipeline reproduces (temperature tables, top-k, top-p, min-p, penalties, order A).
// The teaching page prints 4 decimals, and twice its last digit is one unit off
// (0.9821 is the sum of two rounded values, 0.98201 exactly; 1 / 15.5891 = 0.06415
// is printed 0.0642), so its numbers are compared to within one unit of that digit.
#include <QtTest>

#include <cmath>
#include <vector>

#include "engine/pipelines/sampler.h"

using namespace samplescope;

namespace {

constexpr double kPageTolerance = 1e-4;
const std::vector<double> kAbcd{3.0, 2.0, 1.0, 0.0};  // tokens A, B, C, D

SamplingParams params_with(double temperature = 1.0, std::int64_t top_k = 0, double top_p = 1.0, double min_p = 0.0) {
    SamplingParams p;
    p.temperature = temperature;
    p.top_k = top_k;
    p.top_p = top_p;
    p.min_p = min_p;
    p.seed = 0;
    return p;
}

void expect_probs(const StageTrace& stage, const std::vector<std::int32_t>& ids, const std::vector<double>& expected) {
    QCOMPARE(*stage.kept, ids);
    QCOMPARE(stage.probs->size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        if (std::fabs((*stage.probs)[i] - expected[i]) > kPageTolerance) {
            QFAIL(qPrintable(QString("%1: q[%2] = %3, expected %4")
                                 .arg(QString::fromUtf8(stage_info(stage.stage).name.data(),
                                                        static_cast<int>(stage_info(stage.stage).name.size())))
                                 .arg(ids[i])
                                 .arg((*stage.probs)[i], 0, 'g', 17)
                                 .arg(expected[i])));
        }
    }
}

}  // namespace

class SeedVectorsTest : public QObject {
    Q_OBJECT
private slots:
    void workedExample() {
        const std::vector<double> x{1.0, 3.0, 2.0, 3.0, -1.0};
        const auto trace = trace_once(x, params_with(1.0, 3, 0.8));
        QCOMPARE(*trace.stage(Stage::TopK).kept, (IdList{1, 2, 3}));
        QCOMPARE(*trace.stage(Stage::TopP).kept, (IdList{1, 3}));
        QCOMPARE(trace.final_kept(), (IdList{1, 3}));
        QCOMPARE(trace.token, 3);
        QCOMPARE(*trace.u, 0.80209496430867);
        QCOMPARE(std::round(trace.logprob * 1e5) / 1e5, -0.92487);
        QCOMPARE(trace.draws_consumed, std::uint64_t{1});
        QCOMPARE(trace.seed, std::uint64_t{0});
        // The page's intermediate numbers: Z = 2.52153 over all ids, q over {1,2,3}, the crossing at id 3.
        QVERIFY(std::fabs(-trace.logprob - std::log(2.52153)) < 1e-5);
        expect_probs(trace.stage(Stage::TopK), {1, 2, 3}, {0.42232, 0.15536, 0.42232});
        QCOMPARE(*trace.stage(Stage::TopP).crossing_id, 3);
        QVERIFY(std::fabs(*trace.stage(Stage::TopP).crossing_mass - 0.84464) < 5e-6);
        QCOMPARE(trace.final_probs(), (Values{0.5, 0.5}));
        QCOMPARE(trace.cumulative, (Values{0.5, 1.0}));
    }

    void temperatureTables() {
        const struct {
            double t;
            std::vector<double> p;
        } tables[] = {{1.0, {0.6439, 0.2369, 0.0871, 0.0321}},
                      {0.5, {0.8650, 0.1171, 0.0158, 0.0021}},
                      {2.0, {0.4551, 0.2760, 0.1674, 0.1015}}};
        for (const auto& table : tables) {
            const auto trace = trace_once(kAbcd, params_with(table.t));
            expect_probs(trace.stage(Stage::Temperature), {0, 1, 2, 3}, table.p);
            QCOMPARE(trace.stage(Stage::Temperature).active, table.t != 1.0);
        }
    }

    void topKRenormalises() {
        expect_probs(trace_once(kAbcd, params_with(1.0, 2)).stage(Stage::TopK), {0, 1}, {0.7311, 0.2689});
        expect_probs(trace_once(kAbcd, params_with(1.0, 3)).stage(Stage::TopK), {0, 1, 2}, {0.6652, 0.2447, 0.0900});
    }

    void topPKeepsTheCrossingToken() {
        const auto t1 = trace_once(kAbcd, params_with(1.0, 0, 0.9));
        expect_probs(t1.stage(Stage::TopP), {0, 1, 2}, {0.6652, 0.2447, 0.0900});
        QCOMPARE(*t1.stage(Stage::TopP).walk_ids, (IdList{0, 1, 2}));
        const std::vector<double> walk1{0.6439, 0.8808, 0.9679};
        for (std::size_t i = 0; i < walk1.size(); ++i) {
            QVERIFY(std::fabs((*t1.stage(Stage::TopP).walk_mass)[i] - walk1[i]) < kPageTolerance);
        }
        QCOMPARE(*t1.stage(Stage::TopP).crossing_rank, std::size_t{3});

        const auto sharp = trace_once(kAbcd, params_with(0.5, 0, 0.9));
        QCOMPARE(*sharp.stage(Stage::TopP).kept, (IdList{0, 1}));
        QVERIFY(std::fabs((*sharp.stage(Stage::TopP).walk_mass)[0] - 0.8650) < kPageTolerance);
        QVERIFY(std::fabs((*sharp.stage(Stage::TopP).walk_mass)[1] - 0.9821) < kPageTolerance);
    }

    void minPScalesWithConfidence() {
        const auto t1 = trace_once(kAbcd, params_with(1.0, 0, 1.0, 0.10));
        QCOMPARE(*t1.stage(Stage::MinP).kept, (IdList{0, 1, 2}));
        QVERIFY(std::fabs(*t1.stage(Stage::MinP).prob_floor - 0.06439) < 5e-6);
        const auto sharp = trace_once(kAbcd, params_with(0.5, 0, 1.0, 0.10));
        QCOMPARE(*sharp.stage(Stage::MinP).kept, (IdList{0, 1}));
        QVERIFY(std::fabs(*sharp.stage(Stage::MinP).prob_floor - 0.08650) < 5e-6);
    }

    void frequencyPenalty() {
        SamplingParams p = params_with();
        p.frequency_penalty = 0.5;
        const std::vector<std::int64_t> output{0, 0, 0};  // A appeared 3 times
        const auto trace = trace_once(kAbcd, p, {}, output);
        const auto& stage = trace.stage(Stage::PresenceFrequency);
        QVERIFY(stage.active);
        QCOMPARE((*stage.logits)[0], 1.5);
        expect_probs(stage, {0, 1, 2, 3}, {0.2875, 0.4740, 0.1744, 0.0642});
    }

    void repetitionPenaltyAndItsSignRule() {
        SamplingParams p = params_with();
        p.repetition_penalty = 1.2;
        const std::vector<std::int64_t> prompt{0};
        const auto trace = trace_once(kAbcd, p, prompt);
        QCOMPARE((*trace.stage(Stage::RepetitionPenalty).logits)[0], 2.5);
        expect_probs(trace.stage(Stage::RepetitionPenalty), {0, 1, 2, 3}, {0.5231, 0.3173, 0.1167, 0.0429});

        const std::vector<double> negative{3.0, -2.0};
        const std::vector<std::int64_t> seen{1};
        const auto penalised = trace_once(negative, p, seen);
        QCOMPARE((*penalised.stage(Stage::RepetitionPenalty).logits)[1], -2.0 * 1.2);  // -2.4, not -1.667
    }

    void orderATemperatureThenTopP() {
        const auto trace = trace_once(kAbcd, params_with(2.0, 0, 0.9));
        QCOMPARE(*trace.stage(Stage::TopP).kept, (IdList{0, 1, 2, 3}));
        const std::vector<double> walk{0.4551, 0.7311, 0.8985, 1.0000};
        for (std::size_t i = 0; i < walk.size(); ++i) {
            QVERIFY(std::fabs((*trace.stage(Stage::TopP).walk_mass)[i] - walk[i]) < kPageTolerance);
        }
    }

    void inverseCdfIntervals() {
        // The teaching page's walk: q = [.5, .3, .15, .05]; u in each interval picks that token.
        const std::vector<double> x{std::log(0.50), std::log(0.30), std::log(0.15), std::log(0.05)};
        const auto trace = trace_once(x, params_with());
        const std::vector<double> cumulative{0.50, 0.80, 0.95, 1.00};
        for (std::size_t i = 0; i < cumulative.size(); ++i) QVERIFY(std::fabs(trace.cumulative[i] - cumulative[i]) < 1e-12);
    }
};

QTEST_APPLESS_MAIN(SeedVectorsTest)
#include "test_seed_vectors.moc"
