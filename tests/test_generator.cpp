// The contract's generator check values (contract section 1, "Check values").
#include <QtTest>

#include <array>
#include <cstdint>

#include "engine/core/generator.h"

using namespace samplescope;

namespace {

struct CheckRow {
    std::uint64_t seed;
    std::uint64_t child;
    std::array<std::uint32_t, 4> first_u32;
    std::array<double, 3> first_uniform;
};

// Copied from the sampling contract's table of check values.
const std::array<CheckRow, 5> kCheckRows{{
    {0ULL, 0xF88BB8A8724C81ECULL, {0xcd561877, 0xfdf559a2, 0x934762fe, 0x3ea56dcc},
     {0.80209496430867, 0.5753080244745853, 0.35363254105843234}},
    {1ULL, 0x71C18690EE42C90BULL, {0xc9452adc, 0xce5f5b6d, 0x5625d39f, 0xc1135634},
     {0.7862116612508293, 0.33651468897103354, 0.5529155800297787}},
    {42ULL, 0x581CE1FF0E4AE394ULL, {0xd5a4a20d, 0xc0fbc8c1, 0x799fa039, 0xa8ef6fca},
     {0.8345433505610195, 0.4750919476290939, 0.5005819546708365}},
    {(1ULL << 53) + 1, 0x9EEE1B40C84BFC57ULL, {0x8a6667a3, 0x2475318a, 0xf4b92108, 0xbedfca2a},
     {0.5406250737473399, 0.9559498449660843, 0.1903108789966368}},
    {~0ULL, 0x6D1DB36CCBA982D2ULL, {0x182f88ea, 0x30fbd0bd, 0x7ad28b59, 0x16947d92},
     {0.09447532384454793, 0.4797751514912124, 0.06409906870402637}},
}};

}  // namespace

class GeneratorTest : public QObject {
    Q_OBJECT
private slots:
    void childSeed() {
        for (const auto& row : kCheckRows) QCOMPARE(child_seed(row.seed, kSampleLabel), row.child);
    }
    void firstOutputs() {
        for (const auto& row : kCheckRows) {
            Pcg32 rng = stream(row.seed, kSampleLabel);
            for (const auto expected : row.first_u32) QCOMPARE(rng.next_u32(), expected);
        }
    }
    void firstUniforms() {
        for (const auto& row : kCheckRows) {
            Pcg32 rng = stream(row.seed, kSampleLabel);
            for (const double expected : row.first_uniform) QCOMPARE(rng.uniform_f64(), expected);
        }
    }
    void uniformTakesTwoOutputs() {
        Pcg32 a = stream(7, kSampleLabel);
        Pcg32 b = stream(7, kSampleLabel);
        a.uniform_f64();
        b.next_u32();
        b.next_u32();
        QCOMPARE(a.next_u32(), b.next_u32());
    }
    void uniformInUnitInterval() {
        Pcg32 rng = stream(123, kSampleLabel);
        for (int i = 0; i < 100000; ++i) {
            const double u = rng.uniform_f64();
            QVERIFY(u >= 0.0 && u < 1.0);
        }
    }
    // The jump lands where sequential draws land, and the largest skip the
    // flags accept is a jump, not a loop: the state's period is 2^64 outputs,
    // so 2^64 - 1 skipped uniforms and one more draw return to the start.
    void skipDrawsIsAnExactJump() {
        for (const std::uint64_t skip : {0ULL, 1ULL, 3ULL, 1000ULL, 123457ULL}) {
            Pcg32 sequential = stream(7, kSampleLabel);
            for (std::uint64_t i = 0; i < skip; ++i) sequential.uniform_f64();
            Pcg32 jumped = stream_after(7, skip);
            QCOMPARE(jumped.state, sequential.state);
        }
        const Pcg32 start = stream(99, kSampleLabel);
        Pcg32 wrapped = stream_after(99, ~0ULL);
        wrapped.uniform_f64();
        QCOMPARE(wrapped.state, start.state);
        Pcg32 half = stream_after(99, 1ULL << 62);
        half.skip_draws(1ULL << 62);
        half.skip_draws(1ULL << 62);
        half.skip_draws(1ULL << 62);
        QCOMPARE(half.state, start.state);
    }

    void generatorIsConstexpr() {
        // The same code must run in CUDA kernels; compile-time evaluation proves it has no hidden state.
        constexpr double first = stream(0, kSampleLabel).uniform_f64();
        QCOMPARE(first, kCheckRows[0].first_uniform[0]);
    }
};

QTEST_APPLESS_MAIN(GeneratorTest)
#include "test_generator.moc"
