// ui/plot_data: what the stage plots show is the engine's numbers, ranked, and
// the top N plus the summed rest account for every candidate (nothing cut).
#include <QtTest>

#include <cmath>
#include <random>

#include "engine/base/input_error.h"
#include "engine/core/element_math.h"
#include "engine/pipelines/sampler.h"
#include "ui/common/examples.h"
#include "ui/common/plot_data.h"
#include "ui/common/trace_view.h"
#include "ui/session/display_builder.h"
#include "tests/support/random_cases.h"

using namespace samplescope;
using namespace samplescope::ui;

class PlotDataTest : public QObject {
    Q_OBJECT
private slots:
    void workedExampleTopK() {
        const Example example = workedExample();
        const SampleTrace trace = trace_once(example.logits, example.params);
        const auto data = makeStagePlotData(trace, Stage::TopK, 10);
        // Rank order (logit desc, id asc): ids 1, 3, 2, 0, 4; top-k keeps {1, 2, 3}.
        QCOMPARE(data.top.size(), std::size_t{5});
        const std::int32_t order[] = {1, 3, 2, 0, 4};
        const bool kept[] = {true, true, true, false, false};
        for (int i = 0; i < 5; ++i) {
            QCOMPARE(data.top[static_cast<std::size_t>(i)].id, order[i]);
            QCOMPARE(data.top[static_cast<std::size_t>(i)].kept, kept[i]);
        }
        QCOMPARE(data.rest_kept_count + data.rest_dropped_count, std::size_t{0});
    }
    void everyCandidateIsShownOrSummed() {
        std::mt19937_64 rng(3);
        std::normal_distribution<double> logit(0.0, 2.0);
        for (int row = 0; row < 300; ++row) {
            std::vector<double> logits(static_cast<std::size_t>(5 + rng() % 400));
            for (auto& x : logits) x = logit(rng);
            SamplingParams params;
            params.top_k = static_cast<std::int64_t>(rng() % 60);
            params.top_p = 0.5 + static_cast<double>(rng() % 50) / 100.0;
            params.min_p = static_cast<double>(rng() % 10) / 100.0;
            params.seed = row;
            const SampleTrace trace = trace_once(logits, params);
            const std::size_t top_n = 1 + rng() % 30;
            for (const auto& info : kStages) {
                if (!info.contract) continue;  // the contract's trace holds only its own stages
                const auto data = makeStagePlotData(trace, info.stage, top_n);
                const StageTrace& stage = trace.stage(info.stage);
                std::size_t kept_shown = 0;
                double mass_shown = 0.0;
                for (std::size_t i = 0; i < data.top.size(); ++i) {
                    const auto& token = data.top[i];
                    QCOMPARE(token.kept, stage.keeps(token.id));
                    QCOMPARE(token.prob_after, stage.prob_of(token.id));
                    if (i > 0) {
                        const auto& before = data.top[i - 1];
                        QVERIFY(ranks_before(before.logit, before.id, token.logit, token.id));
                    }
                    if (token.kept) {
                        ++kept_shown;
                        mass_shown += token.prob_after;
                    }
                }
                QCOMPARE(data.top.size() + data.rest_kept_count + data.rest_dropped_count, data.candidates);
                QCOMPARE(kept_shown + data.rest_kept_count, stage.kept_count());
                QVERIFY(std::fabs(mass_shown + data.rest_kept_mass - 1.0) < 1e-9);
            }
        }
    }
    // The rest's sums are the ones a pass over the candidates in ascending id order gives, bit
    // for bit (the bars' tooltips print them exactly): the kept ids' q after and the dropped ids'
    // q before, each added left to right, shown ids passed over.
    void restIsSummedInIdOrder() {
        std::mt19937_64 rng(11);
        const Example realistic = realisticExample();
        for (int row = 0; row < 300; ++row) {
            const testing::RandomCase c = testing::random_case(rng, 3000);
            SampleTrace trace;
            try {
                trace = row % 50 == 0 ? trace_once(realistic.logits, c.params, realistic.prompt_ids, realistic.output_ids)
                                      : trace_once(c.logits, c.params, c.prompt, c.output, c.skip);
            } catch (const InputError&) {
                continue;  // a row the contract refuses
            }
            const std::size_t top_n = 1 + rng() % 120;
            for (const auto& info : kStages) {
                if (!info.contract) continue;
                const auto data = makeStagePlotData(trace, info.stage, top_n);
                const StageTrace& now = trace.stage(info.stage);
                const StageTrace& before = trace.stage(inputStage(trace, info.stage));
                std::vector<std::int32_t> shown;
                for (const auto& token : data.top) shown.push_back(token.id);
                std::sort(shown.begin(), shown.end());
                double kept_mass = 0.0, dropped_mass = 0.0;
                std::size_t kept_count = 0, dropped_count = 0;
                for (const auto id : *before.kept) {
                    if (std::binary_search(shown.begin(), shown.end(), id)) continue;
                    if (now.keeps(id)) {
                        ++kept_count;
                        kept_mass += now.prob_of(id);
                    } else {
                        ++dropped_count;
                        dropped_mass += before.prob_of(id);
                    }
                }
                QCOMPARE(data.rest_kept_count, kept_count);
                QCOMPARE(data.rest_dropped_count, dropped_count);
                QVERIFY2(data.rest_kept_mass == kept_mass, qPrintable(QString::number(row)));
                QVERIFY2(data.rest_dropped_mass == dropped_mass, qPrintable(QString::number(row)));
            }
        }
    }
    void truncationStatsOfWorkedExample() {
        const Example example = workedExample();
        const SampleTrace trace = trace_once(example.logits, example.params);
        const auto stats = makeTruncationStats(trace);
        QCOMPARE(stats.before.count, std::size_t{5});
        QCOMPARE(stats.after.count, std::size_t{2});
        // The final set {1, 3} carries 2 / Z of the raw distribution, Z = e^-2 + 1 + e^-1 + 1 + e^-4 (seed page).
        const double z = std::exp(-2.0) + 1.0 + std::exp(-1.0) + 1.0 + std::exp(-4.0);
        QVERIFY(std::fabs(stats.kept_mass - 2.0 / z) < 1e-12);
        QCOMPARE(stats.after.entropy_bits, 1.0);
    }
    void rankOfMatchesTopRanked() {
        const Example example = realisticExample();
        const SampleTrace trace = trace_once(example.logits, example.params, example.prompt_ids, example.output_ids);
        const StageTrace& temperature = trace.stage(Stage::Temperature);
        const auto top = topRanked(*temperature.kept, *temperature.logits, 50);
        for (std::size_t i = 0; i < top.size(); ++i) QCOMPARE(rankOf(*temperature.kept, *temperature.logits, top[i]), i + 1);
        const IdList& final_kept = trace.final_kept();
        std::int32_t absent = 0;
        while (std::binary_search(final_kept.begin(), final_kept.end(), absent)) ++absent;
        QCOMPARE(rankOf(final_kept, *temperature.logits, absent), std::size_t{0});
    }
    void realisticExampleIsPeakedWithLongTail() {
        const Example example = realisticExample();
        QCOMPARE(example.logits.size(), kRealisticVocab);
        QCOMPARE(realisticExample().logits, example.logits);  // deterministic
        SamplingParams plain;
        plain.seed = 0;
        const SampleTrace trace = trace_once(example.logits, plain);
        const auto stats = distribution_stats(*trace.stage(Stage::Widen).probs);
        QVERIFY(stats.top1_prob > 0.1 && stats.top1_prob < 0.6);  // peaked
        QVERIFY(stats.perplexity > 20.0);                          // a long tail
    }

