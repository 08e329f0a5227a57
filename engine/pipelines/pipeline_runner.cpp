#include "engine/pipelines/pipeline_runner.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "engine/base/input_error.h"
#include "engine/core/inverse_cdf.h"
#include "engine/core/row_checks.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/stages/row_state.h"
#include "engine/stages/stage_unit.h"

namespace samplescope {

namespace {

// A pipeline run: `out` is null for the lean path, which records nothing.
class Runner {
public:
    Runner(const Pipeline& pipeline, const PipelineInput& input, PipelineTrace* out, const HistoryCounts* history,
           Arithmetic arithmetic = Arithmetic::F64)
        : pipeline_(pipeline), out_(out),
          row_(pipeline, (check(pipeline, input), input), out != nullptr, history, arithmetic) {}

    // After run(): the final kept set and its q, and whether any step had to
    // break a tie at its boundary (recorded in lean runs too).
    IdList final_kept() const {
        return row_.greedy_token >= 0 && !row_.draw_after_greedy ? IdList{row_.greedy_token} : row_.kept();
    }
    Values final_probs() {
        return row_.greedy_token >= 0 && !row_.draw_after_greedy ? Values{1.0} : row_.kept_probs();
    }
    bool any_tie() const { return any_tie_; }
    const std::optional<MirostatStep>& mirostat() const { return mirostat_; }
    // The token's logprob costs a softmax over all V of the penalised row; a
    // caller that wants only the distribution skips it (the result's is 0).
    void skip_logprob() { logprob_ = false; }

    SampleResult run(Pcg32& rng) {
        record(Stage::Widen, true, StepReport{}, StageTrace{});
        bool truncation_before = false;
        for (const auto& step : pipeline_.steps) {
            StepReport report;
            report.stage = step.stage;
            report.rule = step.rule;
            report.joint = step.joint;
            if (!step.enabled) {
                report.note = "disabled";
                record(step.stage, false, std::move(report), StageTrace{});
                continue;
            }
            if (row_.greedy_token >= 0 && !row_.draw_after_greedy) {
                report.note = "skipped: greedy";
                record(step.stage, false, std::move(report), StageTrace{});
                continue;
            }
            if (mirostat_chain_ && !in_mirostat_chain(step.stage)) {
                report.note = "skipped: with mirostat the chain is logit bias, temperature, mirostat";
                record(step.stage, false, std::move(report), StageTrace{});
                continue;
            }
            row_.begin_step(step, truncation_before);
            truncation_before = stage_info(step.stage).truncates;
            StageTrace shown;
            const bool active = stage_unit(step.stage).run(row_, step, report, shown);
            record(step.stage, active, std::move(report), std::move(shown));
        }
        SampleResult result = finish(rng);
        if (out_) out_->trace.ignored_params = ignored_params();
        return result;
    }

private:
    static int check(const Pipeline& pipeline, const PipelineInput& input) {
        check_logits(input.logits);
        validate(input.params);
        check_pipeline(pipeline);
        return 0;
    }

    SampleResult finish(Pcg32& rng) {
        SampleResult result;
        const std::int32_t greedy = row_.greedy_token;
        if (greedy >= 0 && !row_.draw_after_greedy) {
            // The final stages repeat the greedy set, inactive.
            result.token = greedy;
            result.logprob = logprob_ ? row_.contract_logprob(greedy) : 0.0;
            result.kept_count = 1;
            if (out_) {
                StageTrace shown;
                shown.kept = std::make_shared<const IdList>(IdList{greedy});
                shown.probs = std::make_shared<const Values>(Values{1.0});
                record(Stage::Softmax, false, StepReport{}, shown);
                record(Stage::Draw, false, StepReport{}, shown);
                SampleTrace& trace = out_->trace;
                trace.token = greedy;
                trace.logprob = result.logprob;
                trace.greedy = true;
                trace.u.reset();
                trace.cumulative = {1.0};
            }
            return result;
        }
        record(Stage::Softmax, true, StepReport{}, StageTrace{});
        record(Stage::Draw, true, StepReport{}, StageTrace{});
        const double u = rng.uniform_f64();
        Values cumulative;
        bool fell_back = false;
        result.token = inverse_cdf_draw(row_.kept(), row_.kept_probs(), u, out_ ? &cumulative : nullptr, fell_back);
        result.logprob = logprob_ ? row_.contract_logprob(result.token) : 0.0;
        result.u = u;
        result.kept_count = row_.kept().size();
        if (row_.mirostat_ran) {
            // mu - eta (surprise - tau), the surprise of the drawn token's final q in bits.
            const IdList& kept = row_.kept();
            const auto at = std::lower_bound(kept.begin(), kept.end(), result.token) - kept.begin();
            MirostatStep m;
            m.version = row_.params.mirostat;
            m.mu_before = row_.mirostat_mu;
            m.surprise = row_.r(-std::log2(row_.kept_probs()[static_cast<std::size_t>(at)]));
            m.mu_after = row_.r(m.mu_before - row_.r(row_.params.mirostat_eta * row_.r(m.surprise - row_.params.mirostat_tau)));
            mirostat_ = m;
            if (out_) out_->mirostat = m;
        }
        if (out_) {
            SampleTrace& trace = out_->trace;
            trace.token = result.token;
            trace.logprob = result.logprob;
            trace.greedy = greedy >= 0;
            trace.u = u;
            trace.cumulative = std::move(cumulative);
            trace.fell_back = fell_back;
        }
        return result;
    }

