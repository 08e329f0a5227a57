// The pipelines of engine/pipeline*.h: the kept sets the engine study (docs/engines-study.md) states
// for its seven inputs (section 7 of the study, quoted per case below), each
// rule at its exact boundary, spec against the reference sampler on random
// rows, and the agreements the study predicts.
#include <QtTest>

#include <bit>
#include <cmath>
#include <random>

#include "engine/base/input_error.h"
#include "engine/pipelines/pipeline_diff.h"
#include "engine/pipelines/pipeline_examples.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/stages/row_state.h"
#include "engine/pipelines/pipeline_runner.h"
#include "engine/pipelines/request.h"
#include "engine/pipelines/sampler.h"
#include "engine/stages/stage_unit.h"
#include "tests/support/random_cases.h"

using namespace samplescope;

namespace {

const std::vector<std::string> kAllPresets{"spec",     "vllm",           "sglang", "hf",
                                           "llamacpp", "flashinfer-joint", "flashinfer-topk-first"};

PipelineTrace run(const Pipeline& pipeline, const std::vector<double>& logits, SamplingParams params,
                  const std::vector<std::int64_t>& prompt = {}, const std::vector<std::int64_t>& output = {}) {
    if (!params.seed) params.seed = 0;
    return trace_pipeline_once(pipeline, PipelineInput{logits, params, prompt, output});
}

PipelineTrace run(const std::string& name, const std::vector<double>& logits, const SamplingParams& params,
                  const std::vector<std::int64_t>& prompt = {}, const std::vector<std::int64_t>& output = {}) {
    return run(preset_pipeline(name), logits, params, prompt, output);
}

const PipelineExample& example(const std::string& key) {
    for (const auto& e : pipeline_examples()) {
        if (e.key == key) return e;
    }
    qFatal("no example %s", key.c_str());
}

PipelineTrace run_example(const std::string& name, const PipelineExample& e) {
    return run(name, e.logits, e.params, e.prompt_ids, e.output_ids);
}

// The report of the step of `stage` in a pipeline trace.
const StepReport& report_of(const PipelineTrace& t, Stage stage) {
    for (std::size_t i = 0; i < t.reports.size(); ++i) {
        if (t.trace.stages[i].stage == stage) return t.reports[i];
    }
    qFatal("no stage");
}

SamplingParams with(std::initializer_list<std::pair<Param, double>> values) {
    SamplingParams params;
    for (const auto& [param, value] : values) set_param(params, param, value);
    return params;
}

// A step-by-step copy of spec run by the generic runner rather than by the reference.
Pipeline generic_spec() {
    Pipeline p = preset_pipeline("spec");
    p.reference = false;
    p.name = "spec-generic";
    return p;
}

}  // namespace

class PipelinesTest : public QObject {
    Q_OBJECT
private slots:
    // ---- engine study, section 7 --------------------------------------------

    // A: logits [0,0,0,0], top_p 0.5. "HF, vLLM and llama.cpp keep 2 ... SGLang-torch keeps 3 ... FlashInfer keeps 4."
    void sectionA() {
        const auto& e = example("A");
        const std::map<std::string, IdList> expected{{"spec", {0, 1}},       {"vllm", {0, 1}},
                                                     {"hf", {0, 1}},         {"llamacpp", {0, 1}},
                                                     {"sglang", {0, 1, 2}},  {"flashinfer-joint", {0, 1, 2, 3}},
                                                     {"flashinfer-topk-first", {0, 1, 2, 3}}};
        for (const auto& [name, kept] : expected) {
            const auto t = run_example(name, e);
            QCOMPARE(t.trace.final_kept(), kept);
            // The positional stacks sort unstably: their choice among the ties is flagged.
            const bool positional = name == "vllm" || name == "hf" || name == "llamacpp" || name == "sglang";
            QCOMPARE(report_of(t, Stage::TopP).tie_at_boundary, positional);
        }
    }

