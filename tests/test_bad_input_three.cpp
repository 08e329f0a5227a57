// Bad input, round three: integer parameters read and echoed exactly from
// every input (flags, params files, the API), and the presets' float32 run
// saying what float32 does with a value valid in f64 instead of refusing the
// whole step. Each refusal names the field and quotes the value as given.
#include <QtTest>

#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"
#include "engine/core/sampling_params.h"
#include "engine/json/params_json.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"

using namespace samplescope;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

struct CliRun {
    int exit_code = -1;
    std::string out;
    QStringList err_lines;
};

CliRun cli(const QStringList& args) {
    QProcess process;
    process.start(QStringLiteral(SAMPLESCOPE_CLI), args);
    process.waitForFinished(60000);
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAllStandardOutput().toStdString(),
            QString::fromUtf8(process.readAllStandardError()).split('\n', Qt::SkipEmptyParts)};
}

template <typename Fn>
std::pair<QString, QString> refusal(Fn&& fn) {
    try {
        fn();
    } catch (const InputError& error) {
        return {QString::fromStdString(error.field()), QString::fromStdString(error.what())};
    }
    return {};
}

}  // namespace

class BadInputThreeTest : public QObject {
    Q_OBJECT
private slots:
    // number_text.h: the integer a decimal text denotes, from its digits.
    void exactIntegerText() {
        const auto value = [](const char* text) -> QString {
            bool too_large = false;
            const auto parsed = parse_exact_integer(text, &too_large);
            if (!parsed) return too_large ? QStringLiteral("too large") : QStringLiteral("none");
            return (parsed->negative ? QStringLiteral("-") : QString()) + QString::number(parsed->magnitude);
        };
        QCOMPARE(value("12"), QStringLiteral("12"));
        QCOMPARE(value("-3"), QStringLiteral("-3"));
        QCOMPARE(value("+7"), QStringLiteral("7"));
        QCOMPARE(value("1e18"), QStringLiteral("1000000000000000000"));
        QCOMPARE(value("2.0"), QStringLiteral("2"));
        QCOMPARE(value("1.5e1"), QStringLiteral("15"));
        QCOMPARE(value("100e-2"), QStringLiteral("1"));
        QCOMPARE(value(".5e1"), QStringLiteral("5"));
        QCOMPARE(value("-0"), QStringLiteral("0"));
        QCOMPARE(value("0e999999999999"), QStringLiteral("0"));
        QCOMPARE(value("9223372036854775807"), QStringLiteral("9223372036854775807"));
        QCOMPARE(value("18446744073709551615"), QStringLiteral("18446744073709551615"));
        QCOMPARE(value("18446744073709551616"), QStringLiteral("too large"));
        QCOMPARE(value("1e20"), QStringLiteral("too large"));
        QCOMPARE(value("1e999999999999"), QStringLiteral("too large"));
        for (const char* none : {"1.5", "1e-3", "1.25e1", "inf", "nan", "", "x", "0x10", "1e", "--1"}) {
            QVERIFY2(value(none) == QStringLiteral("none"), none);
        }
    }

    // An integer parameter from text: exact past 2^53, refused with the text as typed.
    void integerParametersFromText() {
        SamplingParams params;
        set_param_text(params, Param::DryAllowedLength, "9223372036854775807");
        QCOMPARE(integer_param(params, Param::DryAllowedLength), kMax);
        set_param_text(params, Param::TopK, "1e18");
        QCOMPARE(integer_param(params, Param::TopK), std::int64_t{1000000000000000000});
        set_param_text(params, Param::DryPenaltyLastN, "-1");
        QCOMPARE(integer_param(params, Param::DryPenaltyLastN), std::int64_t{-1});
        QCOMPARE(refusal([&] { set_param_text(params, Param::TopK, "9223372036854775808"); }),
                 std::make_pair(QStringLiteral("top_k"),
                                QStringLiteral("top_k must be an integer >= 0, got 9223372036854775808 (beyond the "
                                               "64-bit range)")));
        QCOMPARE(refusal([&] { set_param_text(params, Param::MinKeep, "1e30"); }).second,
                 QStringLiteral("min_keep must be an integer >= 0, got 1e30 (beyond the 64-bit range)"));
        QCOMPARE(refusal([&] { set_param_text(params, Param::DryAllowedLength, "1.5"); }).second,
                 QStringLiteral("dry_allowed_length must be an integer >= 0, got 1.5"));
        QCOMPARE(refusal([&] { set_param_text(params, Param::DryPenaltyLastN, "-9223372036854775808"); }).second,
                 QStringLiteral("dry_penalty_last_n must be an integer >= -1, got -9223372036854775808"));
        QCOMPARE(refusal([&] { set_param_text(params, Param::Mirostat, "x"); }).second,
                 QStringLiteral("mirostat must be a number, got \"x\""));
        // The refusals left the values set before.
        QCOMPARE(integer_param(params, Param::TopK), std::int64_t{1000000000000000000});
        QCOMPARE(params_to_json(params)["dry_allowed_length"].get<std::int64_t>(), kMax);
    }

