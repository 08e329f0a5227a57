// engine/distribution_stats: closed forms (uniform, one point, two points) and
// properties over many random distributions.
#include <QtTest>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/stats/distribution_stats.h"

using namespace samplescope;

class DistributionStatsTest : public QObject {
    Q_OBJECT
private slots:
    void uniformHasLog2NBits() {
        for (std::size_t n : {1u, 2u, 4u, 5u, 1000u}) {
            const std::vector<double> probs(n, 1.0 / static_cast<double>(n));
            const auto stats = distribution_stats(probs);
            QCOMPARE(stats.count, n);
            QVERIFY(std::fabs(stats.entropy_bits - std::log2(static_cast<double>(n))) < 1e-12);
            QVERIFY(std::fabs(stats.perplexity - static_cast<double>(n)) < 1e-9 * static_cast<double>(n));
            QCOMPARE(stats.top1_prob, 1.0 / static_cast<double>(n));
        }
    }
    void onePointHasZeroEntropy() {
        const auto stats = distribution_stats(std::vector<double>{1.0});
        QCOMPARE(stats.entropy_bits, 0.0);
        QCOMPARE(stats.perplexity, 1.0);
        QCOMPARE(stats.top1_prob, 1.0);
    }
    void zerosContributeNothing() {
        // 0 log 0 = 0: a dropped id in the probs changes nothing but the count.
        const auto with_zero = distribution_stats(std::vector<double>{0.5, 0.0, 0.5});
        QCOMPARE(with_zero.entropy_bits, 1.0);
        QCOMPARE(with_zero.count, std::size_t{3});
    }
    void contractWorkedExampleFinalSet() {
        // The contract's worked example ends with q[1] = q[3] = 0.5: one bit.
        const auto stats = distribution_stats(std::vector<double>{0.5, 0.5});
        QCOMPARE(stats.entropy_bits, 1.0);
        QCOMPARE(stats.perplexity, 2.0);
    }
    void boundsOverRandomDistributions() {
        std::mt19937_64 rng(7);
        std::uniform_int_distribution<int> size(1, 300);
        std::exponential_distribution<double> weight(1.0);
        for (int row = 0; row < 2000; ++row) {
            std::vector<double> probs(static_cast<std::size_t>(size(rng)));
            double total = 0.0;
            for (auto& p : probs) total += (p = weight(rng));
            for (auto& p : probs) p /= total;
            const auto stats = distribution_stats(probs);
            const double n = static_cast<double>(probs.size());
            QVERIFY(stats.entropy_bits >= 0.0);
            QVERIFY(stats.entropy_bits <= std::log2(n) + 1e-9);
            QVERIFY(stats.perplexity >= 1.0 - 1e-12 && stats.perplexity <= n * (1 + 1e-9));
            QVERIFY(stats.top1_prob >= 1.0 / n - 1e-12);
            // Perplexity is at most 1 / max q's reciprocal bound: H >= -log2(max q).
            QVERIFY(stats.entropy_bits >= -std::log2(stats.top1_prob) - 1e-9);
        }
    }
    void subsetMass() {
        const std::vector<std::int32_t> ids{1, 3, 4, 8};
        const std::vector<double> probs{0.1, 0.2, 0.3, 0.4};
        QCOMPARE(subset_mass(ids, probs, std::vector<std::int32_t>{3, 8}), 0.2 + 0.4);
        QCOMPARE(subset_mass(ids, probs, std::vector<std::int32_t>{}), 0.0);
        QCOMPARE(subset_mass(ids, probs, std::vector<std::int32_t>{0, 2, 9}), 0.0);  // absent ids count as 0
        QCOMPARE(subset_mass(ids, probs, ids), 0.1 + 0.2 + 0.3 + 0.4);
    }
    void subsetMassMatchesDirectSumOverRandomSubsets() {
        std::mt19937_64 rng(11);
        for (int row = 0; row < 1000; ++row) {
            std::vector<std::int32_t> ids;
            std::vector<double> probs;
            std::vector<std::int32_t> subset;
            double expected = 0.0;
            for (std::int32_t id = 0; id < 200; ++id) {
                if (rng() % 3 == 0) continue;
                ids.push_back(id);
                probs.push_back(static_cast<double>(rng() % 1000) / 1000.0);
                if (rng() % 2 == 0) {
                    subset.push_back(id);
                    expected += probs.back();
                }
            }
            QCOMPARE(subset_mass(ids, probs, subset), expected);
        }
    }
};

QTEST_APPLESS_MAIN(DistributionStatsTest)
#include "test_distribution_stats.moc"
