// llama.cpp's extra samplers (docs/samplers.md), each a stage unit: the exact
// numbers of llama.cpp's own tests/test-sampling.cpp where it has a case (cited
// per test), hand-computed boundaries for every off value, their place in the
// llamacpp preset, and bad input through the API and `samplescope-cli trace`
// (exit 2, one line naming the field and the value).
#include <QtTest>

#include "tests/support/cli_run.h"
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <cmath>
#include <limits>

#include "engine/base/input_error.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"
#include "tests/support/sampler_runs.h"

using namespace samplescope;
using namespace samplescope::testing;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const StageTrace& stage_of(const PipelineTrace& t, Stage stage) { return t.trace.stage(stage); }

template <typename Fn>
void expect_refused(Fn&& fn, const QString& field, const QStringList& fragments) {
    try {
        fn();
    } catch (const InputError& error) {
        const QString message = QString::fromStdString(error.what());
        QCOMPARE(QString::fromStdString(error.field()), field);
        QVERIFY2(!message.contains('\n'), qPrintable(message));
        for (const auto& f : fragments) QVERIFY2(message.contains(f), qPrintable(message + " lacks " + f));
        return;
    }
    QFAIL(qPrintable("not refused: expected " + fragments.join(", ")));
}

using testing::CliResult;

CliResult run_cli(const QStringList& args) { return testing::run_trace_cli(args); }

void expect_cli_refused(const QStringList& args, const QStringList& fragments) {
    const CliResult result = run_cli(args);
    QVERIFY2(result.exit_code == 2, qPrintable(args.join(' ') + " -> exit " + QString::number(result.exit_code)));
    QVERIFY2(result.err_lines.size() == 1, qPrintable(result.err_lines.join(" | ")));
    QVERIFY(result.out.isEmpty());
    for (const auto& f : fragments) {
        QVERIFY2(result.err_lines.front().contains(f), qPrintable(result.err_lines.front() + " lacks " + f));
    }
}

QJsonObject cli_json(const QStringList& args) {
    const CliResult result = run_cli(args);
    if (result.exit_code != 0) qWarning() << result.err_lines;
    return QJsonDocument::fromJson(result.out.toUtf8()).object();
}

std::vector<std::string> step_names(const Pipeline& pipeline) {
    std::vector<std::string> names;
    for (const auto& s : pipeline.steps) names.emplace_back(stage_info(s.stage).name);
    return names;
}

}  // namespace

class TestSamplers : public QObject {
    Q_OBJECT

private slots:
    // ---- logit bias ----------------------------------------------------------

    void logitBiasOffWhenEmpty() {
        const auto logits = logits_of({0.1, 0.2, 0.3, 0.4});
        const PipelineTrace t = run("logit_bias", logits, SamplingParams{});
        QVERIFY(!stage_of(t, Stage::LogitBias).active);
        expect_q(t, {0.1, 0.2, 0.3, 0.4}, 1e-12);
    }

    // l[id] += bias; -inf bans. Hand computed: q ∝ (0.1 e^2, 0.2, 0.3, 0).
    void logitBiasAddsAndBans() {
        SamplingParams params;
        params.logit_bias = parse_logit_bias("0:2, 3:-inf");
        const PipelineTrace t = run("logit_bias", logits_of({0.1, 0.2, 0.3, 0.4}), params);
        QVERIFY(stage_of(t, Stage::LogitBias).active);
        const double z = 0.1 * std::exp(2.0) + 0.2 + 0.3;
        expect_q(t, {0.1 * std::exp(2.0) / z, 0.2 / z, 0.3 / z, 0.0}, 1e-12);
        QCOMPARE(stage_of(t, Stage::LogitBias).kept_count(), std::size_t{3});
        // A repeated id adds up: 1:1,1:2 is 1:3.
        SamplingParams twice;
        twice.logit_bias = parse_logit_bias("1:1,1:2");
        SamplingParams once;
        once.logit_bias = parse_logit_bias("1:3");
        QCOMPARE(final_q(run("logit_bias", {0.0, 0.5}, twice)), final_q(run("logit_bias", {0.0, 0.5}, once)));
        QCOMPARE(format_logit_bias(params.logit_bias), std::string("0:2,3:-inf"));
    }