    // The parameters set away from their default that no enabled step of this
    // pipeline reads: the table's in its order, then the lists.
    std::vector<std::string> ignored_params() const {
        std::vector<std::string> ignored;
        // A step counts when it is enabled and, in llama.cpp's mirostat chain, one of that chain's.
        const auto runs = [this](const PipelineStep& step) {
            return step.enabled && (!mirostat_chain_ || in_mirostat_chain(step.stage));
        };
        const auto list_read = [&](Stage stage) {
            bool read = false;
            for (const auto& step : pipeline_.steps) read = read || (runs(step) && step.stage == stage);
            return read;
        };
        for (const auto& info : kParams) {
            if (param_is_default(row_.params, info.param)) continue;
            bool read = false;
            for (const auto& step : pipeline_.steps) {
                if (!runs(step)) continue;
                const StageUnit& unit = stage_unit(step.stage);
                for (const auto param : unit.reads) {
                    read = read || (param == info.param && unit.listens(pipeline_, step) &&
                                    (!unit.rule_reads || unit.rule_reads(step.rule, param)));
                }
            }
            // llama.cpp's mirostat chain builds a plain temperature, without the dynamic range.
            if (mirostat_chain_ && (info.param == Param::DynatempRange || info.param == Param::DynatempExponent)) {
                read = false;
            }
            if (!read) ignored.emplace_back(info.key);
        }
        // The lists after the table, as `params` prints them: each is read by its own stage's step.
        for (const auto& list : kListParams) {
            if (list.set(row_.params) && !list_read(list_param_stage(list))) ignored.emplace_back(list.key);
        }
        return ignored;
    }

    void record(Stage stage, bool active, StepReport report, StageTrace shown) {
        any_tie_ = any_tie_ || report.tie_at_boundary;
        if (!out_) return;
        report.stage = stage;
        shown.stage = stage;
        shown.active = active;
        row_.snapshot(shown);
        out_->trace.stages.push_back(std::move(shown));
        out_->reports.push_back(std::move(report));
    }

