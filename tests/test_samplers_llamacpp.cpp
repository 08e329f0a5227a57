// llama.cpp's DRY, XTC, mirostat, dynamic temperature and min_keep
// (docs/samplers.md), each a stage unit or a rule's knob: llama.cpp's own
// numbers from tests/test-sampling.cpp (cited per test), hand-computed
// boundaries for every off value, the mirostat chain of the llamacpp preset,
// mirostat's state across a request, and every new parameter's refusal
// through the API and `samplescope-cli trace` (exit 2, one line naming the
// field and the value).
//
// llama.cpp's tester builds each logit as log(prob), so logits_of() below
// does the same; where its test runs no softmax after the sampler (XTC,
// typical-p) the expected numbers are q before renormalising, and the kept
// set and the ratios between kept ids are what is compared.
#include <QtTest>

#include "tests/support/cli_run.h"
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/base/input_error.h"
#include "engine/core/generator.h"
#include "engine/json/params_json.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"
#include "tests/support/sampler_runs.h"
#include "engine/pipelines/request.h"
#include "engine/stats/empirical_sampling.h"

using namespace samplescope;
using namespace samplescope::testing;

namespace {

// llama.cpp's expected values as left by a sampler without a softmax after
// it: the ids with a nonzero value are the kept set, and the final q is
// those values renormalised.
void expect_unnormalised(const PipelineTrace& t, const std::vector<double>& expected, double tolerance) {
    double sum = 0.0;
    for (const double v : expected) sum += v;
    std::vector<double> normalised;
    IdList kept;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        normalised.push_back(expected[i] / sum);
        if (expected[i] > 0.0) kept.push_back(static_cast<std::int32_t>(i));
    }
    QCOMPARE(t.trace.final_kept(), kept);
    expect_q(t, normalised, tolerance);
}

const StageTrace& stage_of(const PipelineTrace& t, Stage stage) { return t.trace.stage(stage); }

const StepReport& report_of(const PipelineTrace& t, Stage stage) {
    for (std::size_t i = 0; i < t.trace.stages.size(); ++i) {
        if (t.trace.stages[i].stage == stage) return t.reports[i];
    }
    throw std::out_of_range("no such stage in the trace");
}

bool ignores(const PipelineTrace& t, const std::string& key) {
    const auto& ignored = t.trace.ignored_params;
    return std::find(ignored.begin(), ignored.end(), key) != ignored.end();
}

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

void expect_cli_refused(const QStringList& args, const QString& line) {
    const testing::CliResult result = testing::run_trace_cli(args);
    QVERIFY2(result.exit_code == 2, qPrintable(args.join(' ') + " -> exit " + QString::number(result.exit_code)));
    QVERIFY2(result.err_lines.size() == 1, qPrintable(result.err_lines.join(" | ")));
    QVERIFY(result.out.isEmpty());
    QVERIFY2(result.err_lines.front().contains(line), qPrintable(result.err_lines.front() + " lacks " + line));
}

// DRY as it was first written here: the direct comparison, quadratic in the
// window. Kept as the oracle of the linear unit (dryLinearMatchesTheOracle).
struct DryOracle {
    IdList ids;
    std::vector<std::int64_t> lengths;
    Values penalties;
    std::size_t repeat_limit = 0;
};

std::optional<DryOracle> dry_oracle(const std::vector<std::int64_t>& prompt, const std::vector<std::int64_t>& output,
                                    const SamplingParams& p) {
    const std::size_t total = prompt.size() + output.size();
    const std::size_t n = p.dry_penalty_last_n < 0 ? total
                                                   : std::min(total, static_cast<std::size_t>(p.dry_penalty_last_n));
    std::vector<std::int64_t> tokens;
    for (std::size_t i = total - n; i < total; ++i) tokens.push_back(i < prompt.size() ? prompt[i] : output[i - prompt.size()]);
    const auto allowed = static_cast<std::size_t>(p.dry_allowed_length);
    if (n <= allowed) return std::nullopt;
    const auto at = [&tokens, n](std::size_t i) { return tokens[n - 1 - i]; };
    std::size_t limit = n;
    for (std::size_t i = 0; i < n; ++i) {
        std::optional<std::size_t> longest;
        for (const auto& breaker : p.dry_sequence_breakers) {
            if (breaker.front() != at(i)) continue;
            const std::size_t tail = breaker.size() - 1;
            if (tail > i || (longest && tail <= *longest)) continue;
            bool match = true;
            for (std::size_t k = 0; k < tail && match; ++k) match = breaker[k + 1] == at(i - k - 1);
            if (match) longest = tail;
        }
        if (longest) {
            limit = i - *longest;
            break;
        }
    }
    if (limit < allowed) return std::nullopt;
    std::map<std::int64_t, std::size_t> longest_for;
    for (std::size_t k = 1; k < n; ++k) {
        std::size_t length = 0;
        while (length + k < n && at(length) == at(length + k)) ++length;
        length = std::min(length, limit);
        if (length < allowed) continue;
        auto [it, inserted] = longest_for.emplace(at(k - 1), length);
        if (!inserted) it->second = std::max(it->second, length);
    }
    int max_exponent = 0;
    if (p.dry_base > 1.000001) max_exponent = static_cast<int>(88.7228391 / std::log(p.dry_base));
    DryOracle out;
    out.repeat_limit = limit;
    for (const auto& [token, length] : longest_for) {
        const std::int64_t id = token;
        const bool own_breaker = std::any_of(p.dry_sequence_breakers.begin(), p.dry_sequence_breakers.end(),
                                             [id](const auto& b) { return b.size() == 1 && b.front() == id; });
        if (own_breaker) continue;
        auto exponent = static_cast<int>(length - allowed);
        if (max_exponent > 0 && exponent > max_exponent) exponent = max_exponent;
        out.ids.push_back(static_cast<std::int32_t>(id));
        out.lengths.push_back(static_cast<std::int64_t>(length));
        out.penalties.push_back(p.dry_multiplier * std::pow(p.dry_base, exponent));
    }
    return out;
}

}  // namespace

class TestSamplersLlamaCpp : public QObject {
    Q_OBJECT

private slots:
    // ---- llama.cpp's own test values -----------------------------------------

    // ggml-org/llama.cpp tests/test-sampling.cpp (commit 07e4038f07a8) test_xtc:
    // q = (0.4, 0.3, 0.2, 0.1), probability 0.99, min_keep 0; thresholds 0.09,
    // 0.19 and 0.29 leave {0.1}, {0.2, 0.1}, {0.3, 0.2, 0.1}; 0.39 leaves all
    // four (only one id qualifies). Its test applies no softmax after XTC.
    // The coin is handed in (0.5 < 0.99), so it fires.
    void xtcLlamaCppTestValues() {
        const auto logits = logits_of({0.4, 0.3, 0.2, 0.1});
        SamplingParams params;
        params.xtc_probability = 0.99;
        params.min_keep = 0;
        for (const auto& [threshold, expected] : std::vector<std::pair<double, std::vector<double>>>{
                 {0.09, {0.0, 0.0, 0.0, 0.1}},
                 {0.19, {0.0, 0.0, 0.2, 0.1}},
                 {0.29, {0.0, 0.3, 0.2, 0.1}},
                 {0.39, {0.4, 0.3, 0.2, 0.1}}}) {
            params.xtc_threshold = threshold;
            const PipelineTrace t = run("xtc", logits, params, {}, {}, 0.5);
            QVERIFY(stage_of(t, Stage::Xtc).active);
            QCOMPARE(*stage_of(t, Stage::Xtc).xtc_coin, 0.5);
            expect_unnormalised(t, expected, 1e-12);
            QCOMPARE(*stage_of(t, Stage::Xtc).xtc_fired, threshold < 0.3);
        }
    }

    // ggml-org/llama.cpp tests/test-sampling.cpp (commit 07e4038f07a8)
    // test_dry, its five cases (a softmax follows DRY there, so these are
    // final q): no repeat in {0, 1}; {0, 1, 2, 0, 1} penalises id 2 by 1 (or
    // 2 with multiplier 2); the breaker 3 keeps {0, 1, 3, 4, 0, 1} whole; and
    // allowed length 4 lets the repeat {0, 1} of {0, 1, 2, 3, 4, 0, 1} pass.
    void dryLlamaCppTestValues() {
        struct Case {
            std::vector<double> probs;
            std::vector<std::int64_t> history;
            std::vector<double> expected;
            double multiplier;
            std::int64_t allowed;
            std::int64_t last_n;
            std::vector<std::vector<std::int64_t>> breakers;
        };
        const std::vector<Case> cases{
            {{0.25, 0.25, 0.25, 0.25}, {0, 1}, {0.25, 0.25, 0.25, 0.25}, 1.0, 2, 4, {}},
            {{0.25, 0.25, 0.25, 0.25}, {0, 1, 2, 0, 1}, {0.296923, 0.296923, 0.109232, 0.296923}, 1.0, 2, 5, {}},
            {{0.2, 0.2, 0.2, 0.2, 0.2}, {0, 1, 3, 4, 0, 1}, {0.2, 0.2, 0.2, 0.2, 0.2}, 1.0, 2, 6, {{3}}},
            {{0.2, 0.2, 0.2, 0.2, 0.2}, {0, 1, 2, 0, 1}, {0.241818, 0.241818, 0.032727, 0.241818, 0.241818}, 2.0, 2, 5,
             {}},
            {{0.2, 0.2, 0.2, 0.2, 0.2}, {0, 1, 2, 3, 4, 0, 1}, {0.2, 0.2, 0.2, 0.2, 0.2}, 1.0, 4, 7, {}},
        };
        for (const auto& c : cases) {
            SamplingParams params;
            params.dry_multiplier = c.multiplier;
            params.dry_base = 1.1;
            params.dry_allowed_length = c.allowed;
            params.dry_penalty_last_n = c.last_n;
            params.dry_sequence_breakers = c.breakers;
            const PipelineTrace t = run("dry", logits_of(c.probs), params, c.history);
            QVERIFY(stage_of(t, Stage::Dry).active);
            expect_q(t, c.expected, 1e-5);
        }
    }

