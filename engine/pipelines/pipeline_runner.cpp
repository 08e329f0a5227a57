#include "engine/pipelines/pipeline_runner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "engine/core/element_math.h"
#include "engine/core/input_error.h"
#include "engine/pipelines/pipeline_rules.h"
#include "engine/pipelines/sampler.h"
#include "engine/core/token_history.h"

namespace samplescope {

namespace {

// The ids each penalty rule covers, with counts where the rule uses them.
struct PenaltyScope {
    std::vector<std::int32_t> ids;                                   // distinct, ascending
    std::vector<std::pair<std::int32_t, std::uint32_t>> counts;     // (id, count > 0), ascending
};

PenaltyScope count_ids(std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
    std::map<std::int32_t, std::uint32_t> counts;
    for (const auto id : a) ++counts[static_cast<std::int32_t>(id)];
    for (const auto id : b) ++counts[static_cast<std::int32_t>(id)];
    PenaltyScope scope;
    for (const auto& [id, count] : counts) {
        scope.ids.push_back(id);
        scope.counts.emplace_back(id, count);
    }
    return scope;
}

// llama.cpp's ring buffer: the last N accepted tokens, the prompt's tail first.
PenaltyScope last_n_scope(const PipelineInput& input, std::int64_t last_n) {
    const auto n = static_cast<std::size_t>(last_n);
    const std::size_t from_output = std::min(n, input.output_ids.size());
    const std::size_t from_prompt = std::min(n - from_output, input.prompt_ids.size());
    return count_ids(input.prompt_ids.last(from_prompt), input.output_ids.last(from_output));
}

class Runner {
public:
    Runner(const Pipeline& pipeline, const PipelineInput& input, PipelineTrace& out)
        : pipeline_(pipeline), input_(input), params_(input.params), out_(out) {}

    void run(Pcg32& rng) {
        check_logits(input_.logits);
        validate(params_);
        check_pipeline(pipeline_);
        const std::size_t vocab = input_.logits.size();
        history_ = count_history(input_.prompt_ids, input_.output_ids, vocab);

        logits_.assign(input_.logits.begin(), input_.logits.end());
        penalised_ = logits_;
        for (std::size_t i = 0; i < vocab; ++i) {
            if (std::isfinite(logits_[i])) kept_.push_back(static_cast<std::int32_t>(i));
        }
        record(Stage::Widen, true, StepReport{});

        bool truncation_before = false;
        for (const auto& step : pipeline_.steps) {
            StepReport report;
            report.stage = step.stage;
            report.rule = step.rule;
            report.joint = step.joint;
            if (!step.enabled) {
                report.note = "disabled";
                record(step.stage, false, report);
                continue;
            }
            if (greedy_token_ >= 0 && !draw_after_greedy_) {
                report.note = "skipped: greedy";
                record(step.stage, false, report);
                continue;
            }
            const bool truncates = stage_info(step.stage).truncates;
            if (truncates && !(step.joint && truncation_before)) group_input_ = kept_;
            truncation_before = truncates;
            run_step(step, report);
        }
        finish(rng);
        out_.ignored_params = ignored_params();
    }

private:
    void run_step(const PipelineStep& step, StepReport& report) {
        switch (step.stage) {
            case Stage::RepetitionPenalty: return repetition(step.rule, report);
            case Stage::PresenceFrequency: return presence_frequency(step.rule, report);
            case Stage::Greedy: return greedy(step.rule, report);
            case Stage::Temperature: return temperature(step.rule, report);
            case Stage::TopK:
            case Stage::TopP:
            case Stage::MinP: return truncate(step, report);
            default: return;
        }
    }

    // ---- penalties ----------------------------------------------------

    void repetition(Rule rule, StepReport& report) {
        const bool active = uses_repetition_penalty(params_) && penalty_window_open(rule);
        if (active) {
            std::vector<std::int32_t> ids;
            if (rule == Rule::RepetitionContext) {
                ids = history_.context_ids;
            } else if (rule == Rule::RepetitionOutputOnly) {
                for (const auto& [id, count] : history_.output_counts) ids.push_back(id);
            } else {
                ids = last_n_scope(input_, pipeline_.penalty_last_n).ids;
            }
            const double r = params_.repetition_penalty;
            for (const auto id : ids) {
                // One sign test everywhere: vLLM and the contract divide l > 0,
                // HF and SGLang multiply l < 0, llama.cpp multiplies l <= 0; at
                // l = 0 every form gives 0.
                logits_[id] = apply_repetition_penalty(logits_[id], r);
                penalised_[id] = apply_repetition_penalty(penalised_[id], r);
            }
            drop_minus_infinity("repetition_penalty");
        }
        record(Stage::RepetitionPenalty, active, report);
    }