    // llama.cpp adds the bias before the penalties (common_sampler_init):
    // l0 = -0.5 + 1 = 0.5, then 0.5 / 2 = 0.25 (penalty first would give -0.5 x 2 + 1 = 0).
    void logitBiasComesBeforeThePenaltiesInLlamaCpp() {
        const Pipeline llamacpp = preset_pipeline("llamacpp");
        QCOMPARE(llamacpp.steps.front().stage, Stage::LogitBias);
        SamplingParams params;
        params.logit_bias = parse_logit_bias("0:1");
        params.repetition_penalty = 2.0;
        const PipelineTrace t = run(llamacpp, {-0.5, 0.0}, params, {0});
        QCOMPARE((*stage_of(t, Stage::RepetitionPenalty).logits)[0], 0.25);
        QVERIFY(t.trace.ignored_params.empty());
        // The contract has no logit bias: it is reported as ignored there.
        const PipelineTrace spec = run(preset_pipeline("spec"), {-0.5, 0.0}, params, {0});
        QCOMPARE(spec.trace.ignored_params, (std::vector<std::string>{"logit_bias"}));
        QVERIFY(!spec.trace.find_stage(Stage::LogitBias));
        // With a parameter of the table ignored too: the table's first, then
        // the lists, in the order `params` prints them.
        params.typical_p = 0.5;
        params.dry_sequence_breakers = parse_dry_sequence_breakers("1");
        QCOMPARE(run(preset_pipeline("spec"), {-0.5, 0.0}, params, {0}).trace.ignored_params,
                 (std::vector<std::string>{"typical_p", "logit_bias", "dry_sequence_breakers"}));
    }

    void logitBiasRefusals() {
        for (const auto& [text, fragment] : std::vector<std::pair<QString, QString>>{
                 {"1", "item \"1\" must be id:bias"},
                 {"x:1", "id must be an integer >= 0, got \"x\""},
                 {"-1:1", "id must be an integer >= 0, got \"-1\""},
                 {"1:inf", "bias must be a finite number or -inf, got \"inf\""},
                 {"1:nan", "bias must be a finite number or -inf, got \"nan\""},
                 {"1:", "bias must be a finite number or -inf, got \"\""},
                 {"1:1e999", "got \"1e999\""},
                 {"0:1,,1:1", "empty item at position 1"}}) {
            expect_refused([&] { parse_logit_bias(text.toStdString()); }, "logit_bias", {"logit_bias", fragment});
            expect_cli_refused({"--values", "1,2,3", "--pipeline", "llamacpp", "--seed", "1", "--logit-bias", text},
                               {"logit_bias", fragment});
        }
        SamplingParams params;
        params.logit_bias = parse_logit_bias("3:1");
        expect_refused([&] { run("logit_bias", {1.0, 2.0, 3.0}, params); }, "logit_bias",
                       {"logit_bias id 3 is outside [0, 3)"});
        expect_cli_refused({"--values", "1,2,3", "--pipeline", "llamacpp", "--seed", "1", "--logit-bias", "3:1"},
                           {"logit_bias id 3 is outside [0, 3)"});
        // Every id banned leaves nothing to draw.
        params.logit_bias = parse_logit_bias("0:-inf,1:-inf");
        expect_refused([&] { run("logit_bias", {1.0, 2.0}, params); }, "logit_bias", {"logit_bias"});
        QVERIFY(parse_logit_bias("  ").empty());
    }

    void logitBiasInTheCliJson() {
        const QJsonObject json =
            cli_json({"--values", "0,0,0", "--pipeline", "llamacpp", "--seed", "1", "--logit-bias", "2:-inf"});
        QCOMPARE(json["params"].toObject()["logit_bias"].toString(), QStringLiteral("2:-inf"));
        QCOMPARE(json["kept"].toArray().size(), 2);
        const QJsonObject custom = cli_json(
            {"--values", "0,0,0", "--pipeline", "custom", "--stages", "top_k,logit_bias", "--seed", "1",
             "--logit-bias", "2:-inf"});
        QCOMPARE(custom["kept"].toArray().size(), 2);
    }

    // ---- typical-p --------------------------------------------------------------

    // ggml-org/llama.cpp tests/test-sampling.cpp: test_typical({0.97, 0.01,
    // 0.01, 0.01}, {0.97}, 0.5) and test_typical({0.4, 0.2, 0.2, 0.2}, {0.2,
    // 0.2, 0.2}, 0.5). Those expected values are q before renormalising (the
    // test runs no softmax after typical): the kept sets are {0} and {1, 2, 3}.
    void typicalPLlamaCppTestValues() {
        SamplingParams params;
        params.typical_p = 0.5;
        const PipelineTrace a = run("typical_p", logits_of({0.97, 0.01, 0.01, 0.01}), params);
        QCOMPARE(a.trace.final_kept(), (IdList{0}));
        const PipelineTrace b = run("typical_p", logits_of({0.4, 0.2, 0.2, 0.2}), params);
        QCOMPARE(b.trace.final_kept(), (IdList{1, 2, 3}));
        expect_q(b, {0.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0}, 1e-12);
        // H = -(0.4 ln 0.4 + 3 x 0.2 ln 0.2), shown on the stage.
        const double h = -(0.4 * std::log(0.4) + 0.6 * std::log(0.2));
        QVERIFY(std::fabs(*stage_of(b, Stage::TypicalP).entropy - h) < 1e-12);
        QCOMPARE(*stage_of(b, Stage::TypicalP).crossing_rank, std::size_t{3});
    }

