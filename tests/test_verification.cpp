// Sampler verification (engine/stats/verification.h): known G statistics,
// pooling, Holm and power figures; draws from the exact q pass at the stated
// false-alarm rate over many seeds; subtly wrong samplers fail; the samples
// reader and `samplescope-cli verify` (exit 0 / 1 / 2, --plan).
#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include <nlohmann/json.hpp>

#include "engine/core/generator.h"
#include "engine/base/input_error.h"
#include "engine/io/samples_reader.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"
#include "engine/stats/verification.h"

using namespace samplescope;

namespace {

// A sampler under test: N draws from the distribution `p` over ids 0..V-1,
// by inverse CDF with the project's generator (any correct method would do).
std::vector<std::int64_t> draw(const Values& p, std::size_t n, std::uint64_t seed) {
    Values cumulative(p.size());
    std::partial_sum(p.begin(), p.end(), cumulative.begin());
    Pcg32 rng = stream(seed, kSampleLabel);
    std::vector<std::int64_t> out(n);
    for (auto& id : out) {
        const double u = rng.uniform_f64() * cumulative.back();
        auto at = std::upper_bound(cumulative.begin(), cumulative.end(), u);
        if (at == cumulative.end()) --at;
        while (p[static_cast<std::size_t>(at - cumulative.begin())] == 0.0) --at;  // never an id of mass 0
        id = at - cumulative.begin();
    }
    return out;
}

// The exact final distribution of a row as V probabilities (0 off the kept set).
struct Exact {
    PipelineTrace trace;
    Values full;  // V entries
};

Exact exact_of(const std::vector<double>& logits, const SamplingParams& params, const std::string& pipeline = "spec") {
    Exact e{trace_pipeline_once(preset_pipeline(pipeline), PipelineInput{logits, params, {}, {}}), {}};
    e.full.assign(logits.size(), 0.0);
    const auto& kept = e.trace.trace.final_kept();
    const auto& q = e.trace.trace.final_probs();
    for (std::size_t i = 0; i < kept.size(); ++i) e.full[static_cast<std::size_t>(kept[i])] = q[i];
    return e;
}

VerifyResult verify_one(const Exact& e, const std::vector<std::int64_t>& samples, double alpha = kDefaultVerifyAlpha) {
    const VerifyRowInput row{&e.trace.trace.final_kept(), &e.trace.trace.final_probs(), samples};
    return verify_rows(std::span(&row, 1), alpha);
}

double total_variation(const Values& a, const Values& b) {
    double s = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) s += std::fabs(a[i] - b[i]);
    return 0.5 * s;
}

// Softmax over the ids where keep(i) holds, of logits / temperature.
template <typename Keep>
Values softmax_where(const std::vector<double>& logits, double temperature, Keep keep) {
    Values p(logits.size(), 0.0);
    double top = -INFINITY;
    for (std::size_t i = 0; i < logits.size(); ++i) {
        if (keep(i)) top = std::max(top, logits[i] / temperature);
    }
    double sum = 0.0;
    for (std::size_t i = 0; i < logits.size(); ++i) {
        if (keep(i)) sum += p[i] = std::exp(logits[i] / temperature - top);
    }
    for (auto& v : p) v /= sum;
    return p;
}

// A row like a language model's: a few strong candidates, a long tail.
std::vector<double> model_row(std::size_t vocab, double slope = 2.2) {
    std::vector<double> logits(vocab);
    for (std::size_t i = 0; i < vocab; ++i) {
        const double rank = static_cast<double>((i * 7919) % vocab);
        logits[i] = 8.0 - slope * std::log1p(rank);
    }
    return logits;
}

SamplingParams params_of(double temperature, std::int64_t top_k, double top_p, double min_p) {
    SamplingParams p;
    p.temperature = temperature;
    p.top_k = top_k;
    p.top_p = top_p;
    p.min_p = min_p;
    p.seed = 1;
    return p;
}

struct Run {
    int exit_code = -1;
    QByteArray out;
    QByteArray err;
};

Run cli(const QStringList& args) {
    QProcess process;
    process.start(QStringLiteral(SAMPLESCOPE_CLI), args);
    process.waitForFinished(60000);
    return {process.exitCode(), process.readAllStandardOutput(), process.readAllStandardError()};
}

void write_text(const QString& path, const std::string& text) {
    std::ofstream(path.toStdString(), std::ios::binary) << text;
}

// A .npy file of integers, written by hand: little-endian `descr` <i4 or <i8.
void write_npy_ints(const QString& path, const std::vector<std::int64_t>& values, const std::string& shape,
                    int width, bool fortran = false) {
    std::string header = "{'descr': '<i" + std::to_string(width) + "', 'fortran_order': " +
                         (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string bytes = "\x93NUMPY";
    bytes += '\x01';
    bytes += '\x00';
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header;
    for (const std::int64_t v : values) {
        const auto bits = static_cast<std::uint64_t>(v);
        for (int k = 0; k < width; ++k) bytes += static_cast<char>((bits >> (8 * k)) & 0xff);
    }
    write_text(path, bytes);
}

}  // namespace