    void presence_frequency(Rule rule, StepReport& report) {
        const bool active = uses_presence_frequency(params_) && penalty_window_open(rule);
        if (active) {
            const double f = params_.frequency_penalty;
            const double pr = params_.presence_penalty;
            if (rule == Rule::PresenceFrequencyOutput) {
                for (const auto& [id, count] : history_.output_counts) {
                    logits_[id] = apply_presence_frequency(logits_[id], count, f, pr);
                    penalised_[id] = apply_presence_frequency(penalised_[id], count, f, pr);
                }
            } else {
                // llama.cpp: logit -= c * freq + (c > 0) * present, in one subtraction.
                for (const auto& [id, count] : last_n_scope(input_, pipeline_.penalty_last_n).counts) {
                    const double amount = static_cast<double>(count) * f + pr;
                    logits_[id] -= amount;
                    penalised_[id] -= amount;
                }
            }
            drop_minus_infinity("presence/frequency penalty");
        }
        record(Stage::PresenceFrequency, active, report);
    }

    bool penalty_window_open(Rule rule) const {
        const bool windowed = rule == Rule::RepetitionLastN || rule == Rule::PresenceFrequencyLastN;
        return !windowed || pipeline_.penalty_last_n > 0;
    }

    // As the contract: refuse +inf or NaN, drop ids pushed to -inf.
    void drop_minus_infinity(const char* penalty) {
        IdList still_finite;
        for (const auto id : kept_) {
            const double x = logits_[id];
            if (std::isnan(x) || x == std::numeric_limits<double>::infinity()) {
                throw InputError(penalty, std::string(penalty) + " makes the logit of id " + std::to_string(id) +
                                              " " + format_number(x) + "; use a penalty closer to its off value (1 for repetition, 0 for presence and frequency)");
            }
            if (std::isfinite(x)) still_finite.push_back(id);
        }
        if (still_finite.empty()) {
            throw InputError(penalty, std::string(penalty) + " pushes every logit to -inf: nothing can be sampled");
        }
        kept_ = std::move(still_finite);
    }

    // ---- greedy and temperature --------------------------------------------

    void greedy(Rule rule, StepReport& report) {
        const double t = params_.temperature;
        bool triggered = false;
        switch (rule) {
            case Rule::GreedyVllm: triggered = t < 1e-5; break;
            case Rule::GreedySglang:
                triggered = t < 1e-6;
                if (triggered) report.note = "T < 1e-6 is T = 1, top_k = 1; a batch of this row alone takes argmax";
                break;
            case Rule::GreedyHf:
                triggered = t == 0.0;
                if (triggered) report.note = "T = 0 read as do_sample=False";
                break;
            default: triggered = is_greedy(params_); break;
        }
        if (!triggered) {
            record(Stage::Greedy, false, report);
            return;
        }
        // As the contract's trace: the greedy stage shows the one token; the
        // skipped stages after it keep showing the set greedy chose from.
        greedy_token_ = argmax_lowest_id();
        IdList before{greedy_token_};
        std::swap(before, kept_);
        record(Stage::Greedy, true, report);
        kept_ = std::move(before);
    }

    std::int32_t argmax_lowest_id() const {
        std::int32_t best = kept_.front();
        for (const auto id : kept_) {
            if (ranks_before(logits_[id], id, logits_[best], best)) best = id;
        }
        return best;
    }

