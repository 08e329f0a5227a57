// samplescope-cli trace --pipeline, diff and histogram: the spec path prints
// what it always printed, the JSON is the engine's own, bad input exits 2 with
// one line.
#include <QtTest>

#include <algorithm>
#include <cmath>

#include <QProcess>

#include <nlohmann/json.hpp>

#include "engine/stats/empirical_sampling.h"
#include "engine/pipelines/pipeline_diff.h"
#include "engine/json/pipeline_json.h"
#include "engine/pipelines/pipeline_presets.h"

using namespace samplescope;

namespace {

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

nlohmann::json parse(const QByteArray& text) { return nlohmann::json::parse(text.toStdString()); }

const QStringList kExampleB{"--values", "-0.916290731874155,-1.2039728043259361,-1.6094379124341003,-2.3025850929940455",
                            "--top-k", "2", "--top-p", "0.5", "--seed", "3"};

}  // namespace

class PipelineCliTest : public QObject {
    Q_OBJECT
private slots:
    void specPathIsUnchanged() {
        const QStringList args{"trace", "--values", "1,3,2,3,-1", "--top-k", "3", "--top-p", "0.8", "--seed", "0"};
        const Run plain = cli(args);
        const Run spec = cli(args + QStringList{"--pipeline", "spec"});
        QCOMPARE(plain.exit_code, 0);
        QCOMPARE(spec.out, plain.out);
        const auto json = parse(plain.out);
        QCOMPARE(json["token"].get<int>(), 3);  // the contract's worked example
        QVERIFY(!json.contains("pipeline"));
    }

    void tracePrintsThePipelinesOwnOrder() {
        const Run run = cli(QStringList{"trace", "--pipeline", "llamacpp"} + kExampleB);
        QCOMPARE(run.exit_code, 0);
        const auto json = parse(run.out);
        QCOMPARE(json["pipeline"].get<std::string>(), std::string("llamacpp"));
        std::vector<std::string> names;
        for (const auto& stage : json["stages"]) names.push_back(stage["name"].get<std::string>());
        // The preset's steps (TestSamplers::llamaCppChainOrder lists llama.cpp's chain) between widen and the draw.
        std::vector<std::string> expected{"widen"};
        for (const auto& step : preset_pipeline("llamacpp").steps) expected.emplace_back(stage_info(step.stage).name);
        expected.insert(expected.end(), {"softmax", "draw"});
        QCOMPARE(names, expected);
        const auto top_p = std::find(names.begin(), names.end(), "top_p") - names.begin();
        QCOMPARE(json["stages"][static_cast<std::size_t>(top_p)]["rule"].get<std::string>(), std::string("inclusive_cumsum"));
        QCOMPARE(json["kept"], nlohmann::json::array({0}));

        const Run custom = cli(QStringList{"trace", "--pipeline", "custom", "--stages",
                                           "penalties,top_k,top_p,min_p,temperature"} + kExampleB);
        QCOMPARE(custom.exit_code, 0);
        QCOMPARE(parse(custom.out)["stages"][5]["name"].get<std::string>(), std::string("top_p"));
        QCOMPARE(parse(custom.out)["stages"][7]["name"].get<std::string>(), std::string("temperature"));

        const Run steps = cli(QStringList{"trace", "--pipeline", "sglang", "--steps", "3"} + kExampleB);
        QCOMPARE(parse(steps.out).size(), std::size_t{3});
        QCOMPARE(parse(steps.out)[2]["draws_consumed"].get<int>(), 3);
    }