class VerificationTest : public QObject {
    Q_OBJECT
private slots:
    void knownGStatistic() {
        // Observed 10, 20, 30 against 20 each: G = 2 (10 ln 0.5 + 30 ln 1.5), dof 2,
        // divided by Williams' q = 1 + (sum 1 / pi - 1) / (6 N (k - 1)) = 1 + (9 - 1) / (6 x 60 x 2),
        // which for equal bins is 1 + (k + 1) / (6 N) = 1 + 4 / 360.
        const std::vector<double> observed{10, 20, 30};
        const std::vector<double> expected{20, 20, 20};
        const GTest g = g_test(observed, expected);
        const double raw = 2.0 * (10.0 * std::log(0.5) + 30.0 * std::log(1.5));
        QVERIFY(std::fabs(g.statistic - raw / (1.0 + 4.0 / 360.0)) < 1e-12);
        QCOMPARE(g.degrees_of_freedom, std::size_t{2});
        QVERIFY(std::fabs(g.p_value - std::exp(-g.statistic / 2.0)) < 1e-12);  // chi-square(2) upper tail
        // One bin: nothing to test.
        const GTest one = g_test(std::vector<double>{5}, std::vector<double>{5});
        QCOMPARE(one.degrees_of_freedom, std::size_t{0});
        QCOMPARE(one.p_value, 1.0);
    }

    void poolingRule() {
        // 400 draws over q: 0.001 x 10 (0.4 each expected), 0.09, 0.4, 0.5.
        Values q(10, 0.001);
        q.push_back(0.09);
        q.push_back(0.4);
        q.push_back(0.5);
        q.push_back(0.0);  // never in a bin
        std::vector<std::size_t> bin_of;
        // Ascending: ten 0.4s (4.0 expected) and 36 make the first bin (40),
        // then 160, then 200: three bins.
        QCOMPARE(kMinExpectedPerBin, 20.0);
        QCOMPARE(pool_bins(q, 400.0, bin_of), std::size_t{3});
        for (std::size_t i = 0; i < 11; ++i) QCOMPARE(bin_of[i], std::size_t{0});
        QCOMPARE(bin_of[11], std::size_t{1});
        QCOMPARE(bin_of[12], std::size_t{2});
        QCOMPARE(bin_of[13], std::numeric_limits<std::size_t>::max());
        // 40 draws: 0.4 + 3.6 = 4, then 16 closes the first bin at 20, then 20: two bins.
        QCOMPARE(pool_bins(q, 40.0, bin_of), std::size_t{2});
        // A remainder below 20 joins the last bin; 12 draws give one bin.
        QCOMPARE(pool_bins(q, 12.0, bin_of), std::size_t{1});
    }

    void holmAndChiSquare() {
        const std::vector<double> p{0.01, 0.04, 0.03, 0.005};
        const std::vector<double> adjusted = holm_adjust(p);
        const std::vector<double> want{0.03, 0.06, 0.06, 0.02};
        for (std::size_t i = 0; i < p.size(); ++i) QVERIFY(std::fabs(adjusted[i] - want[i]) < 1e-15);
        QVERIFY(std::fabs(chi_square_critical(0.05, 1.0) - 3.841458820694124) < 1e-7);
        QVERIFY(std::fabs(chi_square_critical(1e-3, 10.0) - 29.58829844507442) < 1e-6);
        // dof 1, 5%, power 0.9: chi-square(1, lambda) is (Z + sqrt(lambda))^2, so
        // lambda = (1.959964 + 1.281552)^2 = 10.5074 up to the far tail P(Z < -1.96 - sqrt(lambda)).
        const double lambda = noncentrality_for_power(0.05, 1.0, 0.9);
        QVERIFY2(std::fabs(lambda - 10.5074) < 0.01, qPrintable(QString::number(lambda, 'g', 10)));
        // dof 10, 1% (critical value 23.2093), power 0.9: lambda = 26.98; two million
        // noncentral chi-square(10, 26.98) draws (numpy) exceed 23.2093 with frequency 0.9004.
        QVERIFY2(std::fabs(noncentrality_for_power(0.01, 10.0, 0.9) - 26.98) < 0.05,
                 qPrintable(QString::number(noncentrality_for_power(0.01, 10.0, 0.9))));
        // Poisson: 0 observed with mean 3 gives 2 e^-3.
        QVERIFY(std::fabs(poisson_two_sided_p(0, 3.0) - 2.0 * std::exp(-3.0)) < 1e-14);
        QCOMPARE(poisson_two_sided_p(5, 5.0), 1.0);
    }

    void tailRegion() {
        // q below 2^-24 all count; above it, the smallest ids up to 1e-4 of the mass.
        Values q{1e-9, 3e-5, 3e-5, 5e-5, 0.5};
        q.back() = 1.0 - std::accumulate(q.begin(), q.end() - 1, 0.0);
        const auto region = tail_region(q);
        QCOMPARE(region.size(), std::size_t{3});  // 1e-9, 3e-5, 3e-5 (adding 5e-5 passes 1e-4)
        QCOMPARE(region[0], std::size_t{0});
    }

