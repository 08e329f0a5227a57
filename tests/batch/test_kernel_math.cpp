// The batch engine's shared building blocks: Philox against its published
// answers, the stream skip against sequential draws, rank keys against the
// reference's ranking, the history table, the chi-square tail, the near-tie rule.
#include <QtTest>

#include <array>
#include <cmath>
#include <vector>

#include "engine/core/generator.h"
#include "engine/core/element_math.h"
#include "engine/stats/near_tie.h"
#include "engine/pipelines/sampler.h"
#include "engine/stats/chi_square.h"
#include "kernels/check/philox_answers.h"
#include "kernels/history_table.h"
#include "kernels/philox.h"
#include "kernels/rank_key.h"
#include "engine/core/generator.h"

using namespace samplescope;
using namespace samplescope::batch;

class KernelMathTest : public QObject {
    Q_OBJECT
private slots:
    // Random123's known-answer vectors for Philox4x32-10 (kernels/check/philox_answers.h;
    // a CUDA kernel checks the same ones in the GPU self-test).
    void philoxKnownAnswers() {
        for (const PhiloxAnswer& kat : kPhiloxAnswers) {
            const Philox4x32 out = philox4x32_10({{kat.counter[0], kat.counter[1], kat.counter[2], kat.counter[3]}},
                                                 kat.key[0], kat.key[1]);
            for (int i = 0; i < 4; ++i) QCOMPARE(out.v[i], kat.out[i]);
        }
    }

    // The noise is a pure function of (seed, position, id), strictly inside (0, 1), and uniform.
    void noiseIsPureAndUniform() {
        // Known answers worked independently of this code (kernels/check/philox_answers.h).
        for (const NoiseAnswer& answer : kNoiseAnswers) {
            QCOMPARE(noise_uniform(answer.seed, answer.position, answer.id), answer.value);
        }
        QVERIFY(noise_uniform(7, 3, 11) != noise_uniform(7, 4, 11));
        QVERIFY(noise_uniform(7, 3, 11) != noise_uniform(8, 3, 11));
        std::array<std::uint64_t, 10> cells{};
        const int n = 20000;
        for (int i = 0; i < n; ++i) {
            const double u = noise_uniform(99, static_cast<std::uint64_t>(i / 100), i % 100);
            QVERIFY(u > 0.0 && u < 1.0);
            ++cells[static_cast<std::size_t>(u * 10)];
        }
        const std::vector<double> expected(10, 0.1);
        QVERIFY(chi_square_fit(cells, expected, n).p_value > 1e-3);
    }

    void streamSkipMatchesSequentialDraws() {
        for (const std::uint64_t seed : {0ULL, 42ULL, ~0ULL}) {
            for (const std::uint64_t skip : {0ULL, 1ULL, 2ULL, 17ULL, 1000ULL}) {
                Pcg32 sequential = stream(seed, kSampleLabel);
                for (std::uint64_t i = 0; i < skip; ++i) sequential.uniform_f64();
                Pcg32 jumped = stream_after(seed, skip);
                QCOMPARE(jumped.uniform_f64(), sequential.uniform_f64());
            }
        }
    }

    void rankKeysFollowTheReferenceRanking() {
        Pcg32 rng(3, 3);
        const std::array<float, 6> specials{0.0f, -0.0f, 1.0f, -1.0f, 3.0e38f, -3.0e38f};
        for (int i = 0; i < 20000; ++i) {
            const auto pick = [&]() {
                const std::uint32_t r = rng.next_u32();
                return r % 4 == 0 ? specials[r % 6] : static_cast<float>((rng.uniform_f64() - 0.5) * 20.0);
            };
            const float a = pick();
            const float b = pick();
            const auto ia = static_cast<std::int32_t>(rng.next_u32() % 1000);
            const auto ib = static_cast<std::int32_t>(rng.next_u32() % 1000);
            if (ia == ib) continue;
            QCOMPARE(rank_key(a, ia) > rank_key(b, ib), ranks_before(a, ia, b, ib));
            QCOMPARE(rank_key_id(rank_key(a, ia)), ia);
            QCOMPARE(rank_key_value(rank_key(a, ia)), a == 0.0f ? 0.0f : a);
        }
        QVERIFY(rank_key(-INFINITY, 0) < lowest_rank_key_at_least(-3.4028234e38f));
    }