    // B: q [.4,.3,.2,.1], top_k 2, top_p 0.5. "Sequential ... gives {0}"; "Joint ... gives {0,1}".
    void sectionB() {
        const auto& e = example("B");
        for (const auto& name : {"spec", "vllm", "hf", "llamacpp", "flashinfer-topk-first"}) {
            QCOMPARE(run_example(name, e).trace.final_kept(), (IdList{0}));
        }
        for (const auto& name : {"sglang", "flashinfer-joint"}) {
            QCOMPARE(run_example(name, e).trace.final_kept(), (IdList{0, 1}));
        }
    }

    // C: q [.4,.3,.2,.1], min_p 0.3, top_p 0.75. "vLLM gives {0,1}"; "HF, SGLang and llama.cpp give {0,1,2}".
    void sectionC() {
        const auto& e = example("C");
        QCOMPARE(run_example("vllm", e).trace.final_kept(), (IdList{0, 1}));
        for (const auto& name : {"hf", "sglang", "llamacpp", "spec"}) {
            QCOMPARE(run_example(name, e).trace.final_kept(), (IdList{0, 1, 2}));
        }
    }

    // D: logits [2,1,0,-1]. "T = 0.5, top_p = 0.9: HF, vLLM and SGLang give {0,1}; llama.cpp gives {0,1,2}."
    // "T = 2, min_p = 0.1: HF, vLLM and SGLang give {0,1,2,3}; llama.cpp gives {0,1,2}."
    void sectionD() {
        const auto& d1 = example("D1");
        const auto& d2 = example("D2");
        for (const auto& name : {"hf", "vllm", "sglang", "spec"}) {
            QCOMPARE(run_example(name, d1).trace.final_kept(), (IdList{0, 1}));
            QCOMPARE(run_example(name, d2).trace.final_kept(), (IdList{0, 1, 2, 3}));
        }
        QCOMPARE(run_example("llamacpp", d1).trace.final_kept(), (IdList{0, 1, 2}));
        QCOMPARE(run_example("llamacpp", d2).trace.final_kept(), (IdList{0, 1, 2}));
    }

    // E: seen once in the output, rep 2, presence 1. "z = 2: vLLM and llama.cpp give 2/2 - 1 = 0.0; SGLang's
    // accumulated path gives (2 - 1)/2 = 0.5. z = -1: vLLM and llama.cpp give -3; SGLang gives -4."
    void sectionE() {
        const auto& e = example("E");
        const std::map<std::string, std::pair<double, double>> expected{
            {"vllm", {0.0, -3.0}}, {"llamacpp", {0.0, -3.0}}, {"spec", {0.0, -3.0}}, {"sglang", {0.5, -4.0}},
            {"hf", {1.0, -2.0}}};  // HF: repetition only, generate() has no presence penalty
        for (const auto& [name, logits] : expected) {
            const auto t = run_example(name, e);
            const auto& final_logits = *t.trace.stage(Stage::Softmax).logits;
            QCOMPARE(final_logits[0], logits.first);
            QCOMPARE(final_logits[1], logits.second);
        }
        QCOMPARE(run_example("hf", e).trace.ignored_params, (std::vector<std::string>{"presence_penalty"}));
    }

    // F: a prompt-only token. "Penalised by vLLM and HF, and by llama.cpp if it is within the last 64 tokens.
    // Not penalised by current SGLang."
    void sectionF() {
        const auto& e = example("F");
        for (const auto& name : {"vllm", "hf", "llamacpp", "spec"}) {
            const auto t = run_example(name, e);
            QCOMPARE((*t.trace.stage(Stage::RepetitionPenalty).logits)[0], 0.75);
            QCOMPARE(t.trace.final_kept(), (IdList{1}));
        }
        const auto sglang = run_example("sglang", e);
        QCOMPARE((*sglang.trace.stage(Stage::RepetitionPenalty).logits)[0], 1.5);
        QCOMPARE(sglang.trace.final_kept(), (IdList{0}));

        // Beyond llama.cpp's window of 64 the prompt token is not penalised.
        std::vector<std::int64_t> long_prompt{0};
        long_prompt.insert(long_prompt.end(), 64, 3);
        QCOMPARE((*run("llamacpp", e.logits, e.params, long_prompt).trace.stage(Stage::RepetitionPenalty).logits)[0],
                 1.5);
        Pipeline wider = preset_pipeline("llamacpp");
        wider.penalty_last_n = 65;
        QCOMPARE((*run(wider, e.logits, e.params, long_prompt).trace.stage(Stage::RepetitionPenalty).logits)[0], 0.75);
        QCOMPARE((*run("vllm", e.logits, e.params, long_prompt).trace.stage(Stage::RepetitionPenalty).logits)[0], 0.75);
    }

