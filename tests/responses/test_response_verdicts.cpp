// The verdicts of engine/responses/explain.h: constructed responses whose
// answer is known by hand (each parameter, each order a preset applies them
// in), and on random rows a top-N response cut from the whole distribution,
// whose every decided verdict must agree with the pipeline run on that row.
// The rest's bounds (rest_bounds.h) against random spreads of the rest's mass.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <cstdlib>
#include <random>
#include <sstream>

#include "engine/base/input_error.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"
#include "engine/responses/explain.h"
#include "engine/responses/explain_setup.h"
#include "engine/responses/rest_bounds.h"
#include "engine/responses/response_row.h"

using namespace samplescope;

namespace {

// A response of one position: the token and the listed alternatives, as
// probabilities (logprobs taken here), text only.
struct Listed {
    std::string text;
    double prob;
};

Response one_position(const std::string& token, std::optional<double> prob, const std::vector<Listed>& top) {
    Response response;
    response.source = "constructed";
    ResponsePosition position;
    position.where = "position 0";
    position.token.bytes = token;
    if (prob) position.token.value = *prob == 0.0 ? -INFINITY : std::log(*prob);
    for (const auto& entry : top) {
        position.top.push_back(ResponseToken{std::nullopt, entry.text, entry.prob == 0.0 ? -INFINITY : std::log(entry.prob)});
    }
    response_detail::finish_position(position, response.source);
    response.positions.push_back(position);
    return response;
}

ExplainSettings settings_for(const std::string& pipeline, std::initializer_list<std::pair<Param, double>> values,
                             const std::string& mode = "") {
    ExplainSettings settings;
    settings.pipeline = preset_pipeline(pipeline);
    for (const auto& [param, value] : values) set_param(settings.params, param, value);
    for (const LogprobModeInfo* info : logprob_modes(pipeline)) {
        if (mode.empty() ? info->is_default : info->mode == mode) settings.mode = info;
    }
    if (!settings.mode) settings.mode = find_logprob_mode(mode.empty() ? "raw_logprobs" : mode);
    return settings;
}

const StageVerdict& stage_of(const TokenExplanation& token, Stage stage) {
    for (const auto& s : token.stages) {
        if (s.stage == stage) return s;
    }
    qFatal("no verdict for %s", std::string(stage_info(stage).name).c_str());
}

TokenVerdict verdict_of(const Response& response, const ExplainSettings& settings, Stage stage) {
    return stage_of(explain_position(response, 0, settings), stage).verdict;
}

// log_softmax of a row.
std::vector<double> log_softmax(const std::vector<double>& logits) {
    double max = -INFINITY;
    for (const double x : logits) max = std::max(max, x);
    double sum = 0.0;
    for (const double x : logits) sum += std::exp(x - max);
    std::vector<double> out;
    for (const double x : logits) out.push_back(x - max - std::log(sum));
    return out;
}

// A top-N response cut from a whole distribution `values` (natural logs) over ids,
// listing ids (`with_ids`) or text only, the token's own number shown or not.
Response cut_response(const std::vector<double>& values, std::int32_t token, std::size_t n, bool with_ids,
                      bool show_token_value, bool vllm_order) {
    std::vector<std::int32_t> order(values.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return values[a] > values[b]; });
    Response response;
    response.source = "cut";
    ResponsePosition position;
    position.where = "position 0";
    const auto entry = [&](std::int32_t id) {
        ResponseToken t;
        if (with_ids) t.id = id;
        t.bytes = std::to_string(id);
        t.bytes.insert(t.bytes.begin(), 't');  // (GCC 12 misreads "t" + to_string as an overflow)
        t.value = values[static_cast<std::size_t>(id)];
        return t;
    };
    position.token = entry(token);
    if (!show_token_value) position.token.value.reset();
    std::vector<std::int32_t> listed(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(std::min(n, order.size())));
    if (vllm_order && n > 0 && std::find(listed.begin(), listed.end(), token) == listed.end()) {
        // vLLM's lists: the sampled token first, then the top N-1.
        listed.pop_back();
        listed.insert(listed.begin(), token);
        position.token.value = values[static_cast<std::size_t>(token)];
    }
    for (const auto id : listed) position.top.push_back(entry(id));
    response_detail::finish_position(position, response.source);
    response.positions.push_back(position);
    response.sampled_listed_first = vllm_order;
    return response;
}