    void exactDrawsPassAtTheStatedRate() {
        // 400 seeds of exact draws on a truncated row: at alpha = 0.05 about 5% of
        // rows fail (Holm over the two tests keeps it at most 5%); at the default
        // 1e-3, almost none.
        const auto logits = model_row(2000, 1.2);
        const Exact e = exact_of(logits, params_of(0.8, 0, 0.95, 0.0));
        QVERIFY(e.trace.trace.final_kept().size() > 50);
        int fail_05 = 0;
        int fail_default = 0;
        constexpr int kSeeds = 400;
        for (int seed = 0; seed < kSeeds; ++seed) {
            const auto samples = draw(e.full, 3000, static_cast<std::uint64_t>(seed) + 1000);
            fail_05 += verify_one(e, samples, 0.05).pass ? 0 : 1;
            fail_default += verify_one(e, samples).pass ? 0 : 1;
        }
        qInfo("exact draws, %d seeds: %d rows fail at alpha 0.05, %d at 1e-3", kSeeds, fail_05, fail_default);
        // At most 5% (binomial(400, 0.05): mean 20, sd 4.4); Holm over the G and the
        // (discrete, rarely rejecting) tail test makes the rate lower, about alpha / 2.
        QVERIFY2(fail_05 >= 2 && fail_05 <= 34, qPrintable(QString::number(fail_05)));
        QVERIFY2(fail_default <= 3, qPrintable(QString::number(fail_default)));
    }

    void topPDroppingTheCrossingToken() {
        const auto logits = model_row(1000);
        const Exact e = exact_of(logits, params_of(1.0, 0, 0.9, 0.0));
        const auto crossing = e.trace.trace.stage(Stage::TopP).crossing_id;
        QVERIFY(crossing.has_value());
        Values wrong = e.full;
        wrong[static_cast<std::size_t>(*crossing)] = 0.0;
        const double mass = std::accumulate(wrong.begin(), wrong.end(), 0.0);
        for (auto& v : wrong) v /= mass;
        const double tv = total_variation(wrong, e.full);
        const double level = per_test_level(kDefaultVerifyAlpha, 1);
        const std::uint64_t needed = samples_needed(e.trace.trace.final_probs(), tv, level);
        const auto result = verify_one(e, draw(wrong, static_cast<std::size_t>(needed), 5));
        qInfo("top-p without its crossing token: tv %.4g, %llu draws needed", tv, static_cast<unsigned long long>(needed));
        QVERIFY2(!result.pass, qPrintable(QString("tv %1, needed %2").arg(tv).arg(needed)));
        QVERIFY(result.rows[0].detectable_tv <= tv * 1.001);
        QVERIFY(result.rows[0].support_violations.empty());
        QCOMPARE(result.rows[0].largest_deviations[0].id, std::int64_t{*crossing});
        // Exact draws of the same size pass.
        QVERIFY(verify_one(e, draw(e.full, static_cast<std::size_t>(needed), 5)).pass);
    }

    void temperatureAfterTruncation() {
        // Top-k then top-p on the untempered q, temperature applied to the
        // survivors afterwards: a smaller kept set when T > 1.
        const auto logits = model_row(1000);
        const SamplingParams params = params_of(1.5, 40, 0.8, 0.0);
        const Exact e = exact_of(logits, params);
        SamplingParams untempered = params;
        untempered.temperature = 1.0;
        const Exact early = exact_of(logits, untempered);
        const auto& kept = early.trace.trace.final_kept();
        const Values wrong = softmax_where(logits, 1.5, [&](std::size_t i) {
            return std::binary_search(kept.begin(), kept.end(), static_cast<std::int32_t>(i));
        });
        const double tv = total_variation(wrong, e.full);
        QVERIFY(tv > 0.01);
        const std::uint64_t needed = samples_needed(e.trace.trace.final_probs(), tv, per_test_level(1e-3, 1));
        // detectable_tv speaks of the distance over the pooled bins: at the 68 draws
        // it asks for, the five dropped ids share a bin with a kept one and the
        // difference hides inside it, so the test takes at least 500.
        qInfo("temperature after truncation: tv %.4g, %llu draws needed", tv, static_cast<unsigned long long>(needed));
        const auto result = verify_one(e, draw(wrong, std::max<std::size_t>(needed, 500), 6));
        QVERIFY(!result.pass);
        QVERIFY(result.rows[0].detectable_tv <= tv * 1.001);
    }