    // G: logits [1,1,1,0], k = 2. "HF, vLLM and the FlashInfer mask path keep {0,1,2}. SGLang-torch and
    // llama.cpp keep exactly 2."
    void sectionG() {
        const auto& e = example("G");
        for (const auto& name : {"hf", "vllm", "flashinfer-joint", "flashinfer-topk-first"}) {
            QCOMPARE(run_example(name, e).trace.final_kept(), (IdList{0, 1, 2}));
        }
        for (const auto& name : {"sglang", "llamacpp"}) {
            const auto t = run_example(name, e);
            QCOMPARE(t.trace.final_kept(), (IdList{0, 1}));
            QVERIFY(report_of(t, Stage::TopK).tie_at_boundary);
        }
        const auto spec = run_example("spec", e);
        QCOMPARE(spec.trace.final_kept(), (IdList{0, 1}));
        QVERIFY(!report_of(spec, Stage::TopK).tie_at_boundary);  // the contract's own rule, not an unstable sort
    }

    // The teaching page's pair: "Order A ... Candidate set: {A, B, C, D}"; "Order B ... Candidate set: {A, B, C}".
    void orderAOrderB() {
        const auto& e = example("order");
        QCOMPARE(run_example("spec", e).trace.final_kept(), (IdList{0, 1, 2, 3}));
        QCOMPARE(run_example("llamacpp", e).trace.final_kept(), (IdList{0, 1, 2}));
        const auto custom = custom_pipeline("top_p,temperature");
        QCOMPARE(run(custom, e.logits, e.params).trace.final_kept(), (IdList{0, 1, 2}));
    }

    // Every example's two pipelines do part on it.
    void examplesDisagree() {
        for (const auto& e : pipeline_examples()) {
            const PipelineDiff diff = diff_pipelines(preset_pipeline(e.pipeline_a), preset_pipeline(e.pipeline_b),
                                                     PipelineInput{e.logits, e.params, e.prompt_ids, e.output_ids});
            QVERIFY2(diff.total_variation > 1e-3, e.key.c_str());
        }
    }

    // ---- each rule at its exact boundary ----------------------------------

    void topPBoundaries() {
        const std::vector<double> four{0, 0, 0, 0};  // q = 0.25 exactly
        const auto kept_with = [&](const char* rule, double p) {
            auto t = run(custom_pipeline(std::string("top_p:") + rule), four, with({{Param::TopP, p}}));
            return t.trace.final_kept().size();
        };
        // Contract and llama.cpp: the id whose running mass equals p is kept, nothing after it.
        QCOMPARE(kept_with("contract", 0.5), std::size_t{2});
        QCOMPARE(kept_with("contract", std::nextafter(0.5, 1.0)), std::size_t{3});
        QCOMPARE(kept_with("inclusive_cumsum", 0.5), std::size_t{2});
        QCOMPARE(kept_with("inclusive_cumsum", std::nextafter(0.5, 1.0)), std::size_t{3});
        // vLLM / HF: ascending cumsum <= 1 - p dropped; at 1 - p = 0.5 the cumsum 0.5 is dropped.
        QCOMPARE(kept_with("ascending_cumsum", 0.5), std::size_t{2});
        QCOMPARE(kept_with("ascending_cumsum", 0.75), std::size_t{3});
        QCOMPARE(kept_with("ascending_cumsum", 0.0), std::size_t{1});  // the largest always stays
        // SGLang: the exclusive prefix equal to p is kept.
        QCOMPARE(kept_with("exclusive_prefix", 0.5), std::size_t{3});
        QCOMPARE(kept_with("exclusive_prefix", std::nextafter(0.5, 0.0)), std::size_t{2});
        QCOMPARE(kept_with("exclusive_prefix", 0.0), std::size_t{1});
        // FlashInfer: ties by value share their (zero) mass above.
        QCOMPARE(kept_with("mass_above", 0.25), std::size_t{4});

        // FlashInfer at a distinct boundary: mass strictly above the tied pair equals p -> dropped together.
        const std::vector<double> row{1, 0, 0};
        const Values q = softmax_over_ids(row, IdList{0, 1, 2});
        const auto top_p_by_value = custom_pipeline("top_p:mass_above");
        auto at = run(top_p_by_value, row, with({{Param::TopP, q[0]}}));
        QCOMPARE(at.trace.final_kept(), (IdList{0}));
        QVERIFY(report_of(at, Stage::TopP).near_boundary);
        QVERIFY(!report_of(at, Stage::TopP).tie_at_boundary);
        QCOMPARE(run(top_p_by_value, row, with({{Param::TopP, std::nextafter(q[0], 1.0)}})).trace.final_kept(),
                 (IdList{0, 1, 2}));
    }

