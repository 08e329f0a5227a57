// Element conversions: every f16 and bf16 bit pattern decodes exactly and
// encodes back to itself; rounding is to nearest, ties to even; byte orders
// match hand-written bytes.
#include <QtTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "engine/io/float_formats.h"

using namespace samplescope;

class FloatFormatsTest : public QObject {
    Q_OBJECT
private slots:
    void halfEveryPatternRoundTrips() {
        for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
            const double value = half_bits_to_double(static_cast<std::uint16_t>(bits));
            if (std::isnan(value)) {
                QVERIFY((bits & 0x7C00u) == 0x7C00u && (bits & 0x3FFu) != 0);
                continue;
            }
            QCOMPARE(double_to_half_bits(value), static_cast<std::uint16_t>(bits));
        }
    }
    void halfKnownValues() {
        QCOMPARE(half_bits_to_double(0x3C00), 1.0);
        QCOMPARE(half_bits_to_double(0xC000), -2.0);
        QCOMPARE(half_bits_to_double(0x7BFF), 65504.0);
        QCOMPARE(half_bits_to_double(0x0001), std::ldexp(1.0, -24));
        QCOMPARE(half_bits_to_double(0xFC00), -std::numeric_limits<double>::infinity());
        // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even 1.
        QCOMPARE(double_to_half_bits(1.0 + std::ldexp(1.0, -11)), std::uint16_t{0x3C00});
        QCOMPARE(double_to_half_bits(1.0 + 3 * std::ldexp(1.0, -11)), std::uint16_t{0x3C02});
        QCOMPARE(double_to_half_bits(65519.0), std::uint16_t{0x7BFF});
        QCOMPARE(double_to_half_bits(65520.0), std::uint16_t{0x7C00});
    }
    void bfloat16EveryPatternRoundTrips() {
        for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
            const double value = bfloat16_bits_to_double(static_cast<std::uint16_t>(bits));
            if (std::isnan(value)) continue;
            QCOMPARE(double_to_bfloat16_bits(value), static_cast<std::uint16_t>(bits));
            // bf16 is the top half of an f32.
            QCOMPARE(value, static_cast<double>(std::bit_cast<float>(bits << 16)));
        }
    }
    void bfloat16RoundsOnceFromDouble() {
        // 1 + 2^-8 + 2^-30 is just above the midpoint of 1 and 1 + 2^-7: it must
        // round up, though rounding to f32 first would land on the midpoint and tie down.
        QCOMPARE(double_to_bfloat16_bits(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)), std::uint16_t{0x3F81});
        QCOMPARE(double_to_bfloat16_bits(1.0 + std::ldexp(1.0, -8)), std::uint16_t{0x3F80});
        QCOMPARE(double_to_bfloat16_bits(-1.0), std::uint16_t{0xBF80});
    }
    void decodeMatchesScalarOnEveryPattern() {
        // decode_elements' loops (vectorised, branch-free for f16) against the
        // one-value functions on all 65,536 patterns, in both byte orders; a NaN
        // need only stay a NaN of the same sign.
        std::vector<std::byte> little(2 * 65536), big(2 * 65536);
        for (std::uint32_t bits = 0; bits < 65536; ++bits) {
            little[2 * bits] = big[2 * bits + 1] = static_cast<std::byte>(bits & 0xFFu);
            little[2 * bits + 1] = big[2 * bits] = static_cast<std::byte>(bits >> 8);
        }
        std::vector<double> decoded(65536);
        for (const auto type : {FloatType::F16, FloatType::BF16}) {
            for (const bool big_endian : {false, true}) {
                decode_elements((big_endian ? big : little).data(), decoded.size(), {type, big_endian}, decoded.data());
                for (std::uint32_t bits = 0; bits < 65536; ++bits) {
                    const auto pattern = static_cast<std::uint16_t>(bits);
                    const double want = type == FloatType::F16 ? half_bits_to_double(pattern) : bfloat16_bits_to_double(pattern);
                    const double got = decoded[bits];
                    const bool same = std::isnan(want) ? std::isnan(got) && std::signbit(got) == std::signbit(want)
                                                       : std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(want);
                    if (!same) QFAIL(qPrintable(QString("%1 pattern 0x%2 (%3): got %4, want %5")
                                                    .arg(float_type_name(type)).arg(bits, 4, 16, QChar('0'))
                                                    .arg(big_endian ? "big-endian" : "little-endian").arg(got).arg(want)));
                }
            }
        }
    }
    void encodeMatchesHandWrittenBytes() {
        const double values[2] = {1.0, -2.0};
        const struct {
            ElementFormat format;
            std::vector<unsigned char> bytes;
        } cases[] = {
            {{FloatType::F16, false}, {0x00, 0x3C, 0x00, 0xC0}},
            {{FloatType::F16, true}, {0x3C, 0x00, 0xC0, 0x00}},
            {{FloatType::BF16, false}, {0x80, 0x3F, 0x00, 0xC0}},
            {{FloatType::BF16, true}, {0x3F, 0x80, 0xC0, 0x00}},
            {{FloatType::F32, false}, {0, 0, 0x80, 0x3F, 0, 0, 0, 0xC0}},
            {{FloatType::F32, true}, {0x3F, 0x80, 0, 0, 0xC0, 0, 0, 0}},
            {{FloatType::F64, false}, {0, 0, 0, 0, 0, 0, 0xF0, 0x3F, 0, 0, 0, 0, 0, 0, 0, 0xC0}},
            {{FloatType::F64, true}, {0x3F, 0xF0, 0, 0, 0, 0, 0, 0, 0xC0, 0, 0, 0, 0, 0, 0, 0}},
        };
        for (const auto& c : cases) {
            std::vector<std::byte> encoded(c.bytes.size());
            encode_elements(values, 2, c.format, encoded.data());
            QVERIFY(std::memcmp(encoded.data(), c.bytes.data(), c.bytes.size()) == 0);
            double decoded[2];
            decode_elements(reinterpret_cast<const std::byte*>(c.bytes.data()), 2, c.format, decoded);
            QCOMPARE(decoded[0], 1.0);
            QCOMPARE(decoded[1], -2.0);
        }
    }
    void randomDoublesRoundToNearest() {
        // Encoded then decoded, a value is never farther from the original than
        // a neighbour of the result is (nearest rounding), over many random values.
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> uniform(-60000.0, 60000.0);
        for (int i = 0; i < 5000; ++i) {
            const double x = uniform(rng) * std::ldexp(1.0, static_cast<int>(rng() % 20) - 19);
            for (const auto type : {FloatType::F16, FloatType::BF16}) {
                const std::uint16_t bits = type == FloatType::F16 ? double_to_half_bits(x) : double_to_bfloat16_bits(x);
                const auto decode = [&](std::uint16_t b) {
                    return type == FloatType::F16 ? half_bits_to_double(b) : bfloat16_bits_to_double(b);
                };
                const double error = std::fabs(decode(bits) - x);
                for (const int step : {-1, 1}) {
                    const auto neighbour = static_cast<std::uint16_t>(bits + step);
                    const double other = decode(neighbour);
                    if (std::isfinite(other)) QVERIFY(error <= std::fabs(other - x));
                }
            }
        }
    }
};

QTEST_APPLESS_MAIN(FloatFormatsTest)
#include "test_float_formats.moc"