    void minPAgainstTheFullRowsMax() {
        // min-p's floor taken from the full row's maximum before temperature
        // (softmax of the raw logits) rather than from the distribution it filters.
        const auto logits = model_row(1000);
        const SamplingParams params = params_of(1.5, 0, 1.0, 0.05);
        const Exact e = exact_of(logits, params);
        const Values raw = softmax_where(logits, 1.0, [](std::size_t) { return true; });
        const Values tempered = softmax_where(logits, 1.5, [](std::size_t) { return true; });
        const double floor = 0.05 * *std::max_element(raw.begin(), raw.end());
        const Values wrong = softmax_where(logits, 1.5, [&](std::size_t i) { return tempered[i] >= floor; });
        const double tv = total_variation(wrong, e.full);
        QVERIFY(tv > 0.01);
        const std::uint64_t needed = samples_needed(e.trace.trace.final_probs(), tv, per_test_level(1e-3, 1));
        qInfo("min-p against the full row's max: tv %.4g, %llu draws needed", tv, static_cast<unsigned long long>(needed));
        const auto result = verify_one(e, draw(wrong, static_cast<std::size_t>(needed), 7));
        QVERIFY(!result.pass);
    }

    void f32NoiseTailCutAt2ToTheMinus24() {
        // 50 strong ids and 20,000 ids each below 2^-24 (about 1e-3 of the mass
        // together): a sampler whose random numbers cannot reach q < 2^-24 never
        // draws them. The tail test sees it; exact draws pass it.
        std::vector<double> logits(20050, 0.0);
        const double tiny = std::log(5e-8 * 50.0 / (1.0 - 1e-3));
        for (std::size_t i = 50; i < logits.size(); ++i) logits[i] = tiny;
        const Exact e = exact_of(logits, params_of(1.0, 0, 1.0, 0.0));
        Values cut = e.full;
        for (auto& v : cut) v = v < kTinyProbability ? 0.0 : v;
        const double mass = std::accumulate(cut.begin(), cut.end(), 0.0);
        for (auto& v : cut) v /= mass;
        const auto bad = verify_one(e, draw(cut, 100000, 8));
        QVERIFY(!bad.pass);
        QCOMPARE(bad.rows[0].tail.observed, std::uint64_t{0});
        QVERIFY(bad.rows[0].tail.ids_below_tiny == 20000);
        QVERIFY(bad.rows[0].tail.expected > 50.0);
        QVERIFY(bad.rows[0].tail.p_value < 1e-12);
        const auto good = verify_one(e, draw(e.full, 100000, 8));
        QVERIFY(good.pass);
        QVERIFY(good.rows[0].tail.p_value > 1e-3);
    }

    void oneSampleOutsideTheKeptSet() {
        const auto logits = model_row(500);
        const Exact e = exact_of(logits, params_of(1.0, 20, 1.0, 0.0));
        auto samples = draw(e.full, 5000, 9);
        const auto& kept = e.trace.trace.final_kept();
        std::int64_t outside = 0;
        while (std::binary_search(kept.begin(), kept.end(), static_cast<std::int32_t>(outside))) ++outside;
        QVERIFY(verify_one(e, samples).pass);
        samples[1234] = outside;
        const auto result = verify_one(e, samples);
        QVERIFY(!result.pass);
        QCOMPARE(result.rows[0].outside_count, std::uint64_t{1});
        QCOMPARE(result.rows[0].support_violations.size(), std::size_t{1});
        QCOMPARE(result.rows[0].support_violations[0].id, outside);
        // An id beyond the vocabulary is a violation too.
        samples[1234] = 1 << 30;
        QVERIFY(!verify_one(e, samples).pass);
    }

    void holmAcrossRows() {
        // Two rows: one exact, one wrong. The batch fails on the wrong row only.
        const auto logits = model_row(300);
        const Exact e = exact_of(logits, params_of(1.0, 10, 1.0, 0.0));
        Values wrong = e.full;
        std::swap(wrong[static_cast<std::size_t>(e.trace.trace.final_kept()[0])],
                  wrong[static_cast<std::size_t>(e.trace.trace.final_kept()[1])]);
        const auto good = draw(e.full, 20000, 10);
        const auto bad = draw(wrong, 20000, 11);
        const std::vector<VerifyRowInput> rows{{&e.trace.trace.final_kept(), &e.trace.trace.final_probs(), good},
                                               {&e.trace.trace.final_kept(), &e.trace.trace.final_probs(), bad}};
        const bool differ = std::fabs(wrong[static_cast<std::size_t>(e.trace.trace.final_kept()[0])] -
                                      e.full[static_cast<std::size_t>(e.trace.trace.final_kept()[0])]) > 0.005;
        QVERIFY(differ);
        const auto result = verify_rows(rows);
        QVERIFY(!result.pass);
        QVERIFY(result.rows[0].pass);
        QVERIFY(!result.rows[1].pass);
        QCOMPARE(result.rows[0].level, kDefaultVerifyAlpha / 4.0);
        QVERIFY(result.rows[1].g_p_holm >= result.rows[1].g.p_value);
        QVERIFY_THROWS_EXCEPTION(InputError, verify_rows(rows, 0.0));
    }