    void historyTableCountsEachIdOnce() {
        const std::vector<std::int32_t> prompt{5, 5, 9, 1};
        const std::vector<std::int32_t> output{9, 9, 2, 5};
        HistoryTable table;
        table.capacity = history_capacity(prompt.size() + output.size());
        QCOMPARE(table.capacity, 16U);
        std::vector<std::int32_t> ids(table.capacity);
        std::vector<std::uint32_t> context(table.capacity), counts(table.capacity);
        std::vector<double> penalised(table.capacity);
        table.ids = ids.data();
        table.in_context = context.data();
        table.output_count = counts.data();
        table.penalised = penalised.data();
        history_clear(table);
        history_add(table, prompt.data(), 4, output.data(), 4);
        const auto count_of = [&](std::int32_t id) { return table.output_count[history_find(table, id)]; };
        QCOMPARE(count_of(9), 2U);
        QCOMPARE(count_of(5), 1U);
        QCOMPARE(count_of(2), 1U);
        QCOMPARE(count_of(1), 0U);
        QCOMPARE(history_find(table, 3), std::int64_t{-1});
        std::size_t distinct = 0;
        for (const auto id : ids) distinct += id != kEmptySlot;
        QCOMPARE(distinct, std::size_t{4});
    }

    // Upper-tail probabilities from standard chi-square tables.
    void chiSquareTail() {
        QVERIFY(std::fabs(chi_square_p_value(3.841458820694124, 1) - 0.05) < 1e-9);
        QVERIFY(std::fabs(chi_square_p_value(18.307038053275146, 10) - 0.05) < 1e-9);
        QVERIFY(std::fabs(chi_square_p_value(2.0, 2) - std::exp(-1.0)) < 1e-12);
        QVERIFY(std::fabs(chi_square_p_value(1124.0, 1000) - 0.003) < 1e-3);
        QCOMPARE(chi_square_p_value(0.0, 4), 1.0);
    }

    // The near-tie rule on the contract's worked example (V = 5, x = [1, 3, 2, 3, -1],
    // k = 3, p = 0.8, seed 0: kept {1, 3}, token 3).
    void nearTieRule() {
        const std::vector<double> logits{1, 3, 2, 3, -1};
        SamplingParams params;
        params.top_k = 3;
        params.top_p = 0.8;
        params.seed = 0;
        const SampleTrace trace = trace_once(logits, params);
        QCOMPARE(trace.token, 3);
        QCOMPARE(compare_token(trace, 3, 1e-9), Verdict::Equal);
        QCOMPARE(compare_token(trace, 1, 1e-9), Verdict::Mismatch);  // u = 0.802 is far from the boundary 0.5
        QCOMPARE(compare_token(trace, 1, 0.31), Verdict::NearTie);
        const std::vector<std::int32_t> same{1, 3};
        const std::vector<std::int32_t> more{1, 2, 3};
        QCOMPARE(compare_kept(trace, same, 1e-9), Verdict::Equal);
        std::vector<std::int32_t> bad;
        QCOMPARE(compare_kept(trace, more, 1e-9, &bad), Verdict::Mismatch);
        QCOMPARE(bad, std::vector<std::int32_t>{2});
        // Id 2's exclusive prefix mass is 2 e^3 / (2 e^3 + e^2), about 0.8446: near p = 0.8 only with a wide delta.
        QCOMPARE(compare_kept(trace, more, 0.05), Verdict::NearTie);
        QCOMPARE(compare_logprob(-0.92487, -0.92487 + 5e-10, 1e-9), Verdict::Equal);
        QCOMPARE(compare_logprob(-0.92487, -0.92487 + 5e-9, 1e-9), Verdict::Mismatch);
        QVERIFY(std::fabs(reference_logprob_of(trace, 3) - trace.logprob) < 1e-15);
        CompareCounts counts;
        counts.add(Verdict::Equal);
        counts.add(Verdict::NearTie);
        counts.add(Verdict::Mismatch);
        QCOMPARE(counts.rows, std::size_t{3});
        QCOMPARE(counts.near_tie, std::size_t{1});
        // Greedy: tokens whose logits agree within delta x magnitude are near-ties.
        SamplingParams greedy;
        greedy.temperature = 0.0;
        const std::vector<double> close{5.0, 5.0 + 1e-12, 1.0};
        const SampleTrace argmax = trace_once(close, greedy);
        QCOMPARE(argmax.token, 1);
        QCOMPARE(compare_token(argmax, 0, 1e-9), Verdict::NearTie);
        QCOMPARE(compare_token(argmax, 2, 1e-9), Verdict::Mismatch);
    }
};

QTEST_APPLESS_MAIN(KernelMathTest)
#include "test_kernel_math.moc"