    void temperature(Rule rule, StepReport& report) {
        double t = params_.temperature;
        if (rule == Rule::TemperatureLlamaCpp && t <= 0.0) {
            // llama_sampler_temp_impl: only the first maximal logit in array
            // order survives (the candidates are sorted by then, unstably).
            greedy_token_ = argmax_lowest_id();
            draw_after_greedy_ = true;
            std::size_t maxima = 0;
            for (const auto id : kept_) maxima += logits_[id] == logits_[greedy_token_] ? 1U : 0U;
            report.tie_at_boundary = maxima > 1;
            report.note = "T <= 0 keeps the maximum; the draw still runs over it";
            kept_ = {greedy_token_};
            record(Stage::Temperature, true, report);
            return;
        }
        if (rule == Rule::TemperatureVllm && t >= 1e-5 && t < 1e-2) {
            t = 1e-2;
            report.note = "temperature raised to 0.01";
        }
        const bool active = t != 1.0;
        if (active) {
            if (t == 0.0) {
                throw InputError("temperature", "temperature 0 needs a greedy step before the temperature step in "
                                                "pipeline " + pipeline_.name);
            }
            scale_kept_by_temperature(logits_, kept_, t);
        }
        record(Stage::Temperature, active, report);
    }

    // ---- truncation -----------------------------------------------------

    void truncate(const PipelineStep& step, StepReport& report) {
        const bool active = truncation_active(step.rule, params_, input_.logits.size());
        TruncationOutcome outcome;
        if (active) {
            outcome = apply_truncation(step.rule, TruncationView{logits_, group_input_, params_});
            if (step.joint) {
                // A joint filter decides on the same ids as the step before;
                // the result is what both keep.
                IdList both;
                std::set_intersection(kept_.begin(), kept_.end(), outcome.kept.begin(), outcome.kept.end(),
                                      std::back_inserter(both));
                kept_ = std::move(both);
            } else {
                kept_ = outcome.kept;
            }
            report.tie_at_boundary = outcome.tie_at_boundary;
            report.near_boundary = outcome.near_boundary;
            if (!outcome.note.empty()) report.note = outcome.note;
        }
        record(step.stage, active, report, active ? &outcome : nullptr);
    }

    // ---- final softmax and draw ----------------------------------------------

    void finish(Pcg32& rng) {
        SampleTrace& trace = out_.trace;
        const double logprob = contract_logprob_of(greedy_token_ >= 0 ? greedy_token_ : -1);
        if (greedy_token_ >= 0 && !draw_after_greedy_) {
            // As the contract: the final stages repeat the greedy set, inactive.
            kept_ = {greedy_token_};
            record(Stage::Softmax, false, StepReport{});
            record(Stage::Draw, false, StepReport{});
            trace.token = greedy_token_;
            trace.logprob = logprob;
            trace.greedy = true;
            trace.u.reset();
            trace.cumulative = {1.0};
            return;
        }
        record(Stage::Softmax, true, StepReport{});
        record(Stage::Draw, true, StepReport{});
        const Values& probs = *trace.stages.back().probs;
        const double u = rng.uniform_f64();
        Values cumulative;
        bool fell_back = false;
        trace.token = inverse_cdf_draw(kept_, probs, u, &cumulative, fell_back);
        trace.logprob = contract_logprob_of(trace.token);
        trace.greedy = greedy_token_ >= 0;
        trace.u = u;
        trace.cumulative = std::move(cumulative);
        trace.fell_back = fell_back;
    }

    // The contract's reported logprob: log_softmax over all V ids of the logits
    // with the pipeline's penalties applied and nothing else.
    double contract_logprob_of(std::int32_t token) const {
        if (token < 0) return 0.0;
        double max_logit = -std::numeric_limits<double>::infinity();
        for (const double x : penalised_) {
            if (std::isfinite(x)) max_logit = std::max(max_logit, x);
        }
        double partition = 0.0;
        for (const double x : penalised_) {
            if (std::isfinite(x)) partition += softmax_numerator(x, max_logit);
        }
        return log_softmax_at(penalised_[token], max_logit, partition);
    }

    std::vector<std::string> ignored_params() const {
        const auto reads = [this](Stage stage) {
            const auto* step = pipeline_.find_step(stage);
            return step && step->enabled;
        };
        std::vector<std::string> ignored;
        const auto note = [&](Param param, bool read) {
            const double value = param_value(params_, param);
            if (value != param_info(param).default_value && !read) ignored.emplace_back(param_info(param).key);
        };
        const auto* rep = pipeline_.find_step(Stage::RepetitionPenalty);
        const auto* pf = pipeline_.find_step(Stage::PresenceFrequency);
        note(Param::RepetitionPenalty, reads(Stage::RepetitionPenalty) && penalty_window_open(rep->rule));
        note(Param::PresencePenalty, reads(Stage::PresenceFrequency) && penalty_window_open(pf->rule));
        note(Param::FrequencyPenalty, reads(Stage::PresenceFrequency) && penalty_window_open(pf->rule));
        note(Param::Temperature, reads(Stage::Temperature) || reads(Stage::Greedy));
        note(Param::TopK, reads(Stage::TopK));
        note(Param::TopP, reads(Stage::TopP));
        note(Param::MinP, reads(Stage::MinP));
        return ignored;
    }