    void topKBoundaries() {
        const std::vector<double> row{1, 1, 1, 0};
        const auto kept_with = [&](const char* rule, double k) {
            return run(custom_pipeline(std::string("top_k:") + rule), row, with({{Param::TopK, k}}));
        };
        QCOMPARE(kept_with("keep_ties", 1).trace.final_kept(), (IdList{0, 1, 2}));
        QCOMPARE(kept_with("keep_ties", 3).trace.final_kept(), (IdList{0, 1, 2}));
        QCOMPARE(kept_with("by_value", 1).trace.final_kept(), (IdList{0, 1, 2}));
        QCOMPARE(kept_with("exact", 1).trace.final_kept(), (IdList{0}));
        QVERIFY(report_of(kept_with("exact", 1), Stage::TopK).tie_at_boundary);
        const auto exact3 = kept_with("exact", 3);
        QCOMPARE(exact3.trace.final_kept(), (IdList{0, 1, 2}));
        QVERIFY(!report_of(exact3, Stage::TopK).tie_at_boundary);  // 3rd and 4th differ
        QCOMPARE(kept_with("contract", 2).trace.final_kept(), (IdList{0, 1}));
        QCOMPARE(*kept_with("keep_ties", 2).trace.stage(Stage::TopK).kth_logit, 1.0);
    }

    void minPBoundaries() {
        // q = [2/Z, 1/Z, 1/Z ...]: exp(-log 2) is exactly 0.5 on this platform (checked first).
        QCOMPARE(std::exp(-std::log(2.0)), 0.5);
        const std::vector<double> row{0, -std::log(2.0), -std::log(2.0), -3};
        // Prob space: q = min_p x max q exactly is kept.
        const auto prob = custom_pipeline("min_p:prob");
        QCOMPARE(run(prob, row, with({{Param::MinP, 0.5}})).trace.final_kept(), (IdList{0, 1, 2}));
        QCOMPARE(run(prob, row, with({{Param::MinP, std::nextafter(0.5, 1.0)}})).trace.final_kept(), (IdList{0}));
        QVERIFY(report_of(run(prob, row, with({{Param::MinP, 0.5}})), Stage::MinP).near_boundary);
        // Log space (llama.cpp): l = max + log(min_p) exactly is kept.
        const auto log_space = custom_pipeline("min_p:log");
        QCOMPARE(run(log_space, row, with({{Param::MinP, 0.5}})).trace.final_kept(), (IdList{0, 1, 2}));
        QVERIFY(std::log(std::nextafter(0.5, 1.0)) > std::log(0.5));
        QCOMPARE(run(log_space, row, with({{Param::MinP, std::nextafter(0.5, 1.0)}})).trace.final_kept(),
                 (IdList{0}));
        // min_p 1 keeps every id tied with the maximum, in both spaces.
        const std::vector<double> tied{2, 2, 1};
        QCOMPARE(run(prob, tied, with({{Param::MinP, 1.0}})).trace.final_kept(), (IdList{0, 1}));
        QCOMPARE(run(log_space, tied, with({{Param::MinP, 1.0}})).trace.final_kept(), (IdList{0, 1}));
    }