    // The builder keeps a stage's data only where its inputs did not change, and what it
    // shows always equals data made from scratch: over a walk of parameter changes (each
    // slider, the row, the view size, a plot's mode) on the realistic row, every stage and
    // the statistics compare equal to a fresh ranking's.
    void builderEqualsDataMadeFromScratch() {
        const Example realistic = realisticExample();
        const Example worked = workedExample();
        DisplayBuilder builder;
        struct Step {
            const Example* example;
            void (*change)(SamplingParams&);
            std::size_t top_n;
            bool top_k_as_bars;
            std::size_t reused_at_least;
        };
        const Step steps[] = {
            {&realistic, [](SamplingParams&) {}, 30, false, 0},
            {&realistic, [](SamplingParams&) {}, 30, false, 10},  // the same request: every stage kept
            {&realistic, [](SamplingParams& p) { p.top_p = 0.5; }, 30, false, 5},  // the stages before top-p kept
            {&realistic, [](SamplingParams& p) { p.top_p = 0.5; p.temperature = 1.3; }, 30, false, 3},
            {&realistic, [](SamplingParams& p) { p.top_p = 0.5; p.temperature = 1.3; p.repetition_penalty = 1.5; }, 30, false, 1},
            {&realistic, [](SamplingParams& p) { p.top_p = 0.5; p.temperature = 1.3; p.seed = 7; }, 30, false, 0},
            {&realistic, [](SamplingParams& p) { p.top_p = 0.5; p.temperature = 1.3; }, 12, false, 0},  // fewer bars
            {&realistic, [](SamplingParams& p) { p.top_p = 0.5; p.temperature = 1.3; }, 12, true, 0},   // top-k as bars
            {&worked, [](SamplingParams&) {}, 12, true, 0},  // another row
            {&realistic, [](SamplingParams& p) { p.min_p = 0.2; }, 30, false, 0},
        };
        for (std::size_t i = 0; i < std::size(steps); ++i) {
            const Step& step = steps[i];
            SamplingParams params = step.example->params;
            step.change(params);
            TraceView view;
            view.trace = builder.share(trace_once(step.example->logits, params, step.example->prompt_ids, step.example->output_ids));
            view.top_n = step.top_n;
            std::vector<std::optional<PlotMode>> modes(kStageCount);
            if (step.top_k_as_bars) modes[static_cast<std::size_t>(Stage::TopK)] = PlotMode::Bars;
            builder.build(view, modes);
            QVERIFY2(view.parts.reused_stages >= step.reused_at_least, qPrintable(QString::number(i)));

            RankOrders fresh;
            std::size_t at = 0;
            for (const auto& info : kStages) {
                if (!info.contract) continue;
                const Stage stage = info.stage;
                const auto& before = view.trace->stage(inputStage(*view.trace, stage));
                const bool curve = stage != Stage::Draw && !(step.top_k_as_bars && stage == Stage::TopK) &&
                                   vocabularyByDefault(stage, before.kept->size(), step.top_n);
                const StagePlotData expected =
                    makeStagePlotData(*view.trace, stage, step.top_n, rankStage(*view.trace, stage, fresh, curve), curve);
                QVERIFY2(at < view.stages.size(), qPrintable(QString::number(i)));
                QVERIFY2(view.stages[at] == expected, qPrintable(QStringLiteral("step %1, stage %2").arg(i).arg(info.name.data())));
                // The bars are the ranking's first N, as a sort of the candidates gives them.
                const auto top = topRanked(*before.kept, *view.trace->stage(stage).logits, step.top_n);
                QCOMPARE(view.stages[at].top.size(), top.size());
                for (std::size_t r = 0; r < top.size(); ++r) QCOMPARE(view.stages[at].top[r].id, top[r]);
                ++at;
            }
            QCOMPARE(view.stages.size(), at);
            const TruncationStats stats = makeTruncationStats(*view.trace);
            QCOMPARE(view.stats.kept_mass, stats.kept_mass);
            QCOMPARE(view.stats.before.entropy_bits, stats.before.entropy_bits);
            QCOMPARE(view.stats.after.entropy_bits, stats.after.entropy_bits);
        }
    }