    const Pipeline& pipeline_;
    PipelineTrace* out_;
    RowState row_;
    bool mirostat_chain_ = mirostat_chain(pipeline_, row_.params);
    bool any_tie_ = false;
    bool logprob_ = true;
    std::optional<MirostatStep> mirostat_;
};

// The ids of `kept` with q > 0, with their q.
void nonzero(const IdList& kept, const Values& probs, IdList& ids, Values& q) {
    for (std::size_t i = 0; i < kept.size(); ++i) {
        if (probs[i] > 0.0) {
            ids.push_back(kept[i]);
            q.push_back(probs[i]);
        }
    }
}

// Repeats a preset's step in float32 (Arithmetic::F32) and reports it where it
// decides differently from the f64 model `model`.
std::optional<EngineF32> engine_f32(const Pipeline& pipeline, const PipelineInput& input, const Pcg32& rng,
                                    const HistoryCounts* history, const PipelineTrace& model) {
    Values logits(input.logits.size());
    for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = in_arithmetic(Arithmetic::F32, input.logits[i]);
    PipelineInput rounded = input;
    rounded.logits = logits;
    // A value valid in f64 that float32 cannot hold (beyond FLT_MAX, or below
    // its smallest subnormal) is said as such, quoting the value given, rather
    // than only as the refusal of the inf or 0 it becomes.
    EngineF32 f32;
    std::string lost_key;
    std::string lost;
    for (const auto& info : kParams) {
        if (info.integer()) continue;
        const double given = param_value(input.params, info.param);
        const double held = in_arithmetic(Arithmetic::F32, given);
        const bool out_of_range = given != 0.0 && std::isfinite(given) && (std::isinf(held) || held == 0.0);
        if (out_of_range && lost.empty()) {
            lost_key = std::string(info.key);
            lost = lost_key + " = " + format_number(given) + " becomes " + format_number(held) + " in float32 (" +
                   (std::isinf(held) ? "beyond its largest value, 3.4028235e+38"
                                     : "below its smallest positive value, 1.4e-45") +
                   ")";
        }
        try {
            set_param(rounded.params, info.param, held);
        } catch (const InputError& e) {
            f32.error = out_of_range ? lost + ", which it refuses: " + e.what() : e.what();
            f32.note = "in float32 the engine would fail here: " + f32.error;
            return f32;
        }
    }
    IdList model_ids;
    Values model_q;
    nonzero(model.trace.final_kept(), model.trace.final_probs(), model_ids, model_q);
    IdList f32_ids;
    Values f32_q;
    try {
        Runner runner(pipeline, rounded, nullptr, history, Arithmetic::F32);
        Pcg32 local = rng;
        runner.run(local);
        f32.kept = runner.final_kept();
        f32.probs = runner.final_probs();
        nonzero(f32.kept, f32.probs, f32_ids, f32_q);
        f32.tie_at_boundary = runner.any_tie();
    } catch (const InputError& e) {
        f32.error = !lost.empty() && e.field() == lost_key ? lost + ", which it refuses: " + e.what() : e.what();
        f32.note = "in float32 the engine would fail here: " + f32.error;
        return f32;
    }
    for (std::size_t i = 0, j = 0; i < model_ids.size() && j < f32_ids.size();) {
        if (model_ids[i] < f32_ids[j]) {
            ++i;
        } else if (f32_ids[j] < model_ids[i]) {
            ++j;
        } else {
            f32.max_prob_difference = std::max(f32.max_prob_difference, std::fabs(model_q[i] - f32_q[j]));
            ++i;
            ++j;
        }
    }
    if (f32_ids != model_ids) {
        const auto ids = [](std::size_t n) { return std::to_string(n) + (n == 1 ? " id" : " ids"); };
        f32.note = "in float32 the engine can draw " + ids(f32_ids.size()) + " (q > 0), the f64 model " +
                   ids(model_ids.size());
    } else if (f32.max_prob_difference > kEngineF32Tolerance) {
        f32.note = "in float32 the engine's probabilities differ by up to " + std::to_string(f32.max_prob_difference);
    } else if (f32.tie_at_boundary && !model.any_tie()) {
        f32.note = "the engine's float32 values tie at a boundary; its sort decides which stays";
    } else {
        return std::nullopt;
    }
    if (!lost.empty()) f32.note += " (" + lost + ")";
    return f32;
}

// (1 - p) q_without + p q_with over the union of the two kept sets, ascending.
void mix_xtc(double p, const IdList& kept_without, const Values& probs_without, const IdList& kept_with,
             const Values& probs_with, IdList& ids, Values& probs) {
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < kept_without.size() || j < kept_with.size()) {
        const bool take_without = j == kept_with.size() || (i < kept_without.size() && kept_without[i] <= kept_with[j]);
        const bool take_with = i == kept_without.size() || (j < kept_with.size() && kept_with[j] <= kept_without[i]);
        double q = 0.0;
        std::int32_t id = 0;
        if (take_without) {
            id = kept_without[i];
            q += (1.0 - p) * probs_without[i++];
        }
        if (take_with) {
            id = kept_with[j];
            q += p * probs_with[j++];
        }
        ids.push_back(id);
        probs.push_back(q);
    }
}

// Where an XTC step's coin could change the kept set: the final
// distribution with and without the exclusion (the step run again with a coin
// that fires and one that does not) and their mixture.
std::optional<XtcMixture> xtc_mixture(const Pipeline& pipeline, const PipelineInput& input, const Pcg32& rng,
                                      const HistoryCounts* history, const PipelineTrace& traced) {
    const StageTrace* stage = traced.trace.find_stage(Stage::Xtc);
    if (!stage || !stage->active || !stage->xtc_removed || stage->xtc_removed->empty()) return std::nullopt;
    XtcMixture m;
    m.probability = input.params.xtc_probability;
    m.coin = stage->xtc_coin.value_or(0.0);
    m.fired = stage->xtc_fired.value_or(false);
    m.removed = *stage->xtc_removed;
    const auto branch = [&](double coin, IdList& kept, Values& probs) {
        PipelineInput forced = input;
        forced.xtc_coin = coin;
        Runner runner(pipeline, forced, nullptr, history);
        Pcg32 local = rng;
        runner.run(local);
        kept = runner.final_kept();
        probs = runner.final_probs();
    };
    branch(0.0, m.kept_with, m.probs_with);        // 0 < p: fires
    branch(1.0, m.kept_without, m.probs_without);  // 1 >= p: does not
    mix_xtc(m.probability, m.kept_without, m.probs_without, m.kept_with, m.probs_with, m.ids, m.probs);
    return m;
}

PipelineTrace start_trace(const Pipeline& pipeline, const PipelineInput& input, std::uint64_t seed) {
    PipelineTrace out;
    out.pipeline = pipeline.name;
    out.trace.vocab_size = input.logits.size();
    out.trace.params = input.params;
    out.trace.params.seed = seed;
    out.trace.seed = seed;
    out.trace.stages.reserve(pipeline.steps.size() + 3);
    out.reports.reserve(pipeline.steps.size() + 3);
    return out;
}

// The history's counts: `history` when the caller counted them, else the
// input's checks (the row, the parameters, the pipeline: so a bad one is
// reported before a bad history id) and the counts, held in `counted`.
const HistoryCounts* checked_history(const Pipeline& pipeline, const PipelineInput& input, const HistoryCounts* history,
                                     std::optional<HistoryCounts>& counted) {
    if (history) return history;
    check_logits(input.logits);
    validate(input.params);
    check_pipeline(pipeline);
    return &counted.emplace(count_history(input.prompt_ids, input.output_ids, input.logits.size()));
}

}  // namespace