    // ggml-org/llama.cpp tests/test-sampling.cpp (commit 07e4038f07a8)
    // test_temp_ext: T = 1 with range 0 leaves (0.1, 0.2, 0.3, 0.4); T = 0
    // with range 0 keeps only the maximum.
    void tempExtLlamaCppTestValues() {
        const auto logits = logits_of({0.1, 0.2, 0.3, 0.4});
        SamplingParams params;
        params.dynatemp_range = 0.0;
        params.dynatemp_exponent = 1.0;
        expect_q(run("temperature:llamacpp", logits, params), {0.1, 0.2, 0.3, 0.4}, 1e-12);
        params.temperature = 0.0;
        const PipelineTrace zero = run("temperature:llamacpp", logits, params);
        expect_q(zero, {0.0, 0.0, 0.0, 1.0}, 1e-12);
        QVERIFY(!stage_of(zero, Stage::Temperature).temperature_used);
    }

    // ggml-org/llama.cpp tests/test-sampling.cpp (commit 07e4038f07a8)
    // test_top_p and test_min_p, both built with min_keep 0 (a softmax
    // follows them there). min_p 1.05 of the last case is refused here (min_p
    // must be in [0, 1]), so that case is left out.
    void topPMinPLlamaCppTestValues() {
        const auto logits = logits_of({0.1, 0.2, 0.3, 0.4});
        SamplingParams params;
        params.min_keep = 0;
        for (const auto& [p, expected] : std::vector<std::pair<double, std::vector<double>>>{
                 {0.0, {0.0, 0.0, 0.0, 1.0}},
                 {0.7, {0.0, 0.0, 0.428571, 0.571429}},
                 {0.8, {0.0, 0.22222, 0.33333, 0.44444}},
                 {1.0, {0.1, 0.2, 0.3, 0.4}}}) {
            params.top_p = p;
            expect_q(run("top_p:inclusive_cumsum", logits, params), expected, 1e-5);
        }
        params.top_p = 1.0;
        for (const auto& [p, expected] : std::vector<std::pair<double, std::vector<double>>>{
                 {0.00, {0.1, 0.2, 0.3, 0.4}},
                 {0.24, {0.1, 0.2, 0.3, 0.4}},
                 {0.26, {0.0, 0.2 / 0.9, 0.3 / 0.9, 0.4 / 0.9}},
                 {0.49, {0.0, 0.2 / 0.9, 0.3 / 0.9, 0.4 / 0.9}},
                 {0.51, {0.0, 0.0, 0.3 / 0.7, 0.4 / 0.7}},
                 {0.74, {0.0, 0.0, 0.3 / 0.7, 0.4 / 0.7}},
                 {0.76, {0.0, 0.0, 0.0, 1.0}},
                 {1.00, {0.0, 0.0, 0.0, 1.0}}}) {
            params.min_p = p;
            expect_q(run("min_p:log", logits, params), expected, 1e-5);
        }
        params.min_p = 1.05;
        expect_refused([&] { validate(params); }, "min_p", {"min_p must be in [0, 1], got 1.05"});
    }

    // ggml-org/llama.cpp tests/test-sampling.cpp (commit 07e4038f07a8)
    // test_typical, built with min_keep 0 (no softmax after it there):
    // {0.97} and {0.2, 0.2, 0.2}.
    void typicalPLlamaCppTestValuesMinKeepZero() {
        SamplingParams params;
        params.typical_p = 0.5;
        params.min_keep = 0;
        expect_unnormalised(run("typical_p", logits_of({0.97, 0.01, 0.01, 0.01}), params), {0.97, 0.0, 0.0, 0.0},
                            1e-12);
        expect_unnormalised(run("typical_p", logits_of({0.4, 0.2, 0.2, 0.2}), params), {0.0, 0.2, 0.2, 0.2}, 1e-12);
    }

    // ggml-org/llama.cpp tests/test-sampling.cpp (commit 07e4038f07a8)
    // test_sampler_queue, whose top-p and min-p use min_keep 1: V = 10000,
    // logit log(id) (id 0 is -inf), so q_id = id / sum. Each queue of top-k
    // (k), top-p (p) and min-p (m) leaves a top range [lo, V): computed here in
    // integers, top-k as lo = max(lo, V - k), top-p as the shortest top run
    // whose sum reaches p x the range's sum, min-p as id >= min_p x (V - 1).
    void samplerQueueLlamaCppTestValues() {
        constexpr std::int64_t v = 10000;
        std::vector<double> logits;
        for (std::int64_t id = 0; id < v; ++id) logits.push_back(std::log(static_cast<double>(id)));
        struct Case {
            std::string queue;
            std::int64_t top_k;
            double top_p;
            double min_p;
        };
        const double near_top = 9997.9 / 9999.0;
        const std::vector<Case> cases{
            {"k", 10000, 1.0, 1.0},      {"k", 1, 1.0, 1.0},        {"p", 10000, 1.0, 1.0},
            {"p", 10000, 0.0, 1.0},      {"m", 10000, 1.0, 1.0},    {"m", 10000, 1.0, 1e-12},
            {"k", 100, 1.0, 1.0},        {"p", 10000, 0.0003, 1.0}, {"p", 10000, 0.8, 1.0},
            {"m", 10000, 1.0, near_top}, {"m", 10000, 1.0, 0.1},    {"kp", 100, 0.8, 0.1},
            {"km", 100, 0.8, 0.1},       {"pk", 100, 0.8, 0.1},     {"pm", 100, 0.8, 0.1},
            {"mk", 100, 0.8, 0.1},       {"mp", 100, 0.8, near_top}, {"mp", 100, 0.8, 0.1},
            {"kpm", 100, 0.8, 0.1},      {"kmp", 100, 0.8, 0.1},    {"pkm", 100, 0.8, 0.1},
            {"pmk", 100, 0.8, 0.1},      {"mkp", 100, 0.8, 0.1},    {"mpk", 100, 0.8, 0.1},
        };
        for (const auto& c : cases) {
            SamplingParams params;
            params.top_k = c.top_k;
            params.top_p = c.top_p;
            params.min_p = c.min_p;
            params.min_keep = 1;
            std::string stages;
            std::int64_t lo = 1;  // id 0 has no finite logit
            for (const char step : c.queue) {
                if (!stages.empty()) stages += ",";
                if (step == 'k') {
                    stages += "top_k:exact";
                    lo = std::max(lo, v - c.top_k);
                } else if (step == 'p') {
                    stages += "top_p:inclusive_cumsum";
                    if (c.top_p < 1.0) {
                        const std::int64_t total = (v - 1 + lo) * (v - lo) / 2;
                        std::int64_t run_sum = 0;
                        for (std::int64_t id = v - 1; id >= lo; --id) {
                            run_sum += id;
                            if (static_cast<double>(run_sum) >= c.top_p * static_cast<double>(total)) {
                                lo = id;
                                break;
                            }
                        }
                    }
                } else {
                    stages += "min_p:log";
                    lo = std::max(lo, static_cast<std::int64_t>(std::ceil(c.min_p * static_cast<double>(v - 1))));
                }
            }
            const PipelineTrace t = run(stages, logits, params);
            const IdList& kept = t.trace.final_kept();
            QVERIFY2(!kept.empty() && kept.front() == lo && kept.back() == v - 1 &&
                         static_cast<std::int64_t>(kept.size()) == v - lo,
                     qPrintable(QString::fromStdString(c.queue) + QStringLiteral(": kept %1 from %2, expected from %3")
                                                                     .arg(kept.size())
                                                                     .arg(kept.empty() ? -1 : kept.front())
                                                                     .arg(lo)));
        }
    }

    // ---- thresholds at equality ----------------------------------------------
    //
    // Each comparison whose direction decides a case, at the value where it
    // decides, with the answer llama.cpp's code gives (ggml-org/llama.cpp
    // src/llama-sampling.cpp, function named per case). Equal logits make
    // every q exact (1/2, 1/4), so the running masses hit p exactly.
    // Top-n-sigma's floor (llama_sampler_top_n_sigma_apply drops `logit <
    // max - n std`, so the floor stays) is held at equality by
    // TestSamplers::topNSigmaBoundaries. Mirostat 1's cut, max(int(k), 1)
    // clamped to the candidates, has no comparison whose direction changes
    // the kept set (k = 1 or k = n exactly keep the same ids either way).

