// Every row of the contract's bad-input table (section 3), through the engine's
// API and through `samplescope-cli trace`: refused with one clear line that
// names the field and the value, never a crash, never a NaN.
#include <QtTest>

#include "tests/support/cli_run.h"

#include <cmath>
#include <limits>

#include "engine/base/input_error.h"
#include "engine/pipelines/request.h"
#include "engine/pipelines/sampler.h"

using namespace samplescope;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using testing::CliResult;

CliResult run_cli(const QStringList& args) { return testing::run_trace_cli(args); }

// The API throws InputError whose message contains every fragment.
template <typename Fn>
void expect_refused(Fn&& fn, const QStringList& fragments) {
    try {
        fn();
    } catch (const InputError& error) {
        const QString message = QString::fromStdString(error.what());
        QVERIFY2(!message.contains('\n'), qPrintable(message));
        for (const auto& fragment : fragments) QVERIFY2(message.contains(fragment), qPrintable(message + " lacks " + fragment));
        return;
    }
    QFAIL(qPrintable("not refused: expected " + fragments.join(", ")));
}

void expect_cli_refused(const QStringList& args, const QStringList& fragments) {
    const CliResult result = run_cli(args);
    QVERIFY2(result.exit_code == 2, qPrintable(args.join(' ') + " -> exit " + QString::number(result.exit_code)));
    QVERIFY2(result.err_lines.size() == 1, qPrintable(result.err_lines.join(" | ")));
    QVERIFY(result.out.isEmpty());
    for (const auto& fragment : fragments) {
        QVERIFY2(result.err_lines.front().contains(fragment), qPrintable(result.err_lines.front() + " lacks " + fragment));
    }
}

SamplingParams seeded() {
    SamplingParams p;
    p.seed = 0;
    return p;
}

}  // namespace

class BadInputTest : public QObject {
    Q_OBJECT
private slots:
    void nanOrPositiveInfinityLogit() {
        expect_refused([] { trace_once(std::vector<double>{1.0, 2.0, kNaN, kNaN}, seeded()); }, {"id 2", "nan"});
        expect_refused([] { trace_once(std::vector<double>{kInf, 2.0}, seeded()); }, {"id 0", "inf"});
        expect_cli_refused({"--values", "1,2,nan"}, {"id 2", "nan"});
        expect_cli_refused({"--values", "1,inf"}, {"id 1", "inf"});
    }

    void negativeInfinityIsAllowed() {
        const auto trace = trace_once(std::vector<double>{-kInf, 1.0}, seeded());
        QCOMPARE(trace.token, 1);
        const CliResult result = run_cli({"--values", "-inf,1", "--seed", "3"});
        QCOMPARE(result.exit_code, 0);
        QVERIFY(result.out.contains("\"token\": 1"));
    }

    void nothingToSample() {
        expect_refused([] { trace_once(std::vector<double>{}, seeded()); }, {"V = 0"});
        expect_refused([] { trace_once(std::vector<double>{-kInf, -kInf}, seeded()); }, {"every logit is -inf"});
        expect_cli_refused({"--values", "-inf,-inf"}, {"every logit is -inf"});
        expect_cli_refused({"--values", ","}, {"V = 0"});
    }

    void temperature() {
        for (const double t : {-1.0, kNaN, kInf}) {
            SamplingParams p = seeded();
            p.temperature = t;
            expect_refused([&] { trace_once(std::vector<double>{1.0, 2.0}, p); }, {"temperature", QString::fromStdString(format_number(t))});
        }
        expect_cli_refused({"--values", "1,2", "--temperature", "-0.5"}, {"temperature", "-0.5"});
        expect_cli_refused({"--values", "1,2", "--temperature", "nan"}, {"temperature", "nan"});
        expect_cli_refused({"--values", "1,2", "--temperature", "inf"}, {"temperature", "inf"});
        expect_cli_refused({"--values", "1,2", "--temperature", "warm"}, {"temperature", "warm"});
    }

    void temperatureSoSmallThatLogitsOverflow() {
        SamplingParams p = seeded();
        p.temperature = 1e-308;
        expect_refused([&] { trace_once(std::vector<double>{1000.0, 2.0}, p); }, {"temperature", "too small", "at least"});
        expect_cli_refused({"--values", "1000,2", "--temperature", "1e-308"}, {"temperature", "too small"});
        // A tiny temperature that does not overflow is handled exactly.
        p.temperature = 1e-300;
        const auto trace = trace_once(std::vector<double>{1.0, 2.0}, p);
        QCOMPARE(trace.token, 1);
        QVERIFY(std::isfinite(trace.logprob));
    }

    void topK() {
        SamplingParams p = seeded();
        p.top_k = -1;
        expect_refused([&] { validate(p); }, {"top_k", "-1"});
        expect_cli_refused({"--values", "1,2", "--top-k", "-3"}, {"top_k", "-3"});
        expect_cli_refused({"--values", "1,2", "--top-k", "2.5"}, {"top_k", "2.5"});
    }