    void powerShrinksWithDraws() {
        const auto logits = model_row(1000);
        const Exact e = exact_of(logits, params_of(1.0, 0, 0.9, 0.0));
        const Values& q = e.trace.trace.final_probs();
        const double level = per_test_level(1e-3, 1);
        const double at_1e4 = detectable_tv(q, 10000, level);
        const double at_1e6 = detectable_tv(q, 1000000, level);
        QVERIFY(at_1e4 > at_1e6);
        QVERIFY(at_1e4 < 0.2);
        const std::uint64_t n = samples_needed(q, 0.005, level);
        QVERIFY(detectable_tv(q, n, level) <= 0.005);
        QVERIFY(detectable_tv(q, n - 1, level) > 0.005 || n == 1);
        QVERIFY_THROWS_EXCEPTION(InputError, samples_needed(q, 0.0, level));
    }

    void samplesReader() {
        QTemporaryDir dir;
        const QString one = dir.filePath("one.txt");
        write_text(one, "3\n1\n# a comment\n\n2\n");
        auto rows = load_samples_file(one.toStdString());
        QCOMPARE(rows.rows.size(), std::size_t{1});
        QCOMPARE(rows.rows[0], (std::vector<std::int64_t>{3, 1, 2}));
        const QString two = dir.filePath("two.csv");
        write_text(two, "1,2,3\n4 5\n");
        rows = load_samples_file(two.toStdString());
        QCOMPARE(rows.rows.size(), std::size_t{2});
        QCOMPARE(rows.rows[1], (std::vector<std::int64_t>{4, 5}));
        const QString i4 = dir.filePath("i4.npy");
        write_npy_ints(i4, {0, 1, 2, 3, 4, 5}, "(2, 3)", 4);
        rows = load_samples_file(i4.toStdString());
        QCOMPARE(rows.rows[1], (std::vector<std::int64_t>{3, 4, 5}));
        const QString i8f = dir.filePath("i8f.npy");
        write_npy_ints(i8f, {0, 1, 2, 3, 4, 5}, "(2, 3)", 8, true);
        rows = load_samples_file(i8f.toStdString());
        QCOMPARE(rows.rows[0], (std::vector<std::int64_t>{0, 2, 4}));
        const QString flat = dir.filePath("flat.npy");
        write_npy_ints(flat, {-1, 7}, "(2,)", 8);
        rows = load_samples_file(flat.toStdString());
        QCOMPARE(rows.rows[0], (std::vector<std::int64_t>{-1, 7}));
        try {
            parse_samples_text("1\n2.5\n", "draws.txt");
            QFAIL("no error");
        } catch (const InputError& error) {
            QCOMPARE(QString(error.what()),
                     QString("draws.txt: line 2: a sample must be an integer token id, got \"2.5\""));
        }
        const QString bad_dtype = dir.filePath("f.npy");
        write_npy_ints(bad_dtype, {0}, "(1,)", 4);
        std::string bytes;
        {
            std::ifstream in(bad_dtype.toStdString(), std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(in), {});
        }
        bytes.replace(bytes.find("<i4"), 3, "<f4");
        try {
            load_samples_bytes(bytes, "f.npy");
            QFAIL("no error");
        } catch (const InputError& error) {
            QVERIFY(QString(error.what()).contains("'<f4' is not int32 or int64"));
        }
        QVERIFY_THROWS_EXCEPTION(InputError, parse_samples_text("\n# nothing\n", "empty.txt"));
    }