    // llama_sampler_typical_apply stops at `cum_sum > p` (strictly), once
    // `i >= min_keep - 1`. Two ids at q = 1/2 with p = 1/2: the mass after
    // the first is 1/2, not above p, so both stay. Four at 1/4 with p = 1/2:
    // three stay. With p = 0.1 and min_keep 3 the walk passes p at once but
    // stops only at the third id.
    void typicalPStopsOnlyAboveP() {
        SamplingParams params;
        params.typical_p = 0.5;
        QCOMPARE(run("typical_p", {0.0, 0.0}, params).trace.final_kept(), (IdList{0, 1}));
        QCOMPARE(run("typical_p", {0.0, 0.0, 0.0, 0.0}, params).trace.final_kept(), (IdList{0, 1, 2}));
        params.typical_p = 0.1;
        params.min_keep = 3;
        QCOMPARE(run("typical_p", {0.0, 0.0, 0.0, 0.0}, params).trace.final_kept(), (IdList{0, 1, 2}));
        // Through the CLI, the llamacpp preset keeps both ids.
        const testing::CliResult cli =
            testing::run_trace_cli({"--pipeline", "llamacpp", "--values", "0,0", "--typical-p", "0.5", "--seed", "1"});
        QCOMPARE(cli.exit_code, 0);
        QCOMPARE(QJsonDocument::fromJson(cli.out.toUtf8()).object()["kept"].toArray().size(), 2);
    }

    // llama_sampler_top_p_apply stops at `cum_sum >= p && i + 1 >= min_keep`:
    // inclusive. Four ids at 1/4 with p = 1/2 keep two; p = 0.1 with
    // min_keep 3 keeps three.
    void topPInclusiveCumsumAtP() {
        SamplingParams params;
        params.top_p = 0.5;
        QCOMPARE(run("top_p:inclusive_cumsum", {0.0, 0.0, 0.0, 0.0}, params).trace.final_kept(), (IdList{0, 1}));
        params.top_p = 0.1;
        params.min_keep = 3;
        QCOMPARE(run("top_p:inclusive_cumsum", {0.0, 0.0, 0.0, 0.0}, params).trace.final_kept(), (IdList{0, 1, 2}));
    }

    // llama_sampler_min_p_apply keeps `logit >= max + log(p)`: with p = 1/2
    // the id at log(1/2) sits exactly on the floor and stays.
    void minPKeepsTheFloor() {
        SamplingParams params;
        params.min_p = 0.5;
        QCOMPARE(run("min_p:log", {0.0, std::log(0.5), std::log(0.25)}, params).trace.final_kept(), (IdList{0, 1}));
    }

    // llama_sample_xtc_apply: an id qualifies at `p >= threshold`, the step
    // is off at `threshold > 0.5`, and excludes only when `size - pos_last >=
    // min_keep`. Four ids at 1/4 with threshold 1/4: all four qualify, the
    // three likeliest go. min_keep 1 allows it (one remains), min_keep 2 does
    // not. The coin fires at u < probability here (docs/samplers.md: u = p
    // does not fire; llama.cpp fires at u <= p, the one value where the two
    // differ).
    void xtcThresholdMinKeepAndCoinAtEquality() {
        const std::vector<double> flat{0.0, 0.0, 0.0, 0.0};
        SamplingParams params;
        params.xtc_probability = 0.5;
        params.xtc_threshold = 0.25;
        params.min_keep = 1;
        const PipelineTrace fired = run("xtc", flat, params, {}, {}, 0.25);
        QVERIFY(*stage_of(fired, Stage::Xtc).xtc_fired);
        QCOMPARE(fired.trace.final_kept(), (IdList{3}));
        params.min_keep = 2;
        const PipelineTrace kept = run("xtc", flat, params, {}, {}, 0.25);
        QVERIFY(!*stage_of(kept, Stage::Xtc).xtc_fired);
        QCOMPARE(kept.trace.final_kept(), (IdList{0, 1, 2, 3}));
        params.min_keep = 1;
        const PipelineTrace coin_at_p = run("xtc", flat, params, {}, {}, 0.5);
        QVERIFY(!*stage_of(coin_at_p, Stage::Xtc).xtc_fired);
        QCOMPARE(coin_at_p.trace.final_kept(), (IdList{0, 1, 2, 3}));
        // Threshold 1/2 is on: two ids at 1/2 both qualify and the first goes.
        params.xtc_threshold = 0.5;
        const PipelineTrace half = run("xtc", {0.0, 0.0}, params, {}, {}, 0.25);
        QVERIFY(stage_of(half, Stage::Xtc).active);
        QCOMPARE(half.trace.final_kept(), (IdList{1}));
    }

    // llama_sampler_temp_ext_apply: T' = lo + (hi - lo) (H / log n)^E, then
    // llama_sampler_temp_impl keeps only the maximum at `temp <= 0`. With
    // T = 0.5 and range 0.5 (lo = 0) a row whose second id has q = 0 has
    // H = 0, so T' = 0 exactly: the maximum alone, not a division by 0.
    void dynamicTemperatureAtZero() {
        SamplingParams params;
        params.temperature = 0.5;
        params.dynatemp_range = 0.5;
        const PipelineTrace t = run("temperature:llamacpp", {0.0, -1000.0}, params);
        QCOMPARE(*stage_of(t, Stage::Temperature).temperature_used, 0.0);
        QCOMPARE(t.trace.final_kept(), (IdList{0}));
        expect_q(t, {1.0, 0.0}, 1e-300);
    }

    // llama_sampler_mirostat_v2_apply cuts at the first id with `-log2(p) >
    // mu`: a surprise equal to mu stays. Four ids at 1/4 have surprise 2
    // exactly; mu = 2 keeps all four, mu just below 2 keeps one (at least one).
    void mirostatV2KeepsSurpriseEqualToMu() {
        SamplingParams params;
        params.mirostat = 2;
        const std::vector<double> flat{0.0, 0.0, 0.0, 0.0};
        QCOMPARE(run("mirostat", flat, params, {}, {}, std::nullopt, 2.0).trace.final_kept(), (IdList{0, 1, 2, 3}));
        QCOMPARE(run("mirostat", flat, params, {}, {}, std::nullopt, std::nextafter(2.0, 0.0)).trace.final_kept().size(),
                 std::size_t{1});
    }

    // ---- XTC: boundaries ---------------------------------------------------------

    void xtcOffValuesAndThreshold() {
        const auto logits = logits_of({0.4, 0.3, 0.2, 0.1});
        SamplingParams params;
        params.xtc_threshold = 0.09;
        // Probability 0 is off, whatever the coin.
        params.xtc_probability = 0.0;
        const PipelineTrace off = run("xtc", logits, params, {}, {}, 0.0);
        QVERIFY(!stage_of(off, Stage::Xtc).active);
        QVERIFY(!off.xtc);
        expect_q(off, {0.4, 0.3, 0.2, 0.1}, 1e-12);
        // Threshold exactly 0.5 is on: with q = (1/2, 1/2) both qualify and
        // the first in rank order (id 0, the lower id among equals) goes; a
        // tie at the cut, flagged. Just above 0.5 is off.
        params.xtc_probability = 1.0;
        params.xtc_threshold = 0.5;
        const PipelineTrace half = run("xtc", {0.0, 0.0}, params, {}, {}, 0.25);
        QVERIFY(stage_of(half, Stage::Xtc).active);
        QCOMPARE(half.trace.final_kept(), (IdList{1}));
        QVERIFY(report_of(half, Stage::Xtc).tie_at_boundary);
        params.xtc_threshold = std::nextafter(0.5, 1.0);
        const PipelineTrace above = run("xtc", {0.0, 0.0}, params, {}, {}, 0.25);
        QVERIFY(!stage_of(above, Stage::Xtc).active);
        QCOMPARE(above.trace.final_kept(), (IdList{0, 1}));
        // Threshold 0: every id qualifies, so all but the least likely go.
        params.xtc_threshold = 0.0;
        QCOMPARE(run("xtc", logits, params, {}, {}, 0.25).trace.final_kept(), (IdList{3}));
        // One candidate: nothing to exclude, off.
        params.xtc_threshold = 0.1;
        QVERIFY(!stage_of(run("xtc", {0.0, -std::numeric_limits<double>::infinity()}, params, {}, {}, 0.25),
                          Stage::Xtc)
                     .active);
    }

    // q = (0.6, 0.3, 0.1), threshold 0.35: only id 0 qualifies, so nothing is
    // excluded and there is no mixture to report. q = (0.4, 0.3, 0.2, 0.1),
    // threshold 0.19: ids 0 and 1 would go, leaving 2; min_keep 3 blocks that,
    // min_keep 2 does not.
    void xtcFewerThanTwoAndMinKeep() {
        SamplingParams params;
        params.xtc_probability = 1.0;
        params.xtc_threshold = 0.35;
        const PipelineTrace one = run("xtc", logits_of({0.6, 0.3, 0.1}), params, {}, {}, 0.0);
        QCOMPARE(one.trace.final_kept(), (IdList{0, 1, 2}));
        QVERIFY(stage_of(one, Stage::Xtc).xtc_removed->empty());
        QVERIFY(!*stage_of(one, Stage::Xtc).xtc_fired);
        QVERIFY(report_of(one, Stage::Xtc).note.find("fewer than two") != std::string::npos);
        QVERIFY(!one.xtc);

        params.xtc_threshold = 0.19;
        params.min_keep = 3;
        const PipelineTrace blocked = run("xtc", logits_of({0.4, 0.3, 0.2, 0.1}), params, {}, {}, 0.0);
        QCOMPARE(blocked.trace.final_kept(), (IdList{0, 1, 2, 3}));
        QVERIFY(!*stage_of(blocked, Stage::Xtc).xtc_fired);
        QVERIFY(report_of(blocked, Stage::Xtc).note.find("min_keep") != std::string::npos);
        params.min_keep = 2;
        const PipelineTrace two = run("xtc", logits_of({0.4, 0.3, 0.2, 0.1}), params, {}, {}, 0.0);
        expect_q(two, {0.0, 0.0, 2.0 / 3.0, 1.0 / 3.0}, 1e-12);
        QCOMPARE(*stage_of(two, Stage::Xtc).xtc_removed, (IdList{0, 1}));
    }