struct Tally {
    std::size_t decided = 0;
    std::size_t total = 0;
};

// Every decided verdict of `token` agrees with the whole row's run: a step it
// reached keeps it exactly when the verdict says kept, and the final set holds
// it when the token is kept overall.
std::string describe(const PipelineTrace& trace) {
    std::ostringstream out;
    const SamplingParams& p = trace.trace.params;
    out << " | T " << p.temperature << " k " << p.top_k << " p " << p.top_p << " min_p " << p.min_p;
    for (const auto& stage : trace.trace.stages) {
        out << " | " << stage_info(stage.stage).name << (stage.active ? "" : "(off)") << ":";
        if (stage.kept) {
            for (const auto id : *stage.kept) out << " " << id;
        }
    }
    return out.str();
}

void check_against_row(const TokenExplanation& explained, const PipelineTrace& trace, std::int32_t token,
                       std::string context, Tally& tally) {
    if (std::getenv("SAMPLESCOPE_VERDICT_DEBUG")) context += describe(trace);
    std::shared_ptr<const IdList> before = trace.trace.stages.front().kept;
    for (const auto& stage : trace.trace.stages) {
        const std::shared_ptr<const IdList> input = before;
        if (stage.kept) before = stage.kept;
        if (stage.stage != Stage::TopK && stage.stage != Stage::TopP && stage.stage != Stage::MinP && stage.stage != Stage::Greedy) continue;
        const bool reached = input && std::binary_search(input->begin(), input->end(), token);
        if (!reached || !stage.active) continue;
        const StageVerdict* v = nullptr;
        for (const auto& s : explained.stages) {
            if (s.stage == stage.stage) v = &s;
        }
        if (!v) continue;
        const bool kept = stage.stage == Stage::Greedy ? trace.trace.token == token : stage.keeps(token);
        ++tally.total;
        if (v->verdict == TokenVerdict::Kept || v->verdict == TokenVerdict::Cut) ++tally.decided;
        if (v->verdict == TokenVerdict::Kept && !kept) QFAIL(qPrintable(QString::fromStdString(context + ": " + std::string(stage_info(stage.stage).name) + " said kept, the row cut it: " + v->reason)));
        if (v->verdict == TokenVerdict::Cut && kept) QFAIL(qPrintable(QString::fromStdString(context + ": " + std::string(stage_info(stage.stage).name) + " said cut, the row kept it: " + v->reason)));
    }
    const IdList& final_kept = trace.trace.final_kept();
    const bool in_final = std::binary_search(final_kept.begin(), final_kept.end(), token);
    if (explained.verdict == TokenVerdict::Cut && in_final) QFAIL(qPrintable(QString::fromStdString(context + ": excluded, but the final set holds it: " + explained.summary)));
    if (explained.verdict == TokenVerdict::Kept && !in_final) QFAIL(qPrintable(QString::fromStdString(context + ": possible, but the final set lacks it: " + explained.summary)));
}

}  // namespace

class TestResponseVerdicts : public QObject {
    Q_OBJECT

private slots:
    // Top-k by rank: listed, below the list with its own probability, and the mass bound on its rank.
    void topKByRank() {
        const auto s2 = settings_for("vllm", {{Param::TopK, 2}});
        const auto s3 = settings_for("vllm", {{Param::TopK, 3}});
        const Response listed = one_position("c", std::nullopt, {{"a", 0.5}, {"b", 0.3}, {"c", 0.1}});
        QCOMPARE(verdict_of(listed, s2, Stage::TopK), TokenVerdict::Cut);
        QCOMPARE(verdict_of(listed, s3, Stage::TopK), TokenVerdict::Kept);
        // Below two listed ids with p = 0.15 of a rest of 0.2: nothing else fits above it, so rank 3.
        const Response below = one_position("x", 0.15, {{"a", 0.6}, {"b", 0.2}});
        const TokenExplanation t = explain_position(below, 0, s3);
        QCOMPARE(t.rank_lo, std::int64_t{3});
        QCOMPARE(t.rank_hi.value(), std::int64_t{3});
        QCOMPARE(stage_of(t, Stage::TopK).verdict, TokenVerdict::Kept);
        QCOMPARE(verdict_of(below, s2, Stage::TopK), TokenVerdict::Cut);
        // p = 0.02 of a rest of 0.2: up to 9 more ids may sit above it.
        const Response deep = one_position("x", 0.02, {{"a", 0.6}, {"b", 0.2}});
        QCOMPARE(explain_position(deep, 0, s3).rank_hi.value(), std::int64_t{12});
        QCOMPARE(verdict_of(deep, s3, Stage::TopK), TokenVerdict::CannotTell);
        QCOMPARE(verdict_of(deep, settings_for("vllm", {{Param::TopK, 12}}), Stage::TopK), TokenVerdict::Kept);
        // Without alternatives a token above 1/2 is the largest.
        QCOMPARE(verdict_of(one_position("x", 0.6, {}), settings_for("vllm", {{Param::TopK, 1}}), Stage::TopK),
                 TokenVerdict::Kept);
    }