    void cliVerify() {
        QTemporaryDir dir;
        const std::vector<double> logits{1, 3, 2, 3, -1};
        SamplingParams params = params_of(1.0, 3, 0.8, 0.0);
        const Exact e = exact_of(logits, params);
        const auto samples = draw(e.full, 4000, 12);
        std::string text;
        for (const auto id : samples) text += std::to_string(id) + "\n";
        const QString good = dir.filePath("good.txt");
        write_text(good, text);
        const QStringList base{"verify", "--values", "1,3,2,3,-1", "--top-k", "3", "--top-p", "0.8"};
        Run run = cli(base + QStringList{"--samples", good});
        QCOMPARE(run.exit_code, 0);
        auto json = nlohmann::json::parse(run.out.toStdString());
        QCOMPARE(json["verdict"].get<std::string>(), std::string("pass"));
        QCOMPARE(json["rows"][0]["support_violations"].get<int>(), 0);
        for (const char* key : {"row", "verdict", "support_violations", "outside_ids", "g_statistic",
                                "degrees_of_freedom", "p_value", "tail", "detectable_tv"}) {
            QVERIFY2(json["rows"][0].contains(key), key);
        }
        for (const char* key : {"observed", "expected", "p_value"}) QVERIFY(json["rows"][0]["tail"].contains(key));

        const QString bad = dir.filePath("bad.txt");
        write_text(bad, text + "4\n");  // id 4 is outside top-k 3
        run = cli(base + QStringList{"--samples", bad});
        QCOMPARE(run.exit_code, 1);
        json = nlohmann::json::parse(run.out.toStdString());
        QCOMPARE(json["verdict"].get<std::string>(), std::string("fail"));
        QCOMPARE(json["rows"][0]["outside_ids"][0]["id"].get<int>(), 4);

        const QString broken = dir.filePath("broken.txt");
        write_text(broken, "1\nx\n");
        run = cli(base + QStringList{"--samples", broken});
        QCOMPARE(run.exit_code, 2);
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY(run.err.contains("line 2") && run.err.contains("\"x\""));
        run = cli(base + QStringList{"--samples", good, "--alpha", "2"});
        QCOMPARE(run.exit_code, 2);
        QVERIFY(run.err.contains("alpha"));
        run = cli(base);
        QCOMPARE(run.exit_code, 2);
        QVERIFY(run.err.contains("--samples"));

        run = cli(base + QStringList{"--plan", "--tv", "0.005"});
        QCOMPARE(run.exit_code, 0);
        json = nlohmann::json::parse(run.out.toStdString());
        QVERIFY(json["samples_needed"].get<std::uint64_t>() > 1000);
        QCOMPARE(json["samples_needed"].get<std::uint64_t>(),
                 samples_needed(e.trace.trace.final_probs(), 0.005, per_test_level(1e-3, 1)));
        run = cli(base + QStringList{"--plan"});
        QCOMPARE(run.exit_code, 2);
        QVERIFY(run.err.contains("--tv"));

        // Per-row parameters from a params file, draws as a [2, N] .npy.
        const QString logits_file = dir.filePath("logits.csv");
        write_text(logits_file, "1,3,2,3,-1\n0,0,1,2,0\n");
        const QString params_file = dir.filePath("params.json");
        write_text(params_file, R"([{"top_k": 3, "top_p": 0.8}, {"temperature": 0.5}])");
        const Exact second = exact_of({0, 0, 1, 2, 0}, params_of(0.5, 0, 1.0, 0.0));
        const auto row0 = draw(e.full, 3000, 13);
        const auto row1 = draw(second.full, 3000, 14);
        std::vector<std::int64_t> both(row0);
        both.insert(both.end(), row1.begin(), row1.end());
        const QString npy = dir.filePath("draws.npy");
        write_npy_ints(npy, both, "(2, 3000)", 8);
        run = cli({"verify", "--logits", logits_file, "--params", params_file, "--samples", npy});
        QCOMPARE(run.exit_code, 0);
        json = nlohmann::json::parse(run.out.toStdString());
        QCOMPARE(json["rows"].size(), std::size_t{2});
        QCOMPARE(json["rows"][1]["row"].get<int>(), 1);
        QCOMPARE(json["rows"][1]["kept_count"].get<int>(), 5);
        // Draws of row 1 against row 0's parameters fail.
        const QString swapped = dir.filePath("swapped.npy");
        std::vector<std::int64_t> reversed(row1);
        reversed.insert(reversed.end(), row0.begin(), row0.end());
        write_npy_ints(swapped, reversed, "(2, 3000)", 8);
        run = cli({"verify", "--logits", logits_file, "--params", params_file, "--samples", swapped});
        QCOMPARE(run.exit_code, 1);
        // A row count that matches nothing.
        const QString three = dir.filePath("three.txt");
        write_text(three, "1 2\n1 2\n1 2\n");
        run = cli({"verify", "--logits", logits_file, "--params", params_file, "--samples", three});
        QCOMPARE(run.exit_code, 2);
        QVERIFY(run.err.contains("3 rows"));
    }

    // --params sets every row's parameters: a parameter flag beside it was
    // silently dropped; now each is refused, naming the flag and its value.
    void paramsFileRefusesFlagsBesideIt() {
        QTemporaryDir dir;
        const QString draws = dir.filePath("draws.txt");
        write_text(draws, "1\n2\n2\n");
        const QString params = dir.filePath("params.json");
        write_text(params, R"([{"top_k": 2}])");
        const QStringList base{"verify", "--values", "1,2,3", "--samples", draws, "--params", params};
        const std::vector<std::pair<QStringList, QString>> cases{
            {{"--top-k", "5"}, "--top-k \"5\""},
            {{"--temperature", "0.5"}, "--temperature \"0.5\""},
            {{"--seed", "3"}, "--seed \"3\""},
            {{"--logit-bias", "0:1"}, "--logit-bias \"0:1\""},
            {{"--dry-sequence-breakers", "1"}, "--dry-sequence-breakers \"1\""},
            {{"--mirostat-mu", "2"}, "--mirostat-mu \"2\""},
            {{"--prompt-ids", "1"}, "--prompt-ids \"1\""},
            {{"--output-ids", "1"}, "--output-ids \"1\""},
            {{"--skip-draws", "1"}, "--skip-draws \"1\""},
            {{"--row", "0"}, "--row \"0\""},
            {{"--engine-defaults"}, "--engine-defaults"},
        };
        for (const auto& [flags, named] : cases) {
            const Run run = cli(base + flags);
            QVERIFY2(run.exit_code == 2, qPrintable(flags.join(' ')));
            QCOMPARE(run.err.count('\n'), 1);
            QVERIFY2(run.err.contains(named.toUtf8()) && run.err.contains("--params"), run.err.constData());
            QVERIFY(run.out.isEmpty());
        }
        QCOMPARE(cli(base).exit_code, 0);
    }