    void greedyTriggers() {
        const std::vector<double> row{1, 3, 2, 3};
        const auto greedy = [&](const std::string& name, double t) {
            return run(name, row, with({{Param::Temperature, t}})).trace.greedy;
        };
        QVERIFY(greedy("spec", 0.0));
        QVERIFY(!greedy("spec", 1e-7));
        // vLLM raises 0 < T < 0.01 to 0.01 before its T < 1e-5 test: only T = 0 is greedy.
        QVERIFY(greedy("vllm", 0.0));
        QVERIFY(!greedy("vllm", 9.999e-6));
        QVERIFY(!greedy("vllm", 1e-5));
        QVERIFY(greedy("sglang", 9.99e-7));
        QVERIFY(!greedy("sglang", 1e-6));
        QVERIFY(greedy("hf", 0.0));
        QVERIFY(greedy("llamacpp", 0.0));
        // Ties go to the lowest id; only llama.cpp still draws (over one token).
        for (const auto& name : kAllPresets) {
            const auto t = run(name, row, with({{Param::Temperature, 0.0}}));
            QCOMPARE(t.trace.token, 1);
            QCOMPARE(t.trace.u.has_value(), name == "llamacpp");
            QCOMPARE(t.trace.draws_consumed, std::uint64_t{name == "llamacpp" ? 1U : 0U});
        }
        QVERIFY(report_of(run("llamacpp", row, with({{Param::Temperature, 0.0}})), Stage::Temperature)
                    .tie_at_boundary);
        // vLLM raises 0 < T < 1e-2 to 1e-2.
        const auto raised = run("vllm", row, with({{Param::Temperature, 1e-3}}));
        QCOMPARE((*raised.trace.stage(Stage::Temperature).logits)[1], 300.0);
        QCOMPARE(report_of(raised, Stage::Temperature).note, std::string("temperature raised to 0.01"));
    }

    void presencePenaltyOrder() {
        // llama.cpp subtracts c x freq + presence in one go over its window; SGLang
        // subtracts before dividing.
        const std::vector<double> row{4, 1, 0};
        const auto params = with({{Param::RepetitionPenalty, 2.0}, {Param::FrequencyPenalty, 0.5},
                                  {Param::PresencePenalty, 1.0}});
        const std::vector<std::int64_t> output{0, 0};
        QCOMPARE((*run("llamacpp", row, params, {}, output).trace.stage(Stage::Softmax).logits)[0], 4.0 / 2 - 2.0);
        QCOMPARE((*run("vllm", row, params, {}, output).trace.stage(Stage::Softmax).logits)[0], 4.0 / 2 - 2.0);
        QCOMPARE((*run("sglang", row, params, {}, output).trace.stage(Stage::Softmax).logits)[0], (4.0 - 2.0) / 2);
    }

    // A trace holds widening, the pipeline's own steps in its order, the softmax
    // and the draw (the llamacpp preset's order itself is
    // TestSamplers::llamaCppChainOrder, the one list of llama.cpp's chain).
    void stageOrderInTrace() {
        const auto t = run("llamacpp", {1, 2, 3}, SamplingParams{});
        std::vector<Stage> order;
        for (const auto& s : t.trace.stages) order.push_back(s.stage);
        std::vector<Stage> expected{Stage::Widen};
        for (const auto& step : preset_pipeline("llamacpp").steps) expected.push_back(step.stage);
        expected.push_back(Stage::Softmax);
        expected.push_back(Stage::Draw);
        QCOMPARE(order, expected);
        QCOMPARE(t.reports.size(), t.trace.stages.size());
    }

    // ---- each stage exists once ------------------------------------------------