    // Top-p at T = 1 from the exact listed mass; at T = 0.5 from the rest's bounds.
    void topPFromMassBounds() {
        const Response r = one_position("c", std::nullopt, {{"a", 0.5}, {"b", 0.3}, {"c", 0.1}});
        QCOMPARE(verdict_of(r, settings_for("vllm", {{Param::TopP, 0.75}}), Stage::TopP), TokenVerdict::Cut);
        QCOMPARE(verdict_of(r, settings_for("vllm", {{Param::TopP, 0.85}}), Stage::TopP), TokenVerdict::Kept);
        // The mass before it is exactly 0.8: at the boundary, where the engines differ.
        QCOMPARE(verdict_of(r, settings_for("vllm", {{Param::TopP, 0.8}}), Stage::TopP), TokenVerdict::CannotTell);
        // T = 0.5 squares the weights: 0.25, 0.09, 0.01 and a rest of mass 0.1 whose squares sum to
        // between 0 (spread over many ids) and 0.01 (one id of 0.1): the mass before c is in [0.944, 0.971].
        const auto at = [&](double p) {
            return explain_position(r, 0, settings_for("vllm", {{Param::Temperature, 0.5}, {Param::TopP, p}}));
        };
        const StageVerdict v = stage_of(at(0.95), Stage::TopP);
        QCOMPARE(v.verdict, TokenVerdict::CannotTell);
        QVERIFY(std::fabs(*v.lo - 0.34 / 0.36) < 1e-4);
        QVERIFY(std::fabs(*v.hi - 0.34 / 0.35) < 1e-4);
        QCOMPARE(stage_of(at(0.9), Stage::TopP).verdict, TokenVerdict::Cut);
        QCOMPARE(stage_of(at(0.98), Stage::TopP).verdict, TokenVerdict::Kept);
        // T = 2 flattens the rest, whose count is then the bound: unknown V leaves it open, V bounds it.
        auto flat = settings_for("vllm", {{Param::Temperature, 2.0}, {Param::TopP, 0.5}});
        QCOMPARE(stage_of(explain_position(r, 0, flat), Stage::TopP).verdict, TokenVerdict::CannotTell);
        flat.vocab_size = 5;  // the rest is two ids of at most 0.1 each
        QCOMPARE(stage_of(explain_position(r, 0, flat), Stage::TopP).verdict, TokenVerdict::Cut);
    }

    void minPFromTheRatio() {
        const Response r = one_position("c", std::nullopt, {{"a", 0.5}, {"b", 0.3}, {"c", 0.1}});
        QCOMPARE(verdict_of(r, settings_for("vllm", {{Param::MinP, 0.19}}), Stage::MinP), TokenVerdict::Kept);
        QCOMPARE(verdict_of(r, settings_for("vllm", {{Param::MinP, 0.21}}), Stage::MinP), TokenVerdict::Cut);
        // vLLM's min-p is after temperature: at T = 0.5 the ratio is 0.2^2 = 0.04.
        QCOMPARE(verdict_of(r, settings_for("vllm", {{Param::Temperature, 0.5}, {Param::MinP, 0.05}}), Stage::MinP),
                 TokenVerdict::Cut);
        // llama.cpp's is before its temperature: the ratio stays 0.2.
        QCOMPARE(verdict_of(r, settings_for("llamacpp", {{Param::Temperature, 0.5}, {Param::MinP, 0.05}, {Param::TopK, 0},
                                                         {Param::TopP, 1.0}}),
                            Stage::MinP),
                 TokenVerdict::Kept);
        // Below the list without its own number: only that the listed floor is below the threshold.
        const Response unknown = one_position("x", std::nullopt, {{"a", 0.6}, {"b", 0.01}});
        QCOMPARE(verdict_of(unknown, settings_for("vllm", {{Param::MinP, 0.05}}), Stage::MinP), TokenVerdict::Cut);
        QCOMPARE(verdict_of(unknown, settings_for("vllm", {{Param::MinP, 0.001}}), Stage::MinP), TokenVerdict::CannotTell);
    }