    // --plan's count is exact up to 2^53 and refused past it (it was capped
    // at 2^52 and printed as if it were the answer); a level alpha / (2 B)
    // too small to compute with is refused (it printed 0); --tv without
    // --plan and --samples with it are refused rather than ignored.
    void planAndLevelLimits() {
        QTemporaryDir dir;
        const QString draws = dir.filePath("draws.txt");
        write_text(draws, "0\n1\n2\n2\n");
        const QStringList base{"verify", "--values", "1,2,3"};
        Run run = cli(base + QStringList{"--plan", "--tv", "1e-10"});
        QCOMPARE(run.exit_code, 2);
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY2(run.err.contains("tv 1e-10 needs more than 2^53 draws (about 6.4e+20)"), run.err.constData());
        run = cli(base + QStringList{"--samples", draws, "--alpha", "5e-324"});
        QCOMPARE(run.exit_code, 2);
        QCOMPARE(run.err.trimmed(), QByteArray("samplescope-cli: alpha 5e-324 is too small: the per-test level alpha / 2 "
                                               "must be at least 1e-300, got 0"));
        run = cli(base + QStringList{"--samples", draws, "--alpha", "1e-299"});
        QCOMPARE(run.exit_code, 0);
        QCOMPARE(nlohmann::json::parse(run.out.toStdString())["rows"][0]["level"].get<double>(), 5e-300);
        run = cli(base + QStringList{"--samples", draws, "--tv", "0.1"});
        QCOMPARE(run.exit_code, 2);
        QVERIFY(run.err.contains("--tv 0.1 is read only with --plan"));
        run = cli(base + QStringList{"--samples", draws, "--plan", "--tv", "0.1"});
        QCOMPARE(run.exit_code, 2);
        QVERIFY(run.err.contains("--plan verifies no draws"));
        // Down to that level the chi-square tail is right: for 2 degrees of
        // freedom Q = exp(-x / 2), for 1 it is erfc(sqrt(x / 2)).
        const double x2 = chi_square_critical(1e-300, 2.0);
        QVERIFY2(std::fabs(x2 / (-2.0 * std::log(1e-300)) - 1.0) < 1e-8, qPrintable(QString::number(x2, 'g', 17)));
        const double x1 = chi_square_critical(1e-300, 1.0);
        QVERIFY(std::fabs(chi_square_upper(x1, 1.0) / std::erfc(std::sqrt(x1 / 2.0)) - 1.0) < 1e-8);
        QVERIFY(std::fabs(chi_square_upper(x1, 1.0) / 1e-300 - 1.0) < 1e-6);
        QVERIFY_THROWS_EXCEPTION(InputError, per_test_level(1e-299, 100));
        QCOMPARE(per_test_level(1e-290, 100), 1e-290 / 200.0);
    }

    // The draws count in --max-memory before they are stored (a text file of
    // 6,000,000 one-digit ids is 12 MB, and about 108 MB once read and
    // verified, with 48 MiB for the process and one trace beside them), and
    // the reader keeps 8 bytes a draw in vectors of exactly their size.
    void memoryBudgetCoversTheDraws() {
        QCOMPARE(samples_memory_estimate(10, 2, 100), std::uint64_t{10 * 16 + 2 * 64 + 100});
        QTemporaryDir dir;
        std::string text;
        text.reserve(12'000'000);
        for (int i = 0; i < 6'000'000; ++i) text += i % 3 == 0 ? "1\n" : "2\n";
        const QString big = dir.filePath("big.txt");
        write_text(big, text);
        const QStringList base{"verify", "--values", "1,2,3", "--samples", big};
        Run run = cli(base + QStringList{"--max-memory", "128M"});
        QCOMPARE(run.exit_code, 2);
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY2(run.err.contains("reading the draws in") && run.err.contains("(6000000 ids, with the logits)") &&
                     run.err.contains("more than the memory budget of 128 MiB (--max-memory)"),
                 run.err.constData());
        // Within the budget it is verified (a fail: these draws are not the row's q).
        QCOMPARE(cli(base + QStringList{"--max-memory", "512M"}).exit_code, 1);
        // The text itself counts before it is read.
        try {
            load_samples_file(big.toStdString(), 1 << 20);
            QFAIL("read past the budget");
        } catch (const InputError& error) {
            QCOMPARE(QString::fromStdString(error.field()), QStringLiteral("max-memory"));
            QVERIFY2(QString(error.what()).contains("12000000 bytes of text"), error.what());
        }
        // .npy: the header's shape is counted before the data is read.
        const QString npy = dir.filePath("big.npy");
        write_npy_ints(npy, std::vector<std::int64_t>(6'000'000, 1), "(6000000,)", 4);
        run = cli({"verify", "--values", "1,2,3", "--samples", npy, "--max-memory", "128M"});
        QCOMPARE(run.exit_code, 2);
        QVERIFY2(run.err.contains("(6000000 ids, with the logits)"), run.err.constData());
        // Lean: one vector per row, each exactly its draws.
        const SampleRows rows = parse_samples_text("1,2,3\n4\n5 6\n", "rows.txt");
        QCOMPARE(rows.rows.size(), std::size_t{3});
        for (const auto& row : rows.rows) QCOMPARE(row.capacity(), row.size());
        const SampleRows single = parse_samples_text("1\n2\n3\n", "one.txt");
        QCOMPARE(single.rows[0].capacity(), std::size_t{3});
        QVERIFY_THROWS_EXCEPTION(InputError, parse_samples_text("1\n2\n3\n", "one.txt", 64));
    }