    // A stage's descriptor is the only map from it to its code: every step
    // stage has a unit, every stage of every preset resolves to it, every rule
    // a preset names belongs to that stage, and every parameter of the table
    // is read by some unit (so ignored_params can only name real ones).
    void everyStageHasExactlyOneUnit() {
        std::size_t step_stages = 0;
        for (const auto& info : kStages) {
            if (!is_step_stage(info.stage)) continue;
            ++step_stages;
            QCOMPARE(&stage_unit(info.stage), info.unit);
            QVERIFY(stage_unit(info.stage).run != nullptr);
            QVERIFY(stage_unit(info.stage).listens != nullptr);
        }
        QCOMPARE(step_stages, kStageCount - 3);
        for (const Stage stage : {Stage::Widen, Stage::Softmax, Stage::Draw}) {
            QVERIFY(!is_step_stage(stage));
            QVERIFY_THROWS_EXCEPTION(std::logic_error, stage_unit(stage));
        }
        for (const auto& preset : kPresets) {
            const Pipeline pipeline = preset_pipeline(std::string(preset.name));
            QVERIFY(!pipeline.steps.empty());
            for (const auto& step : pipeline.steps) {
                QVERIFY(stage_unit(step.stage).run != nullptr);
                QCOMPARE(rule_info(step.rule).stage, step.stage);
            }
        }
        for (const auto& info : kParams) {
            bool read = false;
            for (const auto& stage : kStages) {
                if (!stage.unit) continue;
                for (const auto param : stage.unit->reads) read = read || param == info.param;
            }
            QVERIFY2(read, info.key.data());
        }
    }

    // A request whose stream has consumed 2^64 - 1 draws refuses the next step
    // instead of wrapping its counter to 0.
    void requestRefusesToWrapItsDrawCounter() {
        SamplingParams params;
        params.seed = 3;
        Request request(params);
        request.skip_draws(~0ULL);
        QCOMPARE(request.draws_consumed(), ~0ULL);
        QVERIFY_THROWS_EXCEPTION(InputError, request.step(std::vector<double>{1.0, 2.0}));
        QVERIFY_THROWS_EXCEPTION(InputError, request.skip_draws(1));
        QCOMPARE(request.draws_consumed(), ~0ULL);
        QVERIFY(request.output_ids().empty());
    }

    // A step given the last step's logprob memo reports the logprob a fresh step does, bit for
    // bit: after a change past the penalties (temperature) the memo's sums are used, and after a
    // change of the penalties or the row they are not. A memo whose sums are wrong for its row
    // shows in the logprob, so the test sees the memo being read.
    void logprobMemoGivesAFreshStepsLogprob() {
        std::mt19937_64 random(515);
        const auto bits = [](double x) { return std::bit_cast<std::uint64_t>(x); };
        const auto step = [](const SamplingParams& params, const testing::RandomCase& c, LogprobMemo* memo) {
            Request request(params, c.prompt, c.output);
            request.skip_draws(c.skip);
            return request.step(c.logits, memo);
        };
        int read = 0;
        int compared = 0;
        for (int row = 0; row < 1500; ++row) {
            const testing::RandomCase c = testing::random_case(random, 60);
            SamplingParams hotter = c.params;
            hotter.temperature = c.params.temperature > 0.0 ? c.params.temperature * 1.5 : 0.7;
            SamplingParams penalised = hotter;
            penalised.repetition_penalty = 1.3;
            penalised.presence_penalty = 0.4;
            testing::RandomCase other = c;
            other.logits[random() % other.logits.size()] += 0.5;
            SampleTrace first;
            try {
                first = step(c.params, c, nullptr);
                (void)step(hotter, c, nullptr);
                (void)step(penalised, c, nullptr);
                (void)step(penalised, other, nullptr);
            } catch (const InputError&) {
                continue;  // a row the contract refuses (a penalty emptied it): nothing to remember
            }
            LogprobMemo memo;
            QCOMPARE(bits(step(c.params, c, &memo).logprob), bits(first.logprob));
            QVERIFY(memo.row != nullptr);
            // The memo read: its sums made wrong for its own row change the next logprob.
            LogprobMemo wrong = memo;
            wrong.partition *= 2.0;
            if (bits(step(hotter, c, &wrong).logprob) != bits(step(hotter, c, nullptr).logprob)) ++read;
            for (const auto& [params, input] : {std::pair{hotter, c}, {penalised, c}, {penalised, other}, {c.params, c}}) {
                QCOMPARE(bits(step(params, input, &memo).logprob), bits(step(params, input, nullptr).logprob));
                ++compared;
            }
        }
        QVERIFY(compared > 4000);
        QVERIFY(read > 300);  // rows whose sums did not come from the step's own softmax
    }