    // Where the order of the steps decides: vLLM's min-p before top-p (renormalised) against
    // SGLang's joint filter; llama.cpp's truncation before temperature against vLLM's after.
    void presetsOrderTheSteps() {
        const Response r = one_position("b", std::nullopt, {{"a", 0.5}, {"b", 0.3}, {"c", 0.15}, {"d", 0.05}});
        // min-p 0.5 keeps {a, b}; renormalised, a holds 0.625 >= 0.6, so vLLM's top-p cuts b.
        const auto vllm = explain_position(r, 0, settings_for("vllm", {{Param::MinP, 0.5}, {Param::TopP, 0.6}}));
        QCOMPARE(vllm.verdict, TokenVerdict::Cut);
        QCOMPARE(stage_of(vllm, Stage::TopP).verdict, TokenVerdict::Cut);
        // SGLang filters both on one distribution: a holds 0.5 < 0.6, so b stays.
        const auto sglang = explain_position(r, 0, settings_for("sglang", {{Param::MinP, 0.5}, {Param::TopP, 0.6}}, "logprob"));
        QCOMPARE(sglang.verdict, TokenVerdict::Kept);
        const Response t = one_position("c", std::nullopt, {{"a", 0.7}, {"b", 0.2}, {"c", 0.1}});
        // T = 2 before top-p (vLLM): weights sqrt -> c has 0.802 before it < 0.85.
        QCOMPARE(verdict_of(t, settings_for("vllm", {{Param::Temperature, 2.0}, {Param::TopP, 0.85}}), Stage::TopP),
                 TokenVerdict::Kept);
        // llama.cpp's top-p sees T = 1: 0.9 before it >= 0.85.
        QCOMPARE(verdict_of(t, settings_for("llamacpp", {{Param::Temperature, 2.0}, {Param::TopP, 0.85}, {Param::TopK, 0},
                                                         {Param::MinP, 0.0}}),
                            Stage::TopP),
                 TokenVerdict::Cut);
    }

    void greedyAndTheModes() {
        const Response r = one_position("b", std::nullopt, {{"a", 0.5}, {"b", 0.3}});
        const auto greedy = explain_position(r, 0, settings_for("vllm", {{Param::Temperature, 0.0}, {Param::TopK, 1}}));
        QCOMPARE(stage_of(greedy, Stage::Greedy).verdict, TokenVerdict::Cut);
        QCOMPARE(stage_of(greedy, Stage::TopK).verdict, TokenVerdict::Off);  // skipped: greedy
        // A token whose number is the servers' -inf stand-in in the final distribution could not be drawn.
        const Response zero = one_position("z", 0.0, {{"a", 0.9}, {"b", 0.1}});
        QCOMPARE(explain_position(zero, 0, settings_for("vllm", {}, "processed_logprobs")).verdict, TokenVerdict::Cut);
        // In the final distribution top-p can only be shown kept: the cut mass is not there.
        const Response final = one_position("b", std::nullopt, {{"a", 0.6}, {"b", 0.4}});
        QCOMPARE(verdict_of(final, settings_for("vllm", {{Param::TopP, 0.5}}, "processed_logprobs"), Stage::TopP),
                 TokenVerdict::CannotTell);
        QCOMPARE(verdict_of(final, settings_for("vllm", {{Param::TopP, 0.7}}, "processed_logprobs"), Stage::TopP),
                 TokenVerdict::Kept);
        // Penalties after raw numbers: nothing after them can be told.
        QCOMPARE(verdict_of(final, settings_for("vllm", {{Param::RepetitionPenalty, 1.2}, {Param::TopK, 1}}), Stage::TopK),
                 TokenVerdict::CannotTell);
    }

    // vLLM's lists lead with the sampled token: listed last, it may sit below the N-1 others.
    void sampledListedFirst() {
        Response r = one_position("c", std::nullopt, {{"c", 0.05}, {"a", 0.5}, {"b", 0.3}});
        r.sampled_listed_first = true;
        const auto t = explain_position(r, 0, settings_for("vllm", {{Param::TopK, 3}}));
        QCOMPARE(t.rank_lo, std::int64_t{3});
        QCOMPARE(stage_of(t, Stage::TopK).verdict, TokenVerdict::CannotTell);
        r.sampled_listed_first = false;
        QCOMPARE(verdict_of(r, settings_for("vllm", {{Param::TopK, 3}}), Stage::TopK), TokenVerdict::Kept);
    }