    void topPAndMinPOutsideUnitInterval() {
        for (const double v : {-0.1, 1.5, kNaN}) {
            SamplingParams p = seeded();
            p.top_p = v;
            expect_refused([&] { validate(p); }, {"top_p", QString::fromStdString(format_number(v))});
            p = seeded();
            p.min_p = v;
            expect_refused([&] { validate(p); }, {"min_p", QString::fromStdString(format_number(v))});
        }
        expect_cli_refused({"--values", "1,2", "--top-p", "1.5"}, {"top_p", "1.5"});
        expect_cli_refused({"--values", "1,2", "--min-p", "-0.2"}, {"min_p", "-0.2"});
    }

    void repetitionPenalty() {
        for (const double r : {0.0, -1.0, kInf, kNaN}) {
            SamplingParams p = seeded();
            p.repetition_penalty = r;
            expect_refused([&] { validate(p); }, {"repetition_penalty", QString::fromStdString(format_number(r))});
        }
        expect_cli_refused({"--values", "1,2", "--repetition-penalty", "0"}, {"repetition_penalty", "0"});
    }

    void presenceAndFrequencyNotFinite() {
        SamplingParams p = seeded();
        p.presence_penalty = kNaN;
        expect_refused([&] { validate(p); }, {"presence_penalty", "nan"});
        p = seeded();
        p.frequency_penalty = -kInf;
        expect_refused([&] { validate(p); }, {"frequency_penalty", "-inf"});
        expect_cli_refused({"--values", "1,2", "--frequency-penalty", "inf"}, {"frequency_penalty", "inf"});
        expect_cli_refused({"--values", "1,2", "--presence-penalty", "nan"}, {"presence_penalty", "nan"});
    }

    void penaltiesThatOverflowALogit() {
        SamplingParams p = seeded();
        p.frequency_penalty = -1e308;
        const std::vector<std::int64_t> output{0, 0};
        expect_refused([&] { trace_once(std::vector<double>{1.0, 2.0}, p, {}, output); }, {"penalty", "id 0", "inf"});
    }

    void historyIdsOutsideVocabulary() {
        const std::vector<std::int64_t> bad{0, 7};
        expect_refused([&] { trace_once(std::vector<double>{1.0, 2.0}, seeded(), bad); }, {"prompt_ids", "7"});
        expect_refused([&] { trace_once(std::vector<double>{1.0, 2.0}, seeded(), {}, std::vector<std::int64_t>{-1}); },
                       {"output_ids", "-1"});
        expect_cli_refused({"--values", "1,2", "--prompt-ids", "0,2"}, {"prompt_ids", "2"});
        expect_cli_refused({"--values", "1,2", "--output-ids", "x"}, {"output_ids", "x"});
    }

    void badSeed() {
        expect_cli_refused({"--values", "1,2", "--seed", "18446744073709551616"}, {"seed", "18446744073709551616"});
        expect_cli_refused({"--values", "1,2", "--seed", "-1"}, {"seed", "-1"});
        const CliResult max_seed = run_cli({"--values", "1,2", "--seed", "18446744073709551615"});
        QCOMPARE(max_seed.exit_code, 0);
        QVERIFY(max_seed.out.contains("\"seed\": \"18446744073709551615\""));
    }

    void malformedFiles() {
        QTemporaryDir dir;
        const auto write = [&](const QString& name, const QByteArray& bytes) -> QString {
            QFile file(dir.filePath(name));
            if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size()) return QString();
            return dir.filePath(name);
        };
        expect_cli_refused({"--logits", dir.filePath("missing.txt")}, {"missing.txt", "cannot open"});
        expect_cli_refused({"--logits", write("empty.txt", "")}, {"empty.txt", "empty"});
        expect_cli_refused({"--logits", write("words.csv", "1,2,abc\n")}, {"words.csv", "abc"});
        expect_cli_refused({"--logits", write("bad.json", "[1, 2,")}, {"bad.json", "JSON"});
        expect_cli_refused({"--logits", write("magic.npy", "NOTNUMPY.........")}, {"magic.npy", "magic"});
        expect_cli_refused({"--logits", write("ragged.json", "[[1,2],[3]]")}, {"ragged.json", "ragged"});
        // A header that promises more values than the file holds.
        QByteArray header = "{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }";
        while ((10 + header.size() + 1) % 64 != 0) header.append(' ');
        header.append('\n');
        QByteArray npy("\x93NUMPY\x01\x00", 8);
        npy.append(static_cast<char>(header.size() & 0xff));
        npy.append(static_cast<char>(header.size() >> 8));
        npy.append(header);
        npy.append(QByteArray(8, '\0'));  // two floats, not ten
        expect_cli_refused({"--logits", write("short.npy", npy)}, {"short.npy", "truncated"});
    }

    void failedStepLeavesTheRequestAsItWas() {
        SamplingParams p = seeded();
        Request request(p);
        request.step(std::vector<double>{1.0, 2.0});
        const auto output = request.output_ids();
        const auto draws = request.draws_consumed();
        expect_refused([&] { request.step(std::vector<double>{1.0, kNaN}); }, {"id 1"});
        QCOMPARE(request.output_ids(), output);
        QCOMPARE(request.draws_consumed(), draws);
        const auto next = request.step(std::vector<double>{1.0, 2.0});
        Pcg32 expected = stream(0, kSampleLabel);
        expected.uniform_f64();
        QCOMPARE(*next.u, expected.uniform_f64());
    }
};

QTEST_GUILESS_MAIN(BadInputTest)
#include "test_bad_input.moc"