    // ---- spec is the reference ----------------------------------------------

    void specMatchesReferenceOnRandomRows() {
        std::mt19937_64 random(20240611);
        const Pipeline generic = generic_spec();
        const Pipeline spec = preset_pipeline("spec");
        int greedy_rows = 0;
        for (int row = 0; row < 3000; ++row) {
            const testing::RandomCase c = testing::random_case(random, 40);
            const auto& [logits, params, prompt, output, skip] = c;

            const SampleTrace reference = trace_once(logits, params, prompt, output, skip);
            const PipelineInput input{logits, params, prompt, output};
            const PipelineTrace mine = trace_pipeline_once(generic, input, skip);
            const PipelineTrace preset = trace_pipeline_once(spec, input, skip);
            greedy_rows += reference.greedy ? 1 : 0;
            for (const SampleTrace* t : {&mine.trace, &preset.trace}) {
                QCOMPARE(t->token, reference.token);
                QCOMPARE(t->logprob, reference.logprob);
                QCOMPARE(t->u, reference.u);
                QCOMPARE(t->greedy, reference.greedy);
                QCOMPARE(t->draws_consumed, reference.draws_consumed);
                QCOMPARE(t->cumulative, reference.cumulative);
                QCOMPARE(t->stages.size(), reference.stages.size());
                for (std::size_t s = 0; s < reference.stages.size(); ++s) {
                    QCOMPARE(t->stages[s].stage, reference.stages[s].stage);
                    QCOMPARE(t->stages[s].active, reference.stages[s].active);
                    QCOMPARE(*t->stages[s].kept, *reference.stages[s].kept);
                    QCOMPARE(*t->stages[s].probs, *reference.stages[s].probs);
                }
            }
        }
        QVERIFY(greedy_rows > 100);  // both branches were exercised
    }

    // ---- agreements the study predicts -----------------------------------------

    // "Top-p keep: mass above < p" for spec (the crossing id stays), vLLM and HF
    // alike; with only temperature and top-p set they agree outside the
    // near-tie rule, and so does llama.cpp at T = 1.
    void agreeingPresetsAgreeOnRandomRows() {
        std::mt19937_64 random(7);
        int compared = 0;
        for (int row = 0; row < 2000; ++row) {
            const std::size_t vocab = 2 + random() % 60;
            std::vector<double> logits(vocab);
            for (auto& x : logits) x = std::normal_distribution<double>(0, 2)(random);
            SamplingParams params;
            params.seed = random();
            params.top_p = std::uniform_real_distribution<double>(0.05, 1)(random);
            const bool at_one = random() % 2 == 0;
            params.temperature = at_one ? 1.0 : std::uniform_real_distribution<double>(0.2, 2.5)(random);
            std::vector<std::string> names{"spec", "vllm", "hf"};
            if (at_one) names.push_back("llamacpp");
            const auto base = run("spec", logits, params);
            for (const auto& name : names) {
                const auto other = run(name, logits, params);
                if (other.trace.final_kept() != base.trace.final_kept()) {
                    QVERIFY2(base.any_near_boundary() || other.any_near_boundary(), name.c_str());
                } else {
                    QCOMPARE(other.trace.token, base.trace.token);  // same kept set, same q, same draw
                    ++compared;
                }
            }
            // With distinct logits top-k alone agrees everywhere.
            SamplingParams k_only;
            k_only.top_k = 1 + static_cast<std::int64_t>(random() % vocab);
            const auto k_base = run("spec", logits, k_only);
            for (const auto& name : kAllPresets) QCOMPARE(run(name, logits, k_only).trace.final_kept(), k_base.trace.final_kept());
        }
        QVERIFY(compared > 5000);
    }