    // ---- recording --------------------------------------------------------

    void record(Stage stage, bool active, StepReport report, const TruncationOutcome* outcome = nullptr) {
        report.stage = stage;
        StageTrace st;
        st.stage = stage;
        st.active = active;
        if (!logits_snapshot_ || *logits_snapshot_ != logits_) logits_snapshot_ = std::make_shared<const Values>(logits_);
        if (!kept_snapshot_ || *kept_snapshot_ != kept_) {
            kept_snapshot_ = std::make_shared<const IdList>(kept_);
            probs_snapshot_.reset();
        }
        if (!probs_snapshot_ || probs_logits_ != logits_snapshot_) {
            probs_snapshot_ = std::make_shared<const Values>(softmax_over_ids(logits_, kept_));
            probs_logits_ = logits_snapshot_;
        }
        st.logits = logits_snapshot_;
        st.kept = kept_snapshot_;
        st.probs = probs_snapshot_;
        if (outcome) {
            st.kth_logit = outcome->kth_logit;
            st.crossing_rank = outcome->crossing_rank;
            st.crossing_id = outcome->crossing_id;
            st.crossing_mass = outcome->crossing_mass;
            st.max_prob = outcome->max_prob;
            st.prob_floor = outcome->prob_floor;
            st.walk_ids = outcome->walk_ids;
            st.walk_mass = outcome->walk_mass;
        }
        out_.trace.stages.push_back(std::move(st));
        out_.reports.push_back(std::move(report));
    }

    const Pipeline& pipeline_;
    const PipelineInput& input_;
    const SamplingParams& params_;
    PipelineTrace& out_;
    HistoryCounts history_;

    Values logits_;
    Values penalised_;  // the input with the penalties applied and nothing else (the logprob's logits)
    IdList kept_;
    IdList group_input_;  // the ids the current group of joint truncation steps decides on
    std::int32_t greedy_token_ = -1;
    bool draw_after_greedy_ = false;

    std::shared_ptr<const Values> logits_snapshot_;
    std::shared_ptr<const IdList> kept_snapshot_;
    std::shared_ptr<const Values> probs_snapshot_;
    std::shared_ptr<const Values> probs_logits_;
};

PipelineTrace start_trace(const Pipeline& pipeline, const PipelineInput& input, std::uint64_t seed) {
    PipelineTrace out;
    out.pipeline = pipeline.name;
    out.trace.vocab_size = input.logits.size();
    out.trace.params = input.params;
    out.trace.params.seed = seed;
    out.trace.seed = seed;
    return out;
}

}  // namespace

PipelineTrace run_pipeline(const Pipeline& pipeline, const PipelineInput& input, Pcg32& rng, std::uint64_t seed,
                           std::uint64_t draws_before) {
    PipelineTrace out = start_trace(pipeline, input, seed);
    Pcg32 generic_rng = rng;
    Runner(pipeline, input, out).run(generic_rng);
    if (pipeline.reference) {
        // The contract's own sampler gives the trace; the generic run above,
        // which follows the same rules, gives only the per-step reports
        // (near-boundary badges). tests/test_pipelines.cpp checks both agree.
        const HistoryCounts history = count_history(input.prompt_ids, input.output_ids, input.logits.size());
        out.trace = trace_step(StepInput{input.logits, input.params, history}, rng, seed, draws_before);
        return out;
    }
    rng = generic_rng;
    out.trace.draws_before = draws_before;
    out.trace.draws_consumed = draws_before + (out.trace.u ? 1 : 0);
    return out;
}

PipelineTrace trace_pipeline_once(const Pipeline& pipeline, const PipelineInput& input, std::uint64_t skip_draws) {
    const std::uint64_t seed = input.params.seed.value_or(choose_seed());
    Pcg32 rng = stream(seed, kSampleLabel);
    rng.skip_draws(skip_draws);
    return run_pipeline(pipeline, input, rng, seed, skip_draws);
}

}  // namespace samplescope