    // The CLI echoes each integer parameter exactly: 2^63 - 1 and 1e18 were
    // read through a double (2^63 - 1 became 2^63, which wrapped).
    void integerParametersThroughTheCli() {
        const QStringList keys{"--top-k", "--min-keep", "--dry-allowed-length", "--dry-penalty-last-n"};
        QStringList args{"trace", "--pipeline", "llamacpp", "--values", "1,2,3", "--seed", "1"};
        for (const auto& key : keys) args << key << QStringLiteral("9223372036854775807");
        CliRun run = cli(args);
        QCOMPARE(run.exit_code, 0);
        auto json = nlohmann::json::parse(run.out);
        for (const char* key : {"top_k", "min_keep", "dry_allowed_length", "dry_penalty_last_n"}) {
            QVERIFY2(json["params"][key].is_number_integer() && json["params"][key].get<std::int64_t>() == kMax, key);
        }
        run = cli({"trace", "--pipeline", "llamacpp", "--values", "1,2,3", "--seed", "1", "--dry-allowed-length", "1e18"});
        QCOMPARE(run.exit_code, 0);
        QCOMPARE(nlohmann::json::parse(run.out)["params"]["dry_allowed_length"].get<std::int64_t>(),
                 std::int64_t{1000000000000000000});
        run = cli({"trace", "--values", "1,2,3", "--top-k", "92233720368547758070"});
        QCOMPARE(run.exit_code, 2);
        QCOMPARE(run.err_lines, QStringList{QStringLiteral("samplescope-cli: top_k must be an integer >= 0, got "
                                                           "92233720368547758070 (beyond the 64-bit range)")});
        QVERIFY(run.out.empty());
    }

    // A params file (batch, verify) and the Python module's params_list: a
    // JSON integer is read exactly; a JSON real only while a double holds it.
    void integerParametersFromJson() {
        RowRequest row = row_request_from_json(nlohmann::json::parse(R"({"top_k": 9223372036854775807, "min_keep": 5.0})"),
                                               "row 0");
        QCOMPARE(row.params.top_k, kMax);
        QCOMPARE(row.params.min_keep, std::int64_t{5});
        QCOMPARE(params_to_json(row.params)["top_k"].get<std::int64_t>(), kMax);
        const auto refused = [](const char* text) {
            return refusal([&] { row_request_from_json(nlohmann::json::parse(text), "row 0"); });
        };
        QCOMPARE(refused(R"({"top_k": 18446744073709551615})"),
                 std::make_pair(QStringLiteral("top_k"),
                                QStringLiteral("row 0: top_k must be an integer >= 0, got 18446744073709551615 (beyond "
                                               "the 64-bit range)")));
        QCOMPARE(refused(R"({"dry_allowed_length": 1e18})").second,
                 QStringLiteral("row 0: dry_allowed_length must be an integer >= 0, got 1e+18 (write an integer past "
                                "2^53 without a fraction or exponent)"));
        QCOMPARE(refused(R"({"min_keep": 2.5})").second, QStringLiteral("row 0: min_keep must be an integer >= 0, got 2.5"));
        QCOMPARE(refused(R"({"dry_penalty_last_n": -2})").second,
                 QStringLiteral("row 0: dry_penalty_last_n must be an integer >= -1, got -2"));
    }

    // The llamacpp preset's float32 run: a value valid in f64 that float32
    // cannot hold is said as such, and the f64 trace still runs. Before, the
    // rounded inf (or 0) was refused as if the user had typed it, and the
    // whole step failed.
    void float32SaysWhatItDoesWithAValue() {
        const Pipeline llamacpp = preset_pipeline("llamacpp");
        const std::vector<double> row{1.0, 2.0, 3.0};
        const std::vector<std::int64_t> repeats{0, 1, 0, 1};
        const std::vector<std::int64_t> once{0};
        SamplingParams params;
        params.seed = 1;
        params.dry_multiplier = 1.0;
        params.dry_base = 1e308;
        const PipelineTrace dry = trace_pipeline_once(llamacpp, PipelineInput{row, params, {}, repeats});
        QVERIFY(dry.engine_f32 && !dry.engine_f32->error.empty());
        QCOMPARE(QString::fromStdString(dry.engine_f32->error),
                 QStringLiteral("dry_base = 1e+308 becomes inf in float32 (beyond its largest value, 3.4028235e+38), "
                                "which it refuses: dry_base must be >= 1 and finite, got inf"));
        QVERIFY(QString::fromStdString(dry.engine_f32->note).startsWith(QStringLiteral("in float32 the engine would fail here: ")));
        SamplingParams tiny;
        tiny.seed = 1;
        tiny.repetition_penalty = 1e-46;
        const PipelineTrace penalty = trace_pipeline_once(llamacpp, PipelineInput{row, tiny, {}, once});
        QCOMPARE(QString::fromStdString(penalty.engine_f32->error),
                 QStringLiteral("repetition_penalty = 1e-46 becomes 0 in float32 (below its smallest positive value, "
                                "1.4e-45), which it refuses: repetition_penalty must be > 0 and finite, got 0"));
        // The CLI: exit 0, the f64 trace, and the float32 run's words.
        const CliRun run = cli({"trace", "--pipeline", "llamacpp", "--values", "1,2,3", "--seed", "1", "--dry-base", "1e308",
                                "--dry-multiplier", "1", "--output-ids", "0,1,0,1"});
        QCOMPARE(run.exit_code, 0);
        const auto json = nlohmann::json::parse(run.out);
        QVERIFY(json["engine_f32"]["error"].get<std::string>().starts_with("dry_base = 1e+308 becomes inf in float32"));
        // A value float32 holds (if rounded) is left to the run itself.
        params.dry_base = 3e38;
        QVERIFY(trace_pipeline_once(llamacpp, PipelineInput{row, params, {}, repeats})
                    .engine_f32.value_or(EngineF32{})
                    .error.empty());
    }
};

QTEST_GUILESS_MAIN(BadInputThreeTest)
#include "test_bad_input_three.moc"