    // A penalty moves a few logits: the next trace's orders are the last ones with those ids
    // moved (by binary search), and equal a full sort of each stage's candidates, over random
    // rows with ties and histories that repeat ids.
    void penaltyOrdersEqualAFullSort() {
        std::mt19937_64 random(11);
        for (int row = 0; row < 40; ++row) {
            const std::size_t vocab = 50 + random() % 4000;
            std::vector<double> logits(vocab);
            std::normal_distribution<double> normal(0.0, 2.0);
            for (auto& logit : logits) logit = row % 3 == 0 ? std::round(normal(random)) : normal(random);  // ties too
            std::vector<std::int64_t> history(1 + random() % 200);
            for (auto& id : history) id = static_cast<std::int64_t>(random() % vocab);
            SamplingParams params;
            params.seed = 3;
            params.repetition_penalty = 1.1;
            params.presence_penalty = 0.2;
            params.top_k = static_cast<std::int64_t>(random() % vocab);
            RankOrders orders;
            for (const double penalty : {1.1, 1.2, 0.9, 1.5}) {
                params.repetition_penalty = penalty;
                params.frequency_penalty = penalty - 0.8;
                const SampleTrace trace = trace_once(logits, params, history, {});
                for (const auto& stage : trace.stages) {
                    const auto& before = trace.stage(inputStage(trace, stage.stage));
                    const RankOrder order = *rankStage(trace, stage.stage, orders, false).order;
                    QCOMPARE(order, topRanked(*before.kept, *stage.logits, before.kept->size()));
                }
            }
        }
    }