    void diffIsTheEnginesDiff() {
        const Run run = cli(QStringList{"diff", "--pipeline-a", "vllm", "--pipeline-b", "sglang"} + kExampleB);
        QCOMPARE(run.exit_code, 0);
        const auto json = parse(run.out);
        QCOMPARE(json["only_b"], nlohmann::json::array({1}));
        QCOMPARE(json["a"]["kept"], nlohmann::json::array({0}));
        // Worked by hand rather than by the engine: the row is log(0.4, 0.3, 0.2, 0.1)
        // with top-k 2 and top-p 0.5. vllm cuts top-p on the renormalised pair
        // (4/7 > 0.5 keeps id 0 alone); sglang keeps both, at 4/7 and 3/7, so the
        // total variation is 3/7.
        QCOMPARE(json["b"]["kept"], nlohmann::json::array({0, 1}));
        QCOMPARE(json["a"]["probs"].size(), std::size_t{1});
        QVERIFY(std::fabs(json["a"]["probs"][0].get<double>() - 1.0) < 1e-12);
        QVERIFY(std::fabs(json["b"]["probs"][0].get<double>() - 4.0 / 7.0) < 1e-12);
        QVERIFY(std::fabs(json["b"]["probs"][1].get<double>() - 3.0 / 7.0) < 1e-12);
        QVERIFY(std::fabs(json["total_variation"].get<double>() - 3.0 / 7.0) < 1e-12);
    }

    void histogramIsTheEnginesSample() {
        const Run run = cli(QStringList{"histogram", "--pipeline", "sglang", "--draws", "20000"} + kExampleB);
        QCOMPARE(run.exit_code, 0);
        const auto json = parse(run.out);
        std::uint64_t total = 0;
        for (const auto& row : json["counts"]) total += row["count"].get<std::uint64_t>();
        QCOMPARE(total, std::uint64_t{20000});
        QVERIFY(json["chi_square"]["p_value"].get<double>() > 1e-3);

        const Run against = cli(QStringList{"histogram", "--pipeline", "sglang", "--draws", "20000",
                                            "--expected-from", "vllm"} + kExampleB);
        QCOMPARE(against.exit_code, 0);
        const auto wrong = parse(against.out);
        QVERIFY(wrong["chi_square"]["impossible_draws"].get<std::uint64_t>() > 0);
        QCOMPARE(wrong["chi_square"]["p_value"].get<double>(), 0.0);
        QVERIFY(wrong["chi_square"]["statistic"].is_null());
    }

    void engineDefaultsAreOfferedNotApplied() {
        const QStringList base{"trace", "--pipeline", "llamacpp", "--values", "1,2,3", "--seed", "1"};
        QVERIFY(!parse(cli(base).out)["params"].contains("top_k"));  // at its default: not printed
        const auto with_defaults = parse(cli(base + QStringList{"--engine-defaults"}).out)["params"];
        QCOMPARE(with_defaults["top_k"].get<int>(), 40);
        QCOMPARE(with_defaults["temperature"].get<double>(), 0.8);
        const auto flag_wins = parse(cli(base + QStringList{"--engine-defaults", "--top-k", "2"}).out)["params"];
        QCOMPARE(flag_wins["top_k"].get<int>(), 2);
        QCOMPARE(flag_wins["min_p"].get<double>(), 0.05);
    }

    void badInputExitsTwoWithOneLine() {
        const QList<QStringList> bad{
            {"trace", "--pipeline", "nope", "--values", "1,2"},
            {"trace", "--pipeline", "custom", "--values", "1,2"},
            {"trace", "--pipeline", "custom", "--stages", "top_q", "--values", "1,2"},
            {"trace", "--pipeline", "vllm", "--stages", "top_k", "--values", "1,2"},
            {"trace", "--pipeline", "custom", "--stages", "top_k", "--engine-defaults", "--values", "1,2"},
            {"trace", "--pipeline", "llamacpp", "--penalty-last-n", "-5", "--values", "1,2"},
            {"diff", "--pipeline-a", "vllm", "--pipeline-b", "x", "--values", "1,2"},
            {"diff", "--pipeline-a", "vllm", "--values", "1,nan"},
            {"histogram", "--draws", "0", "--values", "1,2"},
            {"histogram", "--draws", "1000001", "--values", "1,2"},
            {"histogram", "--pipeline", "hf", "--values", "1,2", "--top-p", "2"},
        };
        for (const auto& args : bad) {
            const Run run = cli(args);
            QVERIFY2(run.exit_code == 2, qPrintable(args.join(' ')));
            QCOMPARE(run.err.count('\n'), 1);
            QVERIFY(run.out.isEmpty());
        }
    }
};

QTEST_GUILESS_MAIN(PipelineCliTest)
#include "test_pipeline_cli.moc"