    // The coin fires at u < p (llama.cpp: u <= p, one value of u apart); it
    // is label 6's uniform for the step's draw count when not handed in, and
    // XTC takes no uniform from the draws' stream.
    void xtcCoinAndMixture() {
        const auto logits = logits_of({0.4, 0.3, 0.2, 0.1});
        SamplingParams params;
        params.xtc_probability = 0.3;
        params.xtc_threshold = 0.19;
        QVERIFY(!*stage_of(run("xtc", logits, params, {}, {}, 0.3), Stage::Xtc).xtc_fired);
        QVERIFY(*stage_of(run("xtc", logits, params, {}, {}, std::nextafter(0.3, 0.0)), Stage::Xtc).xtc_fired);

        params.seed = 7;
        const Pipeline pipeline = custom_pipeline("xtc");
        for (const std::uint64_t skip : {0ULL, 3ULL}) {
            const PipelineTrace t = trace_pipeline_once(pipeline, PipelineInput{logits, params, {}, {}}, skip);
            QCOMPARE(*stage_of(t, Stage::Xtc).xtc_coin, xtc_coin(7, skip));
            SamplingParams without = params;
            without.xtc_probability = 0.0;
            const PipelineTrace plain = trace_pipeline_once(pipeline, PipelineInput{logits, without, {}, {}}, skip);
            QCOMPARE(*t.trace.u, *plain.trace.u);
            QCOMPARE(t.trace.draws_consumed, plain.trace.draws_consumed);
        }
        // A coin in [0, 1) of stream(seed, 6), the n-th uniform for n draws before.
        Pcg32 stream6 = stream(7, kXtcLabel);
        stream6.skip_draws(3);
        QCOMPARE(xtc_coin(7, 3), stream6.uniform_f64());

        // The exact final distribution is the mixture (1 - p) q_without + p q_with:
        // q_without = (0.4, 0.3, 0.2, 0.1), q_with = (0, 0, 2/3, 1/3). The coin
        // 0.9 does not fire; the mixture is the same either way.
        for (const double coin : {0.9, 0.1}) {
            const PipelineTrace t = run("xtc", logits, params, {}, {}, coin);
            QVERIFY(t.xtc);
            QCOMPARE(t.xtc->fired, coin < 0.3);
            QCOMPARE(t.xtc->coin, coin);
            QCOMPARE(t.xtc->probability, 0.3);
            QCOMPARE(t.xtc->removed, (IdList{0, 1}));
            QCOMPARE(t.xtc->kept_with, (IdList{2, 3}));
            QCOMPARE(t.xtc->kept_without, (IdList{0, 1, 2, 3}));
            QCOMPARE(t.xtc->ids, (IdList{0, 1, 2, 3}));
            const std::vector<double> mixture{0.7 * 0.4, 0.7 * 0.3, 0.7 * 0.2 + 0.3 * 2.0 / 3.0,
                                              0.7 * 0.1 + 0.3 / 3.0};
            for (std::size_t i = 0; i < 4; ++i) QVERIFY(std::fabs(t.xtc->probs[i] - mixture[i]) < 1e-12);
            QCOMPARE(t.trace.final_kept(), (coin < 0.3 ? IdList{2, 3} : IdList{0, 1, 2, 3}));
        }
    }

    // An empirical histogram throws a coin for every draw (its position in
    // label 6's stream), so whatever the first step's coin did, its counts
    // follow the mixture: ids the coin removes still appear.
    void xtcHistogramDrawsEachTokenWithItsOwnCoin() {
        const auto logits = logits_of({0.4, 0.3, 0.2, 0.1});
        SamplingParams params;
        params.xtc_probability = 0.5;
        params.xtc_threshold = 0.19;
        const Pipeline pipeline = custom_pipeline("xtc");
        bool saw_fired = false;
        bool saw_not = false;
        for (std::uint64_t seed = 1; seed <= 40 && !(saw_fired && saw_not); ++seed) {
            params.seed = seed;
            const EmpiricalResult result = sample_empirically(pipeline, PipelineInput{logits, params, {}, {}}, 2000);
            QVERIFY(result.trace.xtc);
            const bool fired = result.trace.xtc->fired;
            QCOMPARE(fired, xtc_coin(seed, 0) < 0.5);
            QCOMPARE(result.histogram.ids, (IdList{0, 1, 2, 3}));
            QCOMPARE(result.histogram.expected, result.trace.xtc->probs);
            QVERIFY(result.histogram.counts[0] > 0 && result.histogram.counts[1] > 0);
            QVERIFY(result.test.p_value > 1e-4);
            saw_fired = saw_fired || fired;
            saw_not = saw_not || !fired;
        }
        QVERIFY(saw_fired && saw_not);
    }

    // ---- DRY: boundaries -------------------------------------------------------

    void dryOffValuesAndWindow() {
        const std::vector<double> logits(8, 0.0);
        SamplingParams params;
        params.dry_multiplier = 1.0;
        // History 0 1 2 5 6 0 1: the end "0 1" repeats the start, so id 2
        // would extend a repeat of L = 2 = allowed: it loses 1 x 1.75^0 = 1.
        const std::vector<std::int64_t> prompt{0, 1, 2};
        const std::vector<std::int64_t> output{5, 6, 0, 1};
        std::vector<double> penalised(8, 1.0);
        penalised[2] = std::exp(-1.0);
        double z = 0.0;
        for (const double w : penalised) z += w;
        for (auto& w : penalised) w /= z;
        for (const std::int64_t last_n : {std::int64_t{-1}, std::int64_t{7}, std::int64_t{100}}) {
            params.dry_penalty_last_n = last_n;
            const PipelineTrace t = run("dry", logits, params, prompt, output);
            QCOMPARE(*stage_of(t, Stage::Dry).dry_ids, (IdList{2}));
            QCOMPARE(*stage_of(t, Stage::Dry).dry_lengths, (std::vector<std::int64_t>{2}));
            QCOMPARE(*stage_of(t, Stage::Dry).dry_penalties, (Values{1.0}));
            expect_q(t, penalised, 1e-12);
        }
        // The last 4 tokens (5 6 0 1) hold no repeat.
        params.dry_penalty_last_n = 4;
        const PipelineTrace window = run("dry", logits, params, prompt, output);
        QVERIFY(stage_of(window, Stage::Dry).dry_ids->empty());
        expect_q(window, std::vector<double>(8, 0.125), 1e-12);
        // Off: last N 0, or multiplier 0.
        params.dry_penalty_last_n = 0;
        QVERIFY(!stage_of(run("dry", logits, params, prompt, output), Stage::Dry).active);
        params.dry_penalty_last_n = -1;
        params.dry_multiplier = 0.0;
        QVERIFY(!stage_of(run("dry", logits, params, prompt, output), Stage::Dry).active);
        // A window no longer than the allowed length: nothing. "0 0" with
        // allowed 2 is too short; "0 0 0" has the repeat "0 0" (L = 2) before
        // the last 0, so id 0 loses the multiplier; last N 2 cuts it to "0 0".
        params.dry_multiplier = 0.5;
        QVERIFY(stage_of(run("dry", {0.0, 0.0}, params, {0, 0}), Stage::Dry).dry_ids->empty());
        const PipelineTrace three = run("dry", {0.0, 0.0}, params, {0, 0, 0});
        QCOMPARE(*stage_of(three, Stage::Dry).dry_ids, (IdList{0}));
        QCOMPARE(*stage_of(three, Stage::Dry).dry_penalties, (Values{0.5}));
        params.dry_penalty_last_n = 2;
        QVERIFY(stage_of(run("dry", {0.0, 0.0}, params, {0, 0, 0}), Stage::Dry).dry_ids->empty());
        // Allowed length 0: every token after a position extends a "repeat" of
        // length 0 or more, so in 0 1 2 the ids 1 and 2 (all but the oldest)
        // lose the multiplier x base^0.
        params.dry_penalty_last_n = -1;
        params.dry_allowed_length = 0;
        const PipelineTrace none_allowed = run("dry", {0.0, 0.0, 0.0}, params, {0, 1, 2});
        QCOMPARE(*stage_of(none_allowed, Stage::Dry).dry_ids, (IdList{1, 2}));
        QCOMPARE(*stage_of(none_allowed, Stage::Dry).dry_lengths, (std::vector<std::int64_t>{0, 0}));
    }