    // q = (0.5, 0.3, 0.2): H = 1.0297; scores 0.337, 0.174, 0.580, so the walk
    // is id 1 (0.3), id 0 (0.8), id 2 (1.0); the cut is the first mass > p.
    void typicalPBoundaries() {
        const auto logits = logits_of({0.5, 0.3, 0.2});
        SamplingParams params;
        for (const auto& [p, kept] : std::vector<std::pair<double, IdList>>{
                 {0.0, {1}}, {0.29, {1}}, {0.31, {0, 1}}, {0.79, {0, 1}}, {0.81, {0, 1, 2}}, {0.999, {0, 1, 2}}}) {
            params.typical_p = p;
            const PipelineTrace t = run("typical_p", logits, params);
            QVERIFY(stage_of(t, Stage::TypicalP).active);
            QCOMPARE(t.trace.final_kept(), kept);
        }
        params.typical_p = 1.0;  // off
        const PipelineTrace off = run("typical_p", logits, params);
        QVERIFY(!stage_of(off, Stage::TypicalP).active);
        QVERIFY(!stage_of(off, Stage::TypicalP).entropy);
        expect_q(off, {0.5, 0.3, 0.2}, 1e-12);
        // Equal q = 1/2: H = ln 2 and both scores are exactly 0, a tie across
        // the cut (flagged); the walk takes rank order, so id 0 stays.
        params.typical_p = 0.3;
        const PipelineTrace flat = run("typical_p", {0.0, 0.0}, params);
        QCOMPARE(flat.trace.final_kept(), (IdList{0}));
        QVERIFY(flat.any_tie());
    }

    void typicalPInTheLlamaCppChain() {
        SamplingParams params;
        params.typical_p = 0.5;
        const PipelineTrace t = run(preset_pipeline("llamacpp"), logits_of({0.4, 0.2, 0.2, 0.2}), params);
        QVERIFY(stage_of(t, Stage::TypicalP).active);
        QVERIFY(t.trace.ignored_params.empty());
        const PipelineTrace spec = run(preset_pipeline("spec"), logits_of({0.4, 0.2, 0.2, 0.2}), params);
        QCOMPARE(spec.trace.ignored_params, (std::vector<std::string>{"typical_p"}));
    }

    void typicalPRefusals() {
        expect_cli_refused({"--values", "1,2,3", "--pipeline", "llamacpp", "--seed", "1", "--typical-p", "1.5"},
                           {"typical_p must be in [0, 1], got 1.5"});
        expect_cli_refused({"--values", "1,2,3", "--pipeline", "llamacpp", "--seed", "1", "--typical-p", "-0.1"},
                           {"typical_p must be in [0, 1], got -0.1"});
        expect_cli_refused({"--values", "1,2,3", "--pipeline", "llamacpp", "--seed", "1", "--typical-p", "x"},
                           {"typical_p must be a number, got \"x\""});
        SamplingParams params;
        expect_refused([&] { set_param(params, Param::TypicalP, std::nan("")); }, "typical_p", {"typical_p"});
        const QJsonObject json =
            cli_json({"--values", "1,2,2,2", "--pipeline", "llamacpp", "--seed", "1", "--typical-p", "0.5"});
        QCOMPARE(json["params"].toObject()["typical_p"].toDouble(), 0.5);
    }

    // ---- top-n-sigma ------------------------------------------------------------

    // ggml-org/llama.cpp tests/test-sampling.cpp: test_top_n_sigma({0.1, 0.2,
    // 0.3, 0.4}, {0, 0, 0.428571, 0.571429}, 1), and n = 0 (a no-op since
    // llama.cpp PR 13345) and n = 3 keeping all four.
    void topNSigmaLlamaCppTestValues() {
        const auto logits = logits_of({0.1, 0.2, 0.3, 0.4});
        SamplingParams params;
        params.top_n_sigma = 1.0;
        expect_q(run("top_n_sigma", logits, params), {0.0, 0.0, 0.428571, 0.571429}, 1e-5);
        params.top_n_sigma = 0.0;
        const PipelineTrace zero = run("top_n_sigma", logits, params);
        QVERIFY(!stage_of(zero, Stage::TopNSigma).active);
        expect_q(zero, {0.1, 0.2, 0.3, 0.4}, 1e-12);
        params.top_n_sigma = 3.0;
        expect_q(run("top_n_sigma", logits, params), {0.1, 0.2, 0.3, 0.4}, 1e-12);
    }