PipelineTrace run_pipeline(const Pipeline& pipeline, const PipelineInput& given, Pcg32& rng, std::uint64_t seed,
                           std::uint64_t draws_before, const HistoryCounts* history) {
    PipelineInput input = given;
    if (!input.xtc_coin) input.xtc_coin = xtc_coin(seed, draws_before);
    // Counted once for the model, its float32 run and XTC's outcomes.
    std::optional<HistoryCounts> counted;
    history = checked_history(pipeline, input, history, counted);
    PipelineTrace out = start_trace(pipeline, input, seed);
    Pcg32 local = rng;  // committed only when the step succeeds
    Runner(pipeline, input, &out, history).run(local);
    out.xtc = xtc_mixture(pipeline, input, rng, history, out);
    if (!pipeline.reference) {
        out.engine_f32 = engine_f32(pipeline, input, rng, history, out);
        out.engine_refusals = engine_refusals(pipeline.name, input.params);
        out.engine_logprobs = engine_logprobs(pipeline.name, out.trace, input.logits);
    }
    rng = local;
    out.trace.draws_before = draws_before;
    out.trace.draws_consumed = draws_before + (out.trace.u ? 1 : 0);
    return out;
}

SampleResult sample_pipeline(const Pipeline& pipeline, const PipelineInput& input, Pcg32& rng,
                             const HistoryCounts* history) {
    Pcg32 local = rng;
    const SampleResult result = Runner(pipeline, input, nullptr, history).run(local);
    rng = local;
    return result;
}

ExactDistribution exact_distribution(const Pipeline& pipeline, const PipelineInput& input,
                                     const HistoryCounts* history) {
    std::optional<HistoryCounts> counted;
    history = checked_history(pipeline, input, history, counted);
    // The draw's uniform is not wanted: a scratch stream takes it.
    const auto run = [&](double coin, IdList& ids, Values& probs) {
        PipelineInput forced = input;
        forced.xtc_coin = coin;
        Runner runner(pipeline, forced, nullptr, history);
        runner.skip_logprob();
        Pcg32 scratch = stream(0, kSampleLabel);
        const bool greedy = !runner.run(scratch).u;
        ids = runner.final_kept();
        probs = runner.final_probs();
        return greedy;
    };
    ExactDistribution out;
    out.greedy = run(1.0, out.ids, out.probs);  // a coin of 1 never fires
    const PipelineStep* xtc = pipeline.find_step(Stage::Xtc);
    if (out.greedy || !xtc || !xtc->enabled || !(input.params.xtc_probability > 0.0)) return out;
    IdList with_ids;
    Values with_probs;
    run(0.0, with_ids, with_probs);
    if (with_ids == out.ids) return out;  // nothing to remove: the coin changes nothing
    IdList ids;
    Values probs;
    mix_xtc(input.params.xtc_probability, out.ids, out.probs, with_ids, with_probs, ids, probs);
    out.ids = std::move(ids);
    out.probs = std::move(probs);
    return out;
}

PipelineTrace trace_pipeline_once(const Pipeline& pipeline, const PipelineInput& input, std::uint64_t skip_draws) {
    const std::uint64_t seed = seed_or_chosen(input.params.seed);
    Pcg32 rng = stream_after(seed, skip_draws);
    return run_pipeline(pipeline, input, rng, seed, skip_draws);
}

}  // namespace samplescope