    // The rest's bounds hold for random spreads of its mass, and are reached by the extremes.
    void restBoundsHoldForRandomSpreads() {
        std::mt19937_64 random(11);
        for (int trial = 0; trial < 3000; ++trial) {
            const double cap = std::uniform_real_distribution<double>(0.01, 1.0)(random);
            const std::size_t count = 1 + random() % 40;
            std::vector<double> items(count);
            double mass = 0.0;
            for (auto& x : items) {
                x = cap * std::pow(std::uniform_real_distribution<double>(0.0, 1.0)(random), 1 + random() % 4);
                mass += x;
            }
            std::sort(items.begin(), items.end(), std::greater<>());
            RestShape shape{mass, mass, cap, random() % 2 ? static_cast<double>(count) : kUnbounded};
            RestFilter filter;
            if (random() % 3 == 0) filter.floor = cap * std::uniform_real_distribution<double>(0.0, 1.0)(random);
            if (random() % 3 == 0) filter.limit = static_cast<double>(random() % (count + 1));
            const double power = std::vector<double>{0.3, 0.5, 1.0, 1.7, 3.0}[random() % 5];
            double sum = 0.0;
            for (std::size_t i = 0; i < count; ++i) {
                if (static_cast<double>(i) < filter.limit && items[i] >= filter.floor) sum += std::pow(items[i], power);
            }
            const Interval bound = rest_power_sum(shape, filter, power);
            QVERIFY2(bound.lo <= sum * (1 + 1e-12) + 1e-300 && sum <= bound.hi * (1 + 1e-12),
                     qPrintable(QString("sum %1 outside [%2, %3]: mass %4 cap %5 count %6 floor %7 limit %8 power %9")
                                    .arg(sum).arg(bound.lo).arg(bound.hi).arg(mass).arg(cap).arg(shape.count)
                                    .arg(filter.floor).arg(filter.limit).arg(power)));
            double entropy = 0.0;
            for (const double x : items) entropy -= x > 0 ? x * std::log(x) : 0.0;
            const Interval h = rest_entropy(shape);
            QVERIFY(h.lo <= entropy + 1e-12 && entropy <= h.hi + 1e-12);
        }
        // The extremes: one id at the cap, or 4 even ids.
        const RestShape shape{0.4, 0.4, 0.4, 4};
        QCOMPARE(rest_power_sum(shape, {}, 2.0).hi, 0.16);
        QVERIFY(std::fabs(rest_power_sum(shape, {}, 2.0).lo - 4 * 0.01) < 1e-15);
        QCOMPARE(rest_power_sum(shape, {}, 1.0).lo, 0.4);
    }