    // Logits (0, 1, 2, 3): mean 1.5, sigma sqrt(1.25); floor = 3 - n sqrt(1.25).
    // -inf logits take no part (the kept set holds only finite ones).
    void topNSigmaBoundaries() {
        SamplingParams params;
        params.top_n_sigma = 1.0;
        const PipelineTrace t = run("top_n_sigma", {0.0, 1.0, 2.0, 3.0, -kInf}, params);
        const StageTrace& s = stage_of(t, Stage::TopNSigma);
        QCOMPARE(*s.logit_mean, 1.5);
        QCOMPARE(*s.logit_sigma, std::sqrt(1.25));
        QCOMPARE(*s.max_logit, 3.0);
        QCOMPARE(*s.logit_floor, 3.0 - std::sqrt(1.25));
        QCOMPARE(t.trace.final_kept(), (IdList{2, 3}));
        // (0, 4, 2 x 6): mean 2, sigma 1, so n = 2 puts the floor exactly at
        // l = 2, which stays (only l < floor is dropped).
        params.top_n_sigma = 2.0;
        const PipelineTrace at = run("top_n_sigma", {0.0, 4.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0}, params);
        QCOMPARE(*stage_of(at, Stage::TopNSigma).logit_sigma, 1.0);
        QCOMPARE(*stage_of(at, Stage::TopNSigma).logit_floor, 2.0);
        QCOMPARE(at.trace.final_kept(), (IdList{1, 2, 3, 4, 5, 6, 7}));
        // Off at n <= 0 (default -1); one candidate passes.
        params.top_n_sigma = -1.0;
        QVERIFY(!stage_of(run("top_n_sigma", {0.0, 3.0}, params), Stage::TopNSigma).active);
        params.top_n_sigma = 0.5;
        const PipelineTrace one = run("top_n_sigma", {-kInf, 3.0}, params);
        QCOMPARE(one.trace.final_kept(), (IdList{1}));
        // Equal logits: sigma 0, every id stays.
        QCOMPARE(run("top_n_sigma", {1.0, 1.0, 1.0}, params).trace.final_kept(), (IdList{0, 1, 2}));
    }

    void topNSigmaInTheChainAndRefusals() {
        SamplingParams params;
        params.top_n_sigma = 1.0;
        const PipelineTrace t = run(preset_pipeline("llamacpp"), logits_of({0.1, 0.2, 0.3, 0.4}), params);
        QVERIFY(stage_of(t, Stage::TopNSigma).active);
        QVERIFY(t.trace.ignored_params.empty());
        QCOMPARE(run(preset_pipeline("spec"), {1.0, 2.0}, params).trace.ignored_params,
                 (std::vector<std::string>{"top_n_sigma"}));
        expect_cli_refused({"--values", "1,2,3", "--pipeline", "llamacpp", "--seed", "1", "--top-n-sigma", "inf"},
                           {"top_n_sigma must be finite, got inf"});
        expect_cli_refused({"--values", "1,2,3", "--pipeline", "llamacpp", "--seed", "1", "--top-n-sigma", "nan"},
                           {"top_n_sigma must be finite, got nan"});
        const QJsonObject json =
            cli_json({"--values", "0,1,2,3", "--pipeline", "llamacpp", "--seed", "1", "--top-n-sigma", "1"});
        QCOMPARE(json["params"].toObject()["top_n_sigma"].toDouble(), 1.0);
    }

    // ---- the llamacpp preset's chain -------------------------------------------

    // common/sampling.cpp common_sampler_init with common/common.h's default
    // sampler list: logit bias first, then the default samplers in order.
    void llamaCppChainOrder() {
        QCOMPARE(step_names(preset_pipeline("llamacpp")),
                 (std::vector<std::string>{"logit_bias", "repetition_penalty", "presence_frequency", "dry",
                                           "top_n_sigma", "top_k", "typical_p", "top_p", "min_p", "xtc",
                                           "temperature", "mirostat"}));
    }
};

QTEST_GUILESS_MAIN(TestSamplers)
#include "test_samplers.moc"