    // ---- pipelines, custom lists and defaults ----------------------------------

    void customStageLists() {
        const auto p = custom_pipeline("penalties,top_k,top_p,min_p,temperature");
        QCOMPARE(step_list(p), std::string("repetition_penalty:context,presence_frequency:output,greedy:contract,"
                                           "top_k:contract,top_p:contract,min_p:prob,temperature:divide"));
        const auto round_trip = custom_pipeline(step_list(preset_pipeline("sglang")));
        QCOMPARE(step_list(round_trip), step_list(preset_pipeline("sglang")));
        // A llama.cpp-style temperature handles T <= 0 itself: no greedy step is added.
        QVERIFY(!custom_pipeline("top_k,temperature:llamacpp").find_step(Stage::Greedy));
        for (const auto* bad : {"", "top_q", "top_p:nope", "top_p,top_p", "top_p:joint", "penalties:context",
                                "widen", "softmax", "top_k,,top_p"}) {
            QVERIFY_THROWS_EXCEPTION(InputError, custom_pipeline(bad));
        }
        QVERIFY_THROWS_EXCEPTION(InputError, preset_pipeline("vLLM"));
        QVERIFY_THROWS_EXCEPTION(InputError, make_pipeline("vllm", "top_k"));
        // A custom pipeline without a greedy step cannot divide by T = 0.
        Pipeline no_greedy = custom_pipeline("temperature");
        no_greedy.steps.erase(no_greedy.steps.begin());
        QVERIFY_THROWS_EXCEPTION(InputError, run(no_greedy, {1, 2}, with({{Param::Temperature, 0.0}})));
        // A disabled step is recorded inactive, and its parameter reported as ignored.
        Pipeline disabled = preset_pipeline("vllm");
        for (auto& s : disabled.steps) {
            if (s.stage == Stage::TopP) s.enabled = false;
        }
        const auto t = run(disabled, {1, 2, 3}, with({{Param::TopP, 0.5}}));
        QCOMPARE(t.trace.final_kept(), (IdList{0, 1, 2}));
        QCOMPARE(t.trace.ignored_params, (std::vector<std::string>{"top_p"}));
    }

    void engineDefaults() {
        QCOMPARE(engine_defaults("hf").params.top_k, std::int64_t{50});
        const auto llama = engine_defaults("llamacpp");
        QCOMPARE(llama.params.temperature, 0.8);
        QCOMPARE(llama.params.top_k, std::int64_t{40});
        QCOMPARE(llama.params.top_p, 0.95);
        QCOMPARE(llama.params.min_p, 0.05);
        QCOMPARE(llama.penalty_last_n, std::int64_t{64});
        QCOMPARE(engine_defaults("vllm").params, SamplingParams{});
        // Never applied silently: a preset run with the contract's defaults changes nothing.
        QCOMPARE(run("hf", {1, 2, 3}, SamplingParams{}).trace.final_kept(), (IdList{0, 1, 2}));
    }

    void badInputIsRefused() {
        for (const auto& name : kAllPresets) {
            QVERIFY_THROWS_EXCEPTION(InputError, run(name, {}, SamplingParams{}));
            QVERIFY_THROWS_EXCEPTION(InputError, run(name, {1, NAN}, SamplingParams{}));
            QVERIFY_THROWS_EXCEPTION(InputError, run(name, {-INFINITY, -INFINITY}, SamplingParams{}));
            QVERIFY_THROWS_EXCEPTION(InputError, run(name, {1, 2}, SamplingParams{}, {5}));
            SamplingParams bad;
            bad.top_p = 1.5;
            QVERIFY_THROWS_EXCEPTION(InputError, run(name, {1, 2}, bad));
        }
        Pipeline negative = preset_pipeline("llamacpp");
        negative.penalty_last_n = -1;
        QVERIFY_THROWS_EXCEPTION(InputError, run(negative, {1, 2}, SamplingParams{}));
    }
};

QTEST_APPLESS_MAIN(PipelinesTest)
#include "test_pipelines.moc"