    // With XTC each draw throws its own coin, so the draws follow the mixture
    // (1 - p) q_without + p q_with, and the verdict must not depend on
    // --seed (it followed the one coin the seed threw). q = (.4, .3, .2, .1),
    // p 0.5, threshold 0.15: the coin removes ids 0 and 1.
    void xtcVerdictIgnoresTheSeed() {
        const std::vector<double> logits{std::log(0.4), std::log(0.3), std::log(0.2), std::log(0.1)};
        const Values mixture{0.5 * 0.4, 0.5 * 0.3, 0.5 * 0.2 + 0.5 * (2.0 / 3.0), 0.5 * 0.1 + 0.5 * (1.0 / 3.0)};
        const auto samples = draw(mixture, 20000, 77);
        std::string text;
        for (const auto id : samples) text += std::to_string(id) + "\n";
        QTemporaryDir dir;
        const QString file = dir.filePath("xtc.txt");
        write_text(file, text);
        QString values;
        for (const double l : logits) values += (values.isEmpty() ? "" : ",") + QString::number(l, 'g', 17);
        QByteArray first;
        int fired = 0;
        for (const char* seed : {"1", "2", "3", "4", "5", "6"}) {
            const QStringList args{"verify", "--pipeline", "llamacpp", "--values", values, "--xtc-probability", "0.5",
                                   "--xtc-threshold", "0.15", "--samples", file, "--seed", seed};
            const Run run = cli(args);
            QVERIFY2(run.exit_code == 0, run.err.constData());
            const auto json = nlohmann::json::parse(run.out.toStdString());
            QCOMPARE(json["rows"][0]["kept_count"].get<int>(), 4);
            if (first.isEmpty()) first = run.out;
            QCOMPARE(run.out, first);
            // The seeds tried include coins that fire and coins that do not.
            const QStringList trace{"trace", "--pipeline", "llamacpp", "--values", values, "--xtc-probability", "0.5",
                                    "--xtc-threshold", "0.15", "--seed", seed};
            fired += nlohmann::json::parse(cli(trace).out.toStdString())["xtc"]["fired"].get<bool>() ? 1 : 0;
        }
        QVERIFY2(fired > 0 && fired < 6, qPrintable(QString::number(fired)));
        // Draws from one outcome alone fail: the mixture is what is tested.
        const Run one_coin = cli({"verify", "--pipeline", "llamacpp", "--values", values, "--xtc-probability", "0.5",
                                  "--xtc-threshold", "0.15", "--samples", [&] {
                                      std::string t;
                                      for (const auto id : draw({0.4, 0.3, 0.2, 0.1}, 20000, 78)) t += std::to_string(id) + "\n";
                                      const QString path = dir.filePath("no_coin.txt");
                                      write_text(path, t);
                                      return path;
                                  }()});
        QCOMPARE(one_coin.exit_code, 1);
    }

    // Each row of verify (and of its plan) says which parameters the pipeline
    // never read, as a trace does: a draw from a sampler that did use them
    // would otherwise seem to fail for no reason.
    void verifyListsIgnoredParams() {
        QTemporaryDir dir;
        const QString draws = dir.filePath("draws.txt");
        write_text(draws, "1\n3\n1\n3\n");
        const QStringList base{"verify", "--values", "1,3,2,3,-1", "--top-k", "3", "--typical-p", "0.5",
                               "--xtc-threshold", "0.2"};
        Run run = cli(base + QStringList{"--samples", draws});
        QVERIFY2(run.exit_code == 0 || run.exit_code == 1, run.err.constData());
        auto json = nlohmann::json::parse(run.out.toStdString());
        QCOMPARE(json["rows"][0]["ignored_params"], nlohmann::json::array({"typical_p", "xtc_threshold"}));
        run = cli(base + QStringList{"--plan", "--tv", "0.1"});
        QCOMPARE(run.exit_code, 0);
        json = nlohmann::json::parse(run.out.toStdString());
        QCOMPARE(json["rows"][0]["ignored_params"], nlohmann::json::array({"typical_p", "xtc_threshold"}));
        // The llamacpp pipeline reads both.
        run = cli(base + QStringList{"--plan", "--tv", "0.1", "--pipeline", "llamacpp"});
        QCOMPARE(nlohmann::json::parse(run.out.toStdString())["rows"][0]["ignored_params"], nlohmann::json::array());
    }
};

QTEST_GUILESS_MAIN(VerificationTest)
#include "test_verification.moc"