    // share() gives a new trace the last trace's arrays where they are equal, and only there:
    // a temperature change keeps the raw logits, the penalties and their q, and no array from
    // temperature on; the shared trace traces the same numbers as the one it was given.
    void shareKeepsOnlyEqualArrays() {
        const Example example = realisticExample();
        DisplayBuilder builder;
        SamplingParams params = example.params;
        TraceView first;
        first.trace = builder.share(trace_once(example.logits, params, example.prompt_ids, example.output_ids));
        first.top_n = 30;
        builder.build(first, {});
        params.temperature *= 1.25;
        const SampleTrace fresh = trace_once(example.logits, params, example.prompt_ids, example.output_ids);
        const auto second = builder.share(trace_once(example.logits, params, example.prompt_ids, example.output_ids));
        for (const Stage stage : {Stage::Widen, Stage::RepetitionPenalty, Stage::PresenceFrequency}) {
            const StageTrace& now = second->stage(stage);
            const StageTrace& earlier = first.trace->stage(stage);
            QVERIFY(now.logits == earlier.logits);
            QVERIFY(now.kept == earlier.kept);
            QVERIFY(now.probs.get() == earlier.probs.get());  // one q, computed once
        }
        for (const Stage stage : {Stage::Temperature, Stage::TopK, Stage::Softmax}) {
            QVERIFY(second->stage(stage).logits != first.trace->stage(stage).logits);
        }
        // The kept set before truncation is one array in both; after top-k each trace has its own values.
        QVERIFY(second->stage(Stage::Temperature).kept == first.trace->stage(Stage::Temperature).kept);
        QCOMPARE(second->stages.size(), fresh.stages.size());
        for (std::size_t i = 0; i < fresh.stages.size(); ++i) {
            QCOMPARE(*second->stages[i].logits, *fresh.stages[i].logits);
            QCOMPARE(*second->stages[i].kept, *fresh.stages[i].kept);
            QCOMPARE(*second->stages[i].probs, *fresh.stages[i].probs);
        }
        QCOMPARE(second->token, fresh.token);
        // Another row: nothing is shared.
        const Example worked = workedExample();
        const auto other = builder.share(trace_once(worked.logits, worked.params));
        QVERIFY(other->stage(Stage::Widen).logits != first.trace->stage(Stage::Widen).logits);
    }

    // A q computed from the logits and kept set takes an earlier trace's values only when
    // both are equal bit for bit; held values never.
    void stageProbsAdoptOnlyEqualInputs() {
        const Example example = realisticExample();
        SamplingParams params = example.params;
        const SampleTrace first = trace_once(example.logits, params, example.prompt_ids, example.output_ids);
        params.temperature *= 1.5;
        const SampleTrace second = trace_once(example.logits, params, example.prompt_ids, example.output_ids);
        const auto& raw_before = first.stage(Stage::Widen).probs;
        const auto& raw_after = second.stage(Stage::Widen).probs;
        QVERIFY(!raw_after.adopt(raw_before));  // nothing computed yet to take
        (void)raw_before.get();
        QVERIFY(raw_after.adopt(raw_before));
        QCOMPARE(raw_after.get(), raw_before.get());  // the same array, not a copy
        const auto& hot_before = first.stage(Stage::Temperature).probs;
        const auto& hot_after = second.stage(Stage::Temperature).probs;
        (void)hot_before.get();
        QVERIFY(!hot_after.adopt(hot_before));  // other logits: computed on its own
        QVERIFY(*hot_after.get() != *hot_before.get());
        const StageProbs held(std::make_shared<const Values>(Values{0.5, 0.5}));
        QVERIFY(!held.adopt(raw_before));
        QVERIFY(!raw_after.adopt(held));
    }
};

QTEST_APPLESS_MAIN(PlotDataTest)
#include "test_plot_data.moc"