    // History 0 1 2 3 0 1 2, allowed 1, multiplier 1, base 2: the end "0 1 2"
    // repeats, so id 3 would extend L = 3 and loses 2^(3 - 1) = 4. The
    // breaker 1 (one back from the end, no tail) caps every repeat at 1: id 3
    // loses 2^0 = 1. The breaker "0 1" (its head two back, its tail one)
    // caps at 2 - 1 = 1 too; "0 5" does not match and caps nothing.
    void dryBreakers() {
        const std::vector<double> logits(6, 0.0);
        const std::vector<std::int64_t> history{0, 1, 2, 3, 0, 1, 2};
        SamplingParams params;
        params.dry_multiplier = 1.0;
        params.dry_base = 2.0;
        params.dry_allowed_length = 1;
        const auto penalty_of_3 = [&](const std::vector<std::vector<std::int64_t>>& breakers) {
            params.dry_sequence_breakers = breakers;
            const PipelineTrace t = run("dry", logits, params, history);
            const StageTrace& s = stage_of(t, Stage::Dry);
            if (*s.dry_ids != IdList{3}) return std::make_pair(-1.0, std::size_t{0});
            return std::make_pair(s.dry_penalties->front(), s.dry_repeat_limit.value_or(0));
        };
        QCOMPARE(penalty_of_3({}), std::make_pair(4.0, std::size_t{7}));
        QCOMPARE(penalty_of_3({{1}}), std::make_pair(1.0, std::size_t{1}));
        QCOMPARE(penalty_of_3({{0, 1}}), std::make_pair(1.0, std::size_t{1}));
        QCOMPARE(penalty_of_3({{0, 5}}), std::make_pair(4.0, std::size_t{7}));
        // A limit below the allowed length stops DRY: allowed 2 with the breaker 1.
        params.dry_allowed_length = 2;
        params.dry_sequence_breakers = {{1}};
        QVERIFY(stage_of(run("dry", logits, params, history), Stage::Dry).dry_ids->empty());
    }

    // History 0 1 3 0 1 with the breaker 3: the repeat "0 1" (L = 2, capped
    // at 2 by the 3 two back) would be extended by 3, a single-token breaker,
    // which is never penalised. Without the breaker 3 loses the multiplier;
    // the two-token breaker "3 4" does not match, and its head 3 is not
    // exempt (only single-token breakers are).
    void dryNeverPenalisesASingleTokenBreaker() {
        const std::vector<double> logits(5, 0.0);
        const std::vector<std::int64_t> history{0, 1, 3, 0, 1};
        SamplingParams params;
        params.dry_multiplier = 0.8;
        params.dry_sequence_breakers = {{3}};
        const PipelineTrace exempt = run("dry", logits, params, history);
        QVERIFY(stage_of(exempt, Stage::Dry).dry_ids->empty());
        QCOMPARE(*stage_of(exempt, Stage::Dry).dry_repeat_limit, std::size_t{2});
        expect_q(exempt, std::vector<double>(5, 0.2), 1e-12);
        for (const auto& breakers :
             std::vector<std::vector<std::vector<std::int64_t>>>{{}, {{3, 4}}}) {
            params.dry_sequence_breakers = breakers;
            const PipelineTrace t = run("dry", logits, params, history);
            QCOMPARE(*stage_of(t, Stage::Dry).dry_ids, (IdList{3}));
            QCOMPARE(*stage_of(t, Stage::Dry).dry_penalties, (Values{0.8}));
        }
    }

    // 200 zeros: id 0 would extend a repeat of L = 199, exponent 197. The
    // exponent is clamped at int(88.7228391 / ln base) = 158 for base 1.75
    // (ln 1.75 = 0.5596...), so the penalty is 1.75^158; at base 1 (at most
    // 1.000001) there is no clamp and 1^197 = 1.
    void dryExponentClamp() {
        const std::vector<std::int64_t> zeros(200, 0);
        SamplingParams params;
        params.dry_multiplier = 1.0;
        params.dry_base = 1.75;
        const int max_exponent = static_cast<int>(88.7228391 / std::log(1.75));
        QCOMPARE(max_exponent, 158);
        const PipelineTrace t = run("dry", {0.0, 0.0}, params, zeros);
        QCOMPARE(*stage_of(t, Stage::Dry).dry_lengths, (std::vector<std::int64_t>{199}));
        const double clamped = std::pow(1.75, 158);
        QVERIFY(std::fabs(stage_of(t, Stage::Dry).dry_penalties->front() / clamped - 1.0) < 1e-12);
        expect_q(t, {0.0, 1.0}, 1e-12);
        params.dry_base = 1.0;
        const PipelineTrace flat = run("dry", {0.0, 0.0}, params, zeros);
        QCOMPARE(*stage_of(flat, Stage::Dry).dry_penalties, (Values{1.0}));
        params.dry_base = 1.0000005;
        const PipelineTrace near = run("dry", {0.0, 0.0}, params, zeros);
        QVERIFY(std::fabs(stage_of(near, Stage::Dry).dry_penalties->front() - std::pow(1.0000005, 197)) < 1e-12);
    }