    // Random rows: a top-N response cut from the whole distribution, every preset,
    // every mode's point; each decided verdict agrees with the run on the row.
    void decidedVerdictsAgreeWithTheRow() {
        // SAMPLESCOPE_VERDICT_TRIALS and _SEED run a longer search than the suite's.
        const char* trials_text = std::getenv("SAMPLESCOPE_VERDICT_TRIALS");
        const char* seed_text = std::getenv("SAMPLESCOPE_VERDICT_SEED");
        const int trials = trials_text ? std::atoi(trials_text) : 1500;
        std::mt19937_64 random(seed_text ? std::strtoull(seed_text, nullptr, 10) : 2024);
        const std::vector<std::string> presets{"vllm", "vllm-cuda", "sglang", "sglang-flashinfer", "hf", "llamacpp", "spec"};
        Tally full;
        Tally top20;
        for (int trial = 0; trial < trials; ++trial) {
            const std::size_t vocab = 2 + random() % 60;
            std::vector<double> logits(vocab);
            const bool coarse = random() % 4 == 0;  // ties
            for (auto& x : logits) {
                x = std::normal_distribution<double>(0, 1 + static_cast<double>(random() % 4))(random);
                if (coarse) x = std::round(x);
            }
            const std::string preset = presets[random() % presets.size()];
            SamplingParams params;
            params.temperature = random() % 8 == 0 ? 0.0 : std::uniform_real_distribution<double>(0.2, 3.0)(random);
            if (random() % 2) params.top_k = 1 + static_cast<std::int64_t>(random() % vocab);
            if (random() % 2) params.top_p = std::uniform_real_distribution<double>(0.05, 0.999)(random);
            if (random() % 2) params.min_p = std::uniform_real_distribution<double>(0.001, 0.9)(random);
            params.seed = random();
            const Pipeline pipeline = preset_pipeline(preset);
            const PipelineTrace trace = trace_pipeline_once(pipeline, PipelineInput{logits, params, {}, {}});
            // The numbers at each point: raw log_softmax, after temperature, the final q.
            std::vector<std::pair<std::string, std::vector<double>>> points;
            points.emplace_back("raw_logprobs", log_softmax(logits));
            if (params.temperature > 0.0 && preset != "llamacpp") {
                std::vector<double> scaled = logits;
                const double t = preset.rfind("vllm", 0) == 0 ? std::max(params.temperature, 0.01) : params.temperature;
                for (auto& x : scaled) x /= t;
                points.emplace_back("logprob", log_softmax(scaled));
            }
            std::vector<double> final_values(vocab, -INFINITY);
            const IdList& kept = trace.trace.final_kept();
            for (std::size_t i = 0; i < kept.size(); ++i) final_values[static_cast<std::size_t>(kept[i])] = std::log(trace.trace.final_probs()[i]);
            points.emplace_back("processed_logprobs", final_values);
            for (const auto& [mode, values] : points) {
                ExplainSettings settings;
                settings.pipeline = pipeline;
                settings.params = params;
                settings.mode = find_logprob_mode(mode);
                if (random() % 2) settings.vocab_size = vocab;
                std::vector<std::int32_t> tokens{trace.trace.token, static_cast<std::int32_t>(random() % vocab)};
                for (const std::int32_t token : tokens) {
                    if (!std::isfinite(values[static_cast<std::size_t>(token)]) && mode != "processed_logprobs") continue;
                    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{20}, vocab}) {
                        const bool vllm_order = random() % 4 == 0;
                        const Response response = cut_response(values, token, n, random() % 2, random() % 2, vllm_order);
                        const TokenExplanation explained = explain_position(response, 0, settings);
                        std::string context = preset + " " + mode + " trial " + std::to_string(trial) + " N " +
                                              std::to_string(n) + " token " + std::to_string(token);
                        if (std::getenv("SAMPLESCOPE_VERDICT_DEBUG")) {
                            std::ostringstream list;
                            const auto& position = response.positions.front();
                            list << (vllm_order ? " vllm-order" : "") << " value " << position.token.value.value_or(NAN) << " list";
                            for (const auto& t : position.top) list << " " << t.bytes << "=" << *t.value;
                            context += list.str();
                        }
                        Tally& tally = n >= vocab && settings.vocab_size && !vllm_order ? full : top20;
                        check_against_row(explained, trace, token, context, tally);
                    }
                }
            }
        }
        qInfo("decided: %zu of %zu step verdicts with the whole list, %zu of %zu with a top N", full.decided, full.total,
              top20.decided, top20.total);
        // With the whole list shown nearly everything is decided (ties and boundaries aside).
        QVERIFY(full.decided * 100 >= full.total * 90);
        QVERIFY(top20.decided * 100 >= top20.total * 50);
    }

    // A top-N row for the stage views: the listed ids, the rest as one token, labelled.
    void aRowForTheStageViews() {
        const Response r = one_position("b", std::nullopt, {{"a", 0.5}, {"b", 0.3}});
        const ResponseRow row = response_row(r, 0, settings_for("vllm", {{Param::Temperature, 0.7}}));
        QVERIFY(row.approximate);
        QCOMPARE(row.logits.size(), std::size_t{3});
        QCOMPARE(row.token.value(), std::size_t{1});
        QCOMPARE(row.labels[2], std::string(kRestLabel));
        QVERIFY(std::fabs(std::exp(row.logits[2]) - 0.2) < 1e-12);
        QCOMPARE(row.params.temperature, 0.7);
        // The final distribution's row has every step off, so nothing is applied twice.
        QCOMPARE(response_row(r, 0, settings_for("vllm", {{Param::Temperature, 0.7}, {Param::TopK, 3}}, "processed_logprobs"))
                     .params.top_k,
                 std::int64_t{0});
    }
};

QTEST_APPLESS_MAIN(TestResponseVerdicts)
#include "test_response_verdicts.moc"