    // The linear unit (KMP over the breakers, the Z-algorithm over the
    // window) against the direct comparison above, on 3,000 random histories
    // over small alphabets (so repeats are long and many), with random
    // breakers (single ids and sequences up to 4 long, drawn from the history
    // so they match), windows and allowed lengths. Every penalised id, repeat
    // length, penalty and limit must agree exactly, and so must "no step".
    void dryLinearMatchesTheOracle() {
        std::mt19937_64 rng(20240611);
        const auto pick = [&rng](std::int64_t lo, std::int64_t hi) {
            return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
        };
        std::size_t penalised_cases = 0;
        std::size_t limited_cases = 0;
        for (int trial = 0; trial < 3000; ++trial) {
            const auto vocab = static_cast<std::size_t>(pick(1, 6));
            std::vector<std::int64_t> history(static_cast<std::size_t>(pick(0, 120)));
            // Mostly a short motif repeated with mutations, so long repeats occur.
            const auto period = static_cast<std::size_t>(pick(1, 7));
            std::vector<std::int64_t> motif(period);
            for (auto& id : motif) id = pick(0, static_cast<std::int64_t>(vocab) - 1);
            for (std::size_t i = 0; i < history.size(); ++i) {
                history[i] = pick(0, 3) == 0 ? pick(0, static_cast<std::int64_t>(vocab) - 1) : motif[i % period];
            }
            const auto split = static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(history.size())));
            const std::vector<std::int64_t> prompt(history.begin(), history.begin() + static_cast<std::ptrdiff_t>(split));
            const std::vector<std::int64_t> output(history.begin() + static_cast<std::ptrdiff_t>(split), history.end());
            SamplingParams params;
            params.dry_multiplier = 0.5 + static_cast<double>(pick(0, 10)) / 4.0;
            params.dry_base = 1.0 + static_cast<double>(pick(0, 8)) / 8.0;
            params.dry_allowed_length = pick(0, 5);
            params.dry_penalty_last_n = pick(0, 3) == 0 ? -1 : pick(1, 130);
            const auto breakers = pick(0, 3);
            for (std::int64_t b = 0; b < breakers; ++b) {
                std::vector<std::int64_t> breaker;
                const auto length = static_cast<std::size_t>(pick(1, 4));
                if (!history.empty() && pick(0, 1) == 0) {
                    const auto from = static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(history.size()) - 1));
                    for (std::size_t k = 0; k < length && from + k < history.size(); ++k) breaker.push_back(history[from + k]);
                } else {
                    for (std::size_t k = 0; k < length; ++k) breaker.push_back(pick(0, static_cast<std::int64_t>(vocab)));
                }
                params.dry_sequence_breakers.push_back(breaker);
            }
            const std::vector<double> logits(vocab + 1, 0.0);
            const PipelineTrace t = run("dry", logits, params, prompt, output);
            const StageTrace& s = stage_of(t, Stage::Dry);
            QVERIFY(s.active);
            const std::optional<DryOracle> expected = dry_oracle(prompt, output, params);
            const QString where = QStringLiteral("trial %1").arg(trial);
            if (!expected) {
                QVERIFY2(s.dry_ids->empty() && !s.dry_repeat_limit, qPrintable(where));
                continue;
            }
            QVERIFY2(s.dry_repeat_limit && *s.dry_repeat_limit == expected->repeat_limit, qPrintable(where));
            QVERIFY2(*s.dry_ids == expected->ids, qPrintable(where));
            QVERIFY2(*s.dry_lengths == expected->lengths, qPrintable(where));
            QVERIFY2(*s.dry_penalties == expected->penalties, qPrintable(where));
            if (!expected->ids.empty()) ++penalised_cases;
            if (expected->repeat_limit < history.size()) ++limited_cases;
        }
        // The random cases reach both the penalties and the breakers' limit.
        QVERIFY2(penalised_cases > 1000, qPrintable(QString::number(penalised_cases)));
        QVERIFY2(limited_cases > 300, qPrintable(QString::number(limited_cases)));
    }

    // A 200,000-id history of 0 1 2 3 4 5 6 repeated (ending ... 0 1 2): the
    // direct comparison takes tens of seconds here, the linear unit
    // milliseconds (docs/samplers.md; no timing is asserted). The end repeats
    // every 7 ids back, the longest 7 back with L = 199,993, and each time
    // the id after it is 3: only 3 is penalised, its exponent clamped at 158.
    void dryLongHistory() {
        std::vector<std::int64_t> history(200000);
        for (std::size_t i = 0; i < history.size(); ++i) history[i] = static_cast<std::int64_t>(i % 7);
        SamplingParams params;
        params.dry_multiplier = 0.8;
        const PipelineTrace t = run("dry", std::vector<double>(7, 0.0), params, history);
        const StageTrace& s = stage_of(t, Stage::Dry);
        QCOMPARE(*s.dry_ids, (IdList{3}));
        QCOMPARE(*s.dry_lengths, (std::vector<std::int64_t>{199993}));
        QVERIFY(std::fabs(s.dry_penalties->front() / (0.8 * std::pow(1.75, 158)) - 1.0) < 1e-12);
    }

    // ---- dynamic temperature: boundaries ---------------------------------------

    void dynamicTemperatureBoundaries() {
        const std::vector<double> q{0.1, 0.2, 0.3, 0.4};
        const auto logits = logits_of(q);
        double h = 0.0;
        for (const double x : q) h -= x * std::log(x);
        const double h_max = std::log(4.0);
        // q^(1/T) renormalised.
        const auto scaled = [&q](double t) {
            std::vector<double> out;
            double z = 0.0;
            for (const double x : q) z += std::pow(x, 1.0 / t);
            for (const double x : q) out.push_back(std::pow(x, 1.0 / t) / z);
            return out;
        };
        SamplingParams params;
        // Range 0 is off: the plain temperature.
        params.temperature = 0.7;
        const PipelineTrace plain = run("temperature:llamacpp", logits, params);
        QVERIFY(!stage_of(plain, Stage::Temperature).temperature_used);
        expect_q(plain, scaled(0.7), 1e-12);
        // T = 1, range 0.5, exponent 1: T' = 0.5 + 1 x H / log 4.
        params.temperature = 1.0;
        params.dynatemp_range = 0.5;
        const PipelineTrace one = run("temperature:llamacpp", logits, params);
        const double t1 = 0.5 + h / h_max;
        QVERIFY(std::fabs(*stage_of(one, Stage::Temperature).temperature_used - t1) < 1e-12);
        QVERIFY(std::fabs(*stage_of(one, Stage::Temperature).entropy - h) < 1e-12);
        QVERIFY(std::fabs(*stage_of(one, Stage::Temperature).max_entropy - h_max) < 1e-12);
        expect_q(one, scaled(t1), 1e-12);
        // Exponent 0: (H / log n)^0 = 1, so T' = T + range = 1.5.
        params.dynatemp_exponent = 0.0;
        const PipelineTrace flat = run("temperature:llamacpp", logits, params);
        QCOMPARE(*stage_of(flat, Stage::Temperature).temperature_used, 1.5);
        expect_q(flat, scaled(1.5), 1e-12);
        // T = 0 with range 1: lo = max(0, -1) = 0, hi = 1, T' = H / log 4 > 0,
        // so the row is scaled, not reduced to its maximum (llama.cpp's temp_ext).
        params.temperature = 0.0;
        params.dynatemp_range = 1.0;
        params.dynatemp_exponent = 1.0;
        const PipelineTrace zero = run("temperature:llamacpp", logits, params);
        QVERIFY(std::fabs(*stage_of(zero, Stage::Temperature).temperature_used - h / h_max) < 1e-12);
        QCOMPARE(zero.trace.final_kept(), (IdList{0, 1, 2, 3}));
        QVERIFY(!zero.trace.greedy);
        expect_q(zero, scaled(h / h_max), 1e-12);
        // The same through the llamacpp preset (no greedy step before it).
        const PipelineTrace preset = run(preset_pipeline("llamacpp"), logits, params);
        QCOMPARE(preset.trace.final_kept(), (IdList{0, 1, 2, 3}));
        // One candidate: llama.cpp leaves it as it is (no temperature at all).
        params.temperature = 0.7;
        params.top_k = 1;
        const PipelineTrace single = run("top_k,temperature:llamacpp", logits, params);
        QVERIFY(!stage_of(single, Stage::Temperature).active);
        QVERIFY(report_of(single, Stage::Temperature).note.find("one candidate") != std::string::npos);
        QCOMPARE(single.trace.final_kept(), (IdList{3}));
        // Only llama.cpp's temperature rule has a range.
        params.top_k = 0;
        QVERIFY(ignores(run("temperature:divide", logits, params), "dynatemp_range"));
    }

    // ---- mirostat ----------------------------------------------------------------

    // q = (0.5, 0.25, 0.125, 0.125): surprises -log2 q = 1, 2, 3, 3 bits. v2
    // keeps the ranked prefix with surprise <= mu, at least one id.
    void mirostatV2CutAtMu() {
        const auto logits = logits_of({0.5, 0.25, 0.125, 0.125});
        SamplingParams params;
        params.mirostat = 2;
        for (const auto& [mu, kept] : std::vector<std::pair<double, IdList>>{
                 {3.5, {0, 1, 2, 3}}, {2.5, {0, 1}}, {1.5, {0}}, {0.5, {0}}, {-1.0, {0}}}) {
            const PipelineTrace t = run("mirostat", logits, params, {}, {}, std::nullopt, mu);
            QCOMPARE(t.trace.final_kept(), kept);
            QCOMPARE(*stage_of(t, Stage::Mirostat).mirostat_mu, mu);
        }
        const PipelineTrace alone = run("mirostat", logits, params, {}, {}, std::nullopt, 0.5);
        QVERIFY(report_of(alone, Stage::Mirostat).note.find("stays alone") != std::string::npos);
        // Exactly at mu the id stays (only surprise > mu is cut).
        const PipelineTrace probe = run("mirostat", logits, params, {}, {}, std::nullopt, 3.5);
        const double second = -std::log2(stage_of(probe, Stage::Widen).prob_of(1));
        const PipelineTrace at = run("mirostat", logits, params, {}, {}, std::nullopt, second);
        QCOMPARE(at.trace.final_kept(), (IdList{0, 1}));
        // Absent, mu is 2 tau = 10: every id stays.
        QCOMPARE(run("mirostat", logits, params).trace.final_kept(), (IdList{0, 1, 2, 3}));
        QCOMPARE(*stage_of(run("mirostat", logits, params), Stage::Mirostat).mirostat_mu, 10.0);
    }

    // After the draw mu becomes mu - eta (surprise - tau), the surprise of the
    // drawn token's final q: kept {0, 1} renormalised to (2/3, 1/3).
    void mirostatMuUpdate() {
        const auto logits = logits_of({0.5, 0.25, 0.125, 0.125});
        SamplingParams params;
        params.mirostat = 2;
        params.mirostat_tau = 3.0;
        params.mirostat_eta = 0.25;
        for (const std::uint64_t seed : {1ULL, 2ULL, 3ULL, 4ULL}) {
            params.seed = seed;
            const PipelineTrace t = run("mirostat", logits, params, {}, {}, std::nullopt, 2.5);
            QVERIFY(t.mirostat);
            QCOMPARE(t.mirostat->version, std::int64_t{2});
            QCOMPARE(t.mirostat->mu_before, 2.5);
            const double q = t.trace.token == 0 ? 2.0 / 3.0 : 1.0 / 3.0;
            QVERIFY(std::fabs(t.mirostat->surprise + std::log2(q)) < 1e-12);
            QVERIFY(std::fabs(t.mirostat->mu_after - (2.5 - 0.25 * (-std::log2(q) - 3.0))) < 1e-12);
        }
        // eta 0: mu never moves.
        params.mirostat_eta = 0.0;
        const PipelineTrace still = run("mirostat", logits, params, {}, {}, std::nullopt, 2.5);
        QCOMPARE(still.mirostat->mu_after, 2.5);
        // No mirostat step, no mirostat state.
        params.mirostat = 0;
        QVERIFY(!run("mirostat", logits, params).mirostat);
    }

    // A Zipf row q_i ∝ (i + 1)^-2 over V = 10: b_i = ln(q_i / q_(i+1)) = 2 t_i
    // with t_i = ln((i + 2) / (i + 1)), so s_hat = sum t_i b_i / sum t_i^2 = 2,
    // and k = ((s - 1) 2^mu / (1 - V^(1 - s)))^(1 / s) = sqrt(2^mu / 0.9):
    // mu = 4 gives 4.216 (keep 4), mu = 3 gives 2.981 (keep 2), mu = -2 gives
    // 0.527 (keep 1), mu = 10 gives 33.7 (keep all 10).
    void mirostatV1ZipfK() {
        const std::size_t v = 10;
        std::vector<double> logits;
        for (std::size_t i = 0; i < v; ++i) logits.push_back(-2.0 * std::log(static_cast<double>(i + 1)));
        double sum_tb = 0.0;
        double sum_tt = 0.0;
        for (std::size_t i = 0; i + 1 < v; ++i) {
            const double t = std::log(static_cast<double>(i + 2) / static_cast<double>(i + 1));
            const double b = std::log(std::pow(static_cast<double>(i + 2) / static_cast<double>(i + 1), 2.0));
            sum_tb += t * b;
            sum_tt += t * t;
        }
        const double s_hat = sum_tb / sum_tt;
        QVERIFY(std::fabs(s_hat - 2.0) < 1e-12);
        SamplingParams params;
        params.mirostat = 1;
        for (const auto& [mu, count] : std::vector<std::pair<double, std::size_t>>{
                 {4.0, 4}, {3.0, 2}, {-2.0, 1}, {10.0, 10}}) {
            const double k = std::pow((s_hat - 1.0) * std::pow(2.0, mu) / (1.0 - std::pow(10.0, 1.0 - s_hat)),
                                      1.0 / s_hat);
            QVERIFY(std::fabs(k - std::sqrt(std::pow(2.0, mu) / 0.9)) < 1e-9);
            const PipelineTrace t = run("mirostat", logits, params, {}, {}, std::nullopt, mu);
            const StageTrace& s = stage_of(t, Stage::Mirostat);
            QVERIFY(std::fabs(*s.mirostat_s_hat - s_hat) < 1e-9);
            QVERIFY2(std::fabs(*s.mirostat_k - k) < 1e-9 * k, qPrintable(QString::number(*s.mirostat_k)));
            QCOMPARE(t.trace.final_kept().size(), count);
            QCOMPARE(t.trace.final_kept().front(), 0);
        }
    }

    // ---- min_keep --------------------------------------------------------------

    // llama.cpp's rules treat min_keep 0 and 1 alike.
    void minKeepZeroAndOneAgree() {
        const auto logits = logits_of({0.1, 0.2, 0.3, 0.4});
        SamplingParams params;
        params.top_p = 0.3;
        params.min_p = 0.9;
        params.typical_p = 0.2;
        params.xtc_probability = 1.0;
        params.xtc_threshold = 0.09;
        for (const std::string stages : {"top_p:inclusive_cumsum", "min_p:log", "typical_p", "xtc"}) {
            SamplingParams zero = params;
            zero.min_keep = 0;
            SamplingParams one = params;
            one.min_keep = 1;
            const PipelineTrace a = run(stages, logits, zero, {}, {}, 0.0);
            const PipelineTrace b = run(stages, logits, one, {}, {}, 0.0);
            QCOMPARE(a.trace.final_kept(), b.trace.final_kept());
            QCOMPARE(a.trace.final_kept().size(), std::size_t{1});
        }
    }

    // Top-p (inclusive cumsum): the walk stops at the first i with mass >= p
    // and i + 1 >= min_keep. q ranked 0.4, 0.3, 0.2, 0.1, p = 0.3: min_keep 1
    // keeps {3}, 3 keeps {1, 2, 3}, 5 (more than V) keeps all. Min-p (log
    // rule): fewer than min_keep pass, so the top min_keep in rank order stay.
    void minKeepLargerThanTheKeptSet() {
        const auto logits = logits_of({0.1, 0.2, 0.3, 0.4});
        SamplingParams params;
        params.top_p = 0.3;
        for (const auto& [min_keep, kept] : std::vector<std::pair<std::int64_t, IdList>>{
                 {1, {3}}, {2, {2, 3}}, {3, {1, 2, 3}}, {5, {0, 1, 2, 3}}}) {
            params.min_keep = min_keep;
            QCOMPARE(run("top_p:inclusive_cumsum", logits, params).trace.final_kept(), kept);
        }
        params.top_p = 1.0;
        params.min_p = 0.76;
        for (const auto& [min_keep, kept] : std::vector<std::pair<std::int64_t, IdList>>{
                 {1, {3}}, {2, {2, 3}}, {3, {1, 2, 3}}, {10, {0, 1, 2, 3}}}) {
            params.min_keep = min_keep;
            QCOMPARE(run("min_p:log", logits, params).trace.final_kept(), kept);
        }
        // Typical-p: q = (0.97, 0.01 x 3), p = 0.5 stops after id 0 unless
        // min_keep asks for more; the next is the lowest of the equal ids.
        params.min_p = 0.0;
        params.typical_p = 0.5;
        params.min_keep = 2;
        const PipelineTrace typical = run("typical_p", logits_of({0.97, 0.01, 0.01, 0.01}), params);
        QCOMPARE(typical.trace.final_kept(), (IdList{0, 1}));
        QVERIFY(typical.any_tie());
        // The contract's rules have no min_keep.
        params.typical_p = 1.0;
        params.top_p = 0.3;
        params.min_keep = 3;
        QCOMPARE(run("top_p:contract", logits, params).trace.final_kept(), (IdList{3}));
    }

    // ---- the llamacpp preset: the mirostat chain and ignored knobs -------------

    // common/sampling.cpp common_sampler_init: with mirostat 1 or 2 the chain
    // is logit bias, temp (no dynamic range) and mirostat; the other steps
    // are skipped and their knobs are reported as ignored.
    void mirostatChainReplacesTheList() {
        SamplingParams params;
        params.temperature = 0.8;
        params.logit_bias = parse_logit_bias("0:0.5");
        params.repetition_penalty = 1.1;
        params.top_k = 40;
        params.top_p = 0.9;
        params.min_p = 0.05;
        params.typical_p = 0.5;
        params.top_n_sigma = 1.0;
        params.dry_multiplier = 0.8;
        params.xtc_probability = 0.5;
        params.dynatemp_range = 0.5;
        params.min_keep = 2;
        params.mirostat_tau = 4.0;
        const std::vector<double> logits{1.0, 2.0, 0.5, 1.5, -1.0, 0.0};
        for (const std::int64_t version : {1, 2}) {
            params.mirostat = version;
            const PipelineTrace t = run(preset_pipeline("llamacpp"), logits, params, {1, 3, 1, 3});
            for (std::size_t i = 0; i < t.trace.stages.size(); ++i) {
                const Stage stage = t.trace.stages[i].stage;
                if (!is_step_stage(stage)) continue;
                const bool in_chain =
                    stage == Stage::LogitBias || stage == Stage::Temperature || stage == Stage::Mirostat;
                QVERIFY2(t.trace.stages[i].active == in_chain, stage_info(stage).name.data());
                if (!in_chain) QVERIFY(t.reports[i].note.starts_with("skipped"));
            }
            QVERIFY(t.mirostat);
            QCOMPARE(t.mirostat->version, version);
            QCOMPARE(t.mirostat->mu_before, 8.0);
            QVERIFY(!stage_of(t, Stage::Temperature).temperature_used);
            for (const std::string key : {"repetition_penalty", "top_k", "top_p", "min_p", "typical_p", "top_n_sigma",
                                          "dry_multiplier", "xtc_probability", "dynatemp_range", "min_keep"}) {
                QVERIFY2(ignores(t, key), key.c_str());
            }
            for (const std::string key : {"temperature", "logit_bias", "mirostat", "mirostat_tau"}) {
                QVERIFY2(!ignores(t, key), key.c_str());
            }
        }
        // Mirostat off: the same knobs are read.
        params.mirostat = 0;
        // (mirostat_tau counts as read: the mirostat step is in the chain, off.)
        const PipelineTrace list = run(preset_pipeline("llamacpp"), logits, params, {1, 3, 1, 3});
        QVERIFY(list.trace.ignored_params.empty());
        QVERIFY(!list.mirostat);
    }

    void extraKnobsIgnoredOutsideLlamaCpp() {
        const std::vector<double> logits{1.0, 2.0, 0.5};
        SamplingParams params;
        params.dynatemp_range = 0.5;
        QVERIFY(ignores(run(preset_pipeline("spec"), logits, params), "dynatemp_range"));
        QVERIFY(ignores(run(preset_pipeline("vllm"), logits, params), "dynatemp_range"));
        QVERIFY(!ignores(run(preset_pipeline("llamacpp"), logits, params), "dynatemp_range"));
        params.dynatemp_range = 0.0;
        params.min_keep = 3;
        QVERIFY(ignores(run(preset_pipeline("vllm"), logits, params), "min_keep"));
        QVERIFY(!ignores(run(preset_pipeline("llamacpp"), logits, params), "min_keep"));
        params.min_keep = 1;
        params.xtc_probability = 0.5;
        params.dry_multiplier = 0.5;
        params.mirostat = 2;
        const PipelineTrace spec = run(preset_pipeline("spec"), logits, params);
        for (const std::string key : {"xtc_probability", "dry_multiplier", "mirostat"}) QVERIFY(ignores(spec, key));
        QVERIFY(!spec.mirostat);
    }

    // ---- mirostat across the steps of a request --------------------------------

    // A Request carries mu from step to step: 20 steps equal 20 run_pipeline
    // calls each given the previous step's mu_after, the growing output and
    // the draw count; reset() brings mu back to 2 tau.
    void mirostatAcrossSteps() {
        const std::vector<double> logits{2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -2.0};
        SamplingParams params;
        params.mirostat = 2;
        params.mirostat_tau = 2.0;
        params.mirostat_eta = 0.5;
        params.seed = 42;
        const Pipeline pipeline = preset_pipeline("llamacpp");
        Request request(pipeline, params, {1, 2});
        QCOMPARE(request.mirostat_mu(), 4.0);
        Pcg32 rng = stream(42, kSampleLabel);
        std::uint64_t draws = 0;
        std::optional<double> mu;
        std::vector<std::int64_t> output;
        const std::vector<std::int64_t> prompt{1, 2};
        std::vector<std::int32_t> tokens;
        bool mu_moved = false;
        for (int step = 0; step < 20; ++step) {
            const PipelineTrace by_request = request.step_pipeline(logits);
            PipelineInput input{logits, params, prompt, output};
            input.mirostat_mu = mu;
            const PipelineTrace by_hand = run_pipeline(pipeline, input, rng, 42, draws);
            QCOMPARE(by_request.trace.token, by_hand.trace.token);
            QCOMPARE(by_request.trace.final_kept(), by_hand.trace.final_kept());
            QCOMPARE(by_request.mirostat->mu_before, by_hand.mirostat->mu_before);
            QCOMPARE(by_request.mirostat->mu_after, by_hand.mirostat->mu_after);
            QCOMPARE(by_request.trace.draws_consumed, by_hand.trace.draws_consumed);
            if (step == 0) QCOMPARE(by_hand.mirostat->mu_before, 4.0);
            mu_moved = mu_moved || by_hand.mirostat->mu_after != 4.0;
            mu = by_hand.mirostat->mu_after;
            draws = by_hand.trace.draws_consumed;
            output.push_back(by_hand.trace.token);
            tokens.push_back(by_hand.trace.token);
            QCOMPARE(request.mirostat_mu(), *mu);
        }
        QCOMPARE(draws, std::uint64_t{20});
        QVERIFY(mu_moved);
        request.reset();
        QCOMPARE(request.mirostat_mu(), 4.0);
        const PipelineTrace again = request.step_pipeline(logits);
        QCOMPARE(again.trace.token, tokens.front());
        QCOMPARE(again.mirostat->mu_before, 4.0);
    }

    // The CLI's JSON: the new keys in `params`, XTC's outcomes and mixture,
    // mirostat's state, and the knobs the mirostat chain ignores.
    void newSamplersInTheCliJson() {
        const auto json_of = [](const QStringList& args) {
            const testing::CliResult result = testing::run_trace_cli(args);
            if (result.exit_code != 0) qWarning() << result.err_lines;
            return QJsonDocument::fromJson(result.out.toUtf8()).object();
        };
        const QJsonObject xtc = json_of({"--values", "3,2.5,1,0", "--pipeline", "llamacpp", "--seed", "1",
                                         "--xtc-probability", "0.5", "--xtc-threshold", "0.1",
                                         "--dry-sequence-breakers", "1; 2,3"});
        const QJsonObject params = xtc["params"].toObject();
        QCOMPARE(params["xtc_probability"].toDouble(), 0.5);
        QCOMPARE(params["dry_sequence_breakers"].toString(), QStringLiteral("1;2,3"));
        // At their defaults: not printed.
        QVERIFY(!params.contains("mirostat"));
        QVERIFY(!params.contains("min_keep"));
        const QJsonObject mixture = xtc["xtc"].toObject();
        QCOMPARE(mixture["coin"].toDouble(), xtc_coin(1, 0));
        QCOMPARE(mixture["removed"].toArray(), (QJsonArray{0}));
        QCOMPARE(mixture["kept_with"].toArray(), (QJsonArray{1, 2, 3}));
        QCOMPARE(mixture["mixture_ids"].toArray().size(), 4);
        double total = 0.0;
        for (const auto q : mixture["mixture_probs"].toArray()) total += q.toDouble();
        QVERIFY(std::fabs(total - 1.0) < 1e-12);
        // The breakers are set but DRY is off: nothing reads them.
        QCOMPARE(xtc["ignored_params"].toArray(), (QJsonArray{}));

        const QJsonObject miro = json_of({"--values", "3,2,1,0", "--pipeline", "llamacpp", "--seed", "1",
                                          "--mirostat", "2", "--temperature", "0.7", "--top-k", "2"});
        const QJsonObject state = miro["mirostat"].toObject();
        QCOMPARE(state["version"].toInt(), 2);
        QCOMPARE(state["mu_before"].toDouble(), 10.0);
        QVERIFY(std::fabs(state["mu_after"].toDouble() -
                          (10.0 - 0.1 * (state["surprise"].toDouble() - 5.0))) < 1e-12);
        QCOMPARE(miro["ignored_params"].toArray(), (QJsonArray{"top_k"}));
        QCOMPARE(miro["kept"].toArray().size(), 4);
    }

    // ---- bad input ------------------------------------------------------------

    // Every new parameter's refusal, through set_param and the CLI flag: exit
    // status 2 and one line naming the field and the value.
    void newParamRefusals() {
        const QStringList base{"--values", "1,2,3", "--pipeline", "llamacpp", "--seed", "1"};
        struct Case {
            Param param;
            QString flag;
            QString value;
            QString message;
        };
        const std::vector<Case> cases{
            {Param::Mirostat, "--mirostat", "3", "mirostat must be 0, 1 or 2, got 3"},
            {Param::Mirostat, "--mirostat", "1.5", "mirostat must be 0, 1 or 2, got 1.5"},
            {Param::DryBase, "--dry-base", "0.5", "dry_base must be >= 1 and finite, got 0.5"},
            {Param::DryPenaltyLastN, "--dry-penalty-last-n", "-2", "dry_penalty_last_n must be an integer >= -1, got -2"},
            {Param::DryAllowedLength, "--dry-allowed-length", "1.5",
             "dry_allowed_length must be an integer >= 0, got 1.5"},
            {Param::DryMultiplier, "--dry-multiplier", "-1", "dry_multiplier must be >= 0 and finite, got -1"},
            {Param::XtcProbability, "--xtc-probability", "1.5", "xtc_probability must be in [0, 1], got 1.5"},
            {Param::XtcThreshold, "--xtc-threshold", "-0.1", "xtc_threshold must be in [0, 1], got -0.1"},
            {Param::MinKeep, "--min-keep", "-1", "min_keep must be an integer >= 0, got -1"},
            {Param::DynatempRange, "--dynatemp-range", "-1", "dynatemp_range must be >= 0 and finite, got -1"},
            {Param::DynatempExponent, "--dynatemp-exponent", "inf",
             "dynatemp_exponent must be >= 0 and finite, got inf"},
            {Param::MirostatTau, "--mirostat-tau", "-1", "mirostat_tau must be >= 0 and finite, got -1"},
            {Param::MirostatEta, "--mirostat-eta", "nan", "mirostat_eta must be >= 0 and finite, got nan"},
        };
        for (const auto& c : cases) {
            SamplingParams params;
            const QString key = QString::fromUtf8(param_info(c.param).key.data(),
                                                  static_cast<qsizetype>(param_info(c.param).key.size()));
            expect_refused([&] { set_param(params, c.param, std::stod(c.value.toStdString())); }, key, {c.message});
            expect_cli_refused(base + QStringList{c.flag, c.value}, c.message);
        }
        // An integer field set directly is checked by validate() the same way.
        SamplingParams direct;
        direct.mirostat = 3;
        expect_refused([&] { validate(direct); }, "mirostat", {"mirostat must be 0, 1 or 2, got 3"});
        direct.mirostat = 0;
        direct.dry_penalty_last_n = -2;
        expect_refused([&] { validate(direct); }, "dry_penalty_last_n", {"got -2"});
        direct.dry_penalty_last_n = -1;
        direct.min_keep = -1;
        expect_refused([&] { validate(direct); }, "min_keep", {"min_keep must be an integer >= 0, got -1"});
    }

    void drySequenceBreakerRefusals() {
        const QStringList base{"--values", "1,2,3", "--pipeline", "llamacpp", "--seed", "1"};
        for (const auto& [text, message] : std::vector<std::pair<QString, QString>>{
                 {"1;;2", "dry_sequence_breakers has an empty breaker at position 1 in \"1;;2\""},
                 {"x", "dry_sequence_breakers id must be an integer >= 0, got \"x\" in \"x\""},
                 {"1,", "dry_sequence_breakers id must be an integer >= 0, got \"\" in \"1,\""},
                 {"-1", "dry_sequence_breakers id must be an integer >= 0, got \"-1\" in \"-1\""},
                 {";", "dry_sequence_breakers has an empty breaker at position 0 in \";\""}}) {
            expect_refused([&] { parse_dry_sequence_breakers(text.toStdString()); }, "dry_sequence_breakers",
                           {message});
            expect_cli_refused(base + QStringList{"--dry-sequence-breakers", text}, message);
        }
        // An id >= V, once V is known.
        expect_refused([] { check_dry_sequence_breakers({{1}, {0, 3}}, 3); }, "dry_sequence_breakers",
                       {"dry_sequence_breakers id 3 is outside [0, 3) for V = 3"});
        expect_cli_refused(base + QStringList{"--dry-sequence-breakers", "1;0,3"},
                           "dry_sequence_breakers id 3 is outside [0, 3) for V = 3");
        // As typed: the breaker 13 and the breaker 198 271; blanks allowed.
        QCOMPARE(parse_dry_sequence_breakers(" 13 ; 198, 271 "),
                 (std::vector<std::vector<std::int64_t>>{{13}, {198, 271}}));
        QCOMPARE(format_dry_sequence_breakers({{13}, {198, 271}}), std::string("13;198,271"));
        QVERIFY(parse_dry_sequence_breakers("").empty());
        // Set directly: an empty breaker or a negative id is refused by validate().
        SamplingParams params;
        params.dry_sequence_breakers = {{}};
        expect_refused([&] { validate(params); }, "dry_sequence_breakers", {"empty breaker"});
        params.dry_sequence_breakers = {{-4}};
        expect_refused([&] { validate(params); }, "dry_sequence_breakers", {"got -4"});
        // A params file's key: a string only.
        expect_refused([] { row_request_from_json(nlohmann::json::parse(R"({"dry_sequence_breakers": 13})"), "row 0"); },
                       "dry_sequence_breakers",
                       {"row 0: dry_sequence_breakers must be a string \"id,id;id\", got 13"});
        expect_refused(
            [] { row_request_from_json(nlohmann::json::parse(R"({"dry_sequence_breakers": "1;;2"})"), "row 2"); },
            "dry_sequence_breakers", {"row 2: dry_sequence_breakers has an empty breaker at position 1"});
        expect_refused([] { row_request_from_json(nlohmann::json::parse(R"({"mirostat": 3})"), "row 1"); },
                       "mirostat", {"row 1", "mirostat must be 0, 1 or 2, got 3"});
        const RowRequest row =
            row_request_from_json(nlohmann::json::parse(R"({"dry_sequence_breakers": "13;198,271"})"), "row 0");
        QCOMPARE(row.params.dry_sequence_breakers, (std::vector<std::vector<std::int64_t>>{{13}, {198, 271}}));
    }
};

QTEST_GUILESS_MAIN(TestSamplersLlamaCpp)
#include "test_samplers_llamacpp.moc"
