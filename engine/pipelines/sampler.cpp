#include "engine/pipelines/sampler.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "engine/core/buffer_pool.h"
#include "engine/core/element_math.h"
#include "engine/core/input_error.h"
#include "engine/core/inverse_cdf.h"

namespace samplescope {

void check_logits(std::span<const double> logits) {
    if (logits.empty()) throw InputError("logits", "logits are empty (V = 0): nothing can be sampled");
    bool any_finite = false;
    for (std::size_t i = 0; i < logits.size(); ++i) {
        const double x = logits[i];
        if (std::isnan(x) || x == std::numeric_limits<double>::infinity()) {
            throw InputError("logits", "logit of id " + std::to_string(i) + " is " + format_number(x) +
                                           " (only finite values and -inf are allowed)");
        }
        any_finite = any_finite || std::isfinite(x);
    }
    if (!any_finite) throw InputError("logits", "every logit is -inf: nothing can be sampled");
}

namespace {

struct SoftmaxSums {
    double max_logit = -std::numeric_limits<double>::infinity();
    double partition = 0.0;
};

// Step 9 over `ids` (ascending): q aligned with ids. Z is a plain sequential sum
// in ascending id order; a vectorised reduction would change the last bits.
SoftmaxSums softmax_over(const Values& logits, const IdList& ids, Values* probs) {
    SoftmaxSums sums;
    for (const auto id : ids) sums.max_logit = std::max(sums.max_logit, logits[id]);
    if (probs) probs->resize(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const double e = softmax_numerator(logits[ids[i]], sums.max_logit);
        if (probs) (*probs)[i] = e;
        sums.partition += e;
    }
    if (probs) {
        for (auto& q : *probs) q /= sums.partition;
    }
    return sums;
}

// Step 9's numerators over the whole row: e[i] = exp(l[i] - M), 0 for -inf ids.
// Adding those zeros leaves a sequential sum unchanged, so Z equals the sum over
// the finite ids in ascending order bit for bit.
double row_max(const Values& logits) {
    double m = -std::numeric_limits<double>::infinity();
    for (const double x : logits) m = std::max(m, x);
    return m;
}

double sequential_sum(const Values& values) {
    double z = 0.0;
    for (const double v : values) z += v;
    return z;
}

// The ids with a finite logit, ascending, written into `ids` (its capacity is reused).
void finite_ids(const Values& logits, IdList& ids) {
    const auto finite = static_cast<std::size_t>(
        std::count_if(logits.begin(), logits.end(), [](double x) { return std::isfinite(x); }));
    ids.resize(finite);
    if (finite == logits.size()) {
        std::iota(ids.begin(), ids.end(), 0);
        return;
    }
    std::size_t next = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) {
        if (std::isfinite(logits[i])) ids[next++] = static_cast<std::int32_t>(i);
    }
}

// The working arrays of the last pipeline run on this thread, handed to the
// next one so their pages stay mapped (see engine/core/buffer_pool.h).
struct WorkingArrays {
    Values logits;
    Values numerators;
    IdList kept;
};
thread_local WorkingArrays t_working;

// One run of the pipeline. With a trace it records every stage; without one it
// does only the work the token and its logprob need.
class Pipeline {
public:
    Pipeline(const StepInput& input, SampleTrace* trace) : input_(input), params_(input.params), trace_(trace) {
        logits_.swap(t_working.logits);
        numerators_.swap(t_working.numerators);
        kept_.swap(t_working.kept);
    }
    ~Pipeline() {
        t_working.logits.swap(logits_);
        t_working.numerators.swap(numerators_);
        t_working.kept.swap(kept_);
    }
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;

    SampleResult run(Pcg32& rng) {
        check_logits(input_.logits);
        validate(params_);
        const std::size_t vocab = input_.logits.size();

        logits_.assign(input_.logits.begin(), input_.logits.end());
        finite_ids(logits_, kept_);
        const bool tracing = trace_ != nullptr;
        if (tracing) refresh_numerators(nullptr);
        record(Stage::Widen, true, /*logits_changed=*/true, /*kept_changed=*/true);

        const bool repetition = uses_repetition_penalty(params_);
        if (repetition) {
            for (const auto id : input_.history.context_ids) {
                logits_[id] = apply_repetition_penalty(logits_[id], params_.repetition_penalty);
            }
        }
        const bool kept_after_repetition =
            repetition && penalised_ids_valid(input_.history.context_ids, "repetition_penalty");
        if (tracing && repetition) refresh_numerators(&input_.history.context_ids);
        record(Stage::RepetitionPenalty, repetition, repetition, kept_after_repetition);

        const bool additive = uses_presence_frequency(params_);
        if (additive) {
            generated_ids_.reserve(input_.history.output_counts.size());
            for (const auto& [id, count] : input_.history.output_counts) {
                logits_[id] = apply_presence_frequency(logits_[id], static_cast<double>(count),
                                                       params_.frequency_penalty, params_.presence_penalty);
                generated_ids_.push_back(id);
            }
        }
        const bool kept_after_additive = additive && penalised_ids_valid(generated_ids_, "presence/frequency penalty");
        if (tracing && additive) refresh_numerators(&generated_ids_);
        record(Stage::PresenceFrequency, additive, additive, kept_after_additive);

        // The reported logprob: log_softmax over all V ids after the penalties.
        if (tracing) {
            penalised_ = SoftmaxSums{max_logit_, partition_};
        } else {
            penalised_ = softmax_over(logits_, kept_, nullptr);
        }

        SampleResult result;
        if (is_greedy(params_)) {
            result.token = argmax();
            result.logprob = log_softmax_at(logits_[result.token], penalised_.max_logit, penalised_.partition);
            finish_greedy(result.token);
            result.kept_count = 1;
            return result;
        }
        if (trace_) record_inactive(Stage::Greedy);

        const bool temperature = uses_temperature(params_);
        if (temperature) {
            scale_by_temperature();
            if (tracing) refresh_numerators(nullptr);
        }
        record(Stage::Temperature, temperature, temperature, false);

        const bool top_k = uses_top_k(params_, vocab);
        if (top_k) keep_top_k();
        record(Stage::TopK, top_k, false, top_k);

        const bool top_p = uses_top_p(params_);
        if (top_p) keep_top_p();
        record(Stage::TopP, top_p, false, top_p);

        const bool min_p = uses_min_p(params_);
        if (min_p) keep_min_p();
        record(Stage::MinP, min_p, false, min_p);

        Values final_probs;
        softmax_over(logits_, kept_, &final_probs);
        const double u = rng.uniform_f64();
        Values cumulative;
        bool fell_back = false;
        const std::int32_t token = inverse_cdf_draw(kept_, final_probs, u, trace_ ? &cumulative : nullptr, fell_back);

        result.token = token;
        result.logprob = log_softmax_at(logits_before_temperature_at(token), penalised_.max_logit,
                                        penalised_.partition);
        result.u = u;
        result.kept_count = kept_.size();
        if (trace_) {
            auto& softmax = trace_->stages[static_cast<std::size_t>(Stage::Softmax)];
            softmax = StageTrace{};
            softmax.stage = Stage::Softmax;
            softmax.active = true;
            softmax.logits = logits_snapshot_;
            softmax.kept = kept_snapshot_;
            softmax.probs = std::make_shared<const Values>(std::move(final_probs));
            auto& draw = trace_->stages[static_cast<std::size_t>(Stage::Draw)];
            draw = softmax;
            draw.stage = Stage::Draw;
            trace_->token = token;
            trace_->logprob = result.logprob;
            trace_->greedy = false;
            trace_->u = u;
            trace_->cumulative = std::move(cumulative);
            trace_->fell_back = fell_back;
        }
        return result;
    }

private:
    // After a penalty: refuse a logit it pushed to +inf or NaN, and drop ids it
    // pushed to -inf from the kept set. Returns whether the kept set changed.
    bool penalised_ids_valid(const IdList& touched, const char* penalty) {
        bool changed = false;
        for (const auto id : touched) {
            const double x = logits_[id];
            if (std::isnan(x) || x == std::numeric_limits<double>::infinity()) {
                throw InputError(penalty, std::string(penalty) + " makes the logit of id " + std::to_string(id) +
                                              " " + format_number(x) + "; use a penalty closer to its off value (1 for repetition, 0 for presence and frequency)");
            }
            changed = changed || (std::isinf(x) && std::binary_search(kept_.begin(), kept_.end(), id));
        }
        if (!changed) return false;
        finite_ids(logits_, kept_);
        if (kept_.empty()) {
            throw InputError(penalty, std::string(penalty) + " pushes every logit to -inf: nothing can be sampled");
        }
        return true;
    }

    // Keeps numerators_ = exp(l - M) for the whole row, with M the row's max and
    // Z their sequential sum. After a penalty that left M unchanged only the
    // touched ids need a new exp; every other numerator is the same computation.
    void refresh_numerators(const IdList* touched) {
        const double m = row_max(logits_);
        if (touched && m == max_logit_) {
            for (const auto id : *touched) numerators_[id] = softmax_numerator(logits_[id], m);
        } else {
            numerators_.resize(logits_.size());
            for (std::size_t i = 0; i < logits_.size(); ++i) numerators_[i] = softmax_numerator(logits_[i], m);
        }
        max_logit_ = m;
        partition_ = sequential_sum(numerators_);
    }

    // q over the kept set from the whole-row numerators, aligned with kept_.
    std::shared_ptr<const Values> probs_from_numerators() const {
        auto probs = pooled_doubles();
        probs->resize(kept_.size());
        if (kept_.size() == numerators_.size()) {
            for (std::size_t i = 0; i < kept_.size(); ++i) (*probs)[i] = numerators_[i] / partition_;
        } else {
            for (std::size_t i = 0; i < kept_.size(); ++i) (*probs)[i] = numerators_[kept_[i]] / partition_;
        }
        return probs;
    }

    std::int32_t argmax() const {
        std::int32_t best = kept_.front();
        for (const auto id : kept_) {
            if (ranks_before(logits_[id], id, logits_[best], best)) best = id;
        }
        return best;
    }

    void scale_by_temperature() {
        const double t = params_.temperature;
        // The logprob needs the penalised logits; a trace already holds them.
        if (trace_) {
            penalised_logits_ = logits_snapshot_;
        } else {
            before_temperature_ = logits_;
        }
        scale_kept_by_temperature(logits_, kept_, t);
    }

    double logits_before_temperature_at(std::int32_t id) const {
        if (penalised_logits_) return (*penalised_logits_)[id];
        return before_temperature_.empty() ? logits_[id] : before_temperature_[id];
    }

    // Step 6: the first k ids by (logit desc, id asc).
    void keep_top_k() {
        const auto by_rank = [this](std::int32_t a, std::int32_t b) {
            return ranks_before(logits_[a], a, logits_[b], b);
        };
        const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(params_.top_k), kept_.size());
        ranked_.resize(k);
        std::partial_sort_copy(kept_.begin(), kept_.end(), ranked_.begin(), ranked_.end(), by_rank);
        ranked_count_ = k;
        kth_logit_ = logits_[ranked_.back()];
        kept_.assign(ranked_.begin(), ranked_.end());
        std::sort(kept_.begin(), kept_.end());
    }

    // Step 7: q over the kept set, walked in rank order until the mass reaches p.
    // The ranking is extended lazily, so a peaked row never sorts its whole tail.
    void keep_top_p() {
        Values probs;
        softmax_over(logits_, kept_, &probs);
        const auto prob_of_id = [&](std::int32_t id) {
            return probs[static_cast<std::size_t>(std::lower_bound(kept_.begin(), kept_.end(), id) - kept_.begin())];
        };

        const auto by_rank = [this](std::int32_t a, std::int32_t b) {
            return ranks_before(logits_[a], a, logits_[b], b);
        };
        if (ranked_count_ != kept_.size()) {
            ranked_ = kept_;
            ranked_count_ = 0;
        }
        const std::size_t n = ranked_.size();
        double mass = 0.0;
        std::size_t rank = 0;
        bool reached = false;
        auto walk_ids = std::make_shared<IdList>();
        auto walk_mass = std::make_shared<Values>();
        while (rank < n && !reached) {
            if (rank == ranked_count_) {
                // Select the next block of the ranking in linear time, then sort only it.
                const std::size_t grow = std::min(n, std::max<std::size_t>(64, ranked_count_ * 4));
                const auto first = ranked_.begin() + static_cast<std::ptrdiff_t>(ranked_count_);
                const auto last = ranked_.begin() + static_cast<std::ptrdiff_t>(grow);
                if (grow < n) std::nth_element(first, last, ranked_.end(), by_rank);
                std::sort(first, last, by_rank);
                ranked_count_ = grow;
            }
            const std::int32_t id = ranked_[rank];
            mass += prob_of_id(id);
            ++rank;
            if (trace_) {
                walk_ids->push_back(id);
                walk_mass->push_back(mass);
            }
            reached = top_p_reached(mass, params_.top_p);
        }
        crossing_rank_ = rank;
        crossing_id_ = ranked_[rank - 1];
        crossing_mass_ = mass;
        walk_ids_ = std::move(walk_ids);
        walk_mass_ = std::move(walk_mass);
        ranked_.resize(rank);
        ranked_count_ = rank;
        kept_.assign(ranked_.begin(), ranked_.end());
        std::sort(kept_.begin(), kept_.end());
    }

    // Step 8: q over the kept set against its own maximum.
    void keep_min_p() {
        Values probs;
        softmax_over(logits_, kept_, &probs);
        const double max_prob = *std::max_element(probs.begin(), probs.end());
        const double floor = min_p_floor(max_prob, params_.min_p);
        IdList kept;
        for (std::size_t i = 0; i < kept_.size(); ++i) {
            if (min_p_keeps(probs[i], floor)) kept.push_back(kept_[i]);
        }
        kept_ = std::move(kept);
        ranked_count_ = 0;  // the ranking is no longer known to cover the kept set
        ranked_.clear();
        max_prob_ = max_prob;
        prob_floor_ = floor;
    }

    void finish_greedy(std::int32_t token) {
        if (!trace_) return;
        auto& greedy = trace_->stages[static_cast<std::size_t>(Stage::Greedy)];
        greedy = StageTrace{};
        greedy.stage = Stage::Greedy;
        greedy.active = true;
        greedy.logits = logits_snapshot_;
        greedy.kept = std::make_shared<const IdList>(IdList{token});
        greedy.probs = std::make_shared<const Values>(Values{1.0});
        for (auto stage : {Stage::Temperature, Stage::TopK, Stage::TopP, Stage::MinP}) record_inactive(stage);
        auto& softmax = trace_->stages[static_cast<std::size_t>(Stage::Softmax)];
        softmax = greedy;
        softmax.stage = Stage::Softmax;
        softmax.active = false;
        auto& draw = trace_->stages[static_cast<std::size_t>(Stage::Draw)];
        draw = softmax;
        draw.stage = Stage::Draw;
        trace_->token = token;
        trace_->logprob = log_softmax_at(logits_[token], penalised_.max_logit, penalised_.partition);
        trace_->greedy = true;
        trace_->u.reset();
        trace_->cumulative = {1.0};
    }

    // Records a stage: new snapshots of what changed, shared pointers to what did not.
    void record(Stage stage, bool active, bool logits_changed, bool kept_changed) {
        if (!trace_) return;
        if (logits_changed || !logits_snapshot_) {
            auto logits = pooled_doubles();
            logits->assign(logits_.begin(), logits_.end());
            logits_snapshot_ = std::move(logits);
        }
        if (kept_changed || !kept_snapshot_) {
            auto kept = pooled_ids();
            kept->assign(kept_.begin(), kept_.end());
            kept_snapshot_ = std::move(kept);
        }
        if (logits_changed || kept_changed || !probs_snapshot_) {
            if (stage <= Stage::Temperature) {
                probs_snapshot_ = probs_from_numerators();
            } else {
                auto probs = pooled_doubles();
                softmax_over(logits_, kept_, probs.get());
                probs_snapshot_ = std::move(probs);
            }
        }
        auto& out = trace_->stages[static_cast<std::size_t>(stage)];
        out = StageTrace{};
        out.stage = stage;
        out.active = active;
        out.logits = logits_snapshot_;
        out.kept = kept_snapshot_;
        out.probs = probs_snapshot_;
        if (!active) return;
        if (stage == Stage::TopK) out.kth_logit = kth_logit_;
        if (stage == Stage::TopP) {
            out.crossing_rank = crossing_rank_;
            out.crossing_id = crossing_id_;
            out.crossing_mass = crossing_mass_;
            out.walk_ids = walk_ids_;
            out.walk_mass = walk_mass_;
        }
        if (stage == Stage::MinP) {
            out.max_prob = max_prob_;
            out.prob_floor = prob_floor_;
        }
    }

    void record_inactive(Stage stage) { record(stage, false, false, false); }

    const StepInput& input_;
    const SamplingParams& params_;
    SampleTrace* trace_;

    Values logits_;
    Values before_temperature_;  // the penalised logits, kept only when temperature changes them (lean path)
    std::shared_ptr<const Values> penalised_logits_;  // the same, shared from the trace
    IdList kept_;
    IdList ranked_;               // kept ids in rank order; the first ranked_count_ are sorted
    std::size_t ranked_count_ = 0;
    SoftmaxSums penalised_;
    IdList generated_ids_;        // the ids presence/frequency touched
    Values numerators_;           // exp(l - M) over the whole row (traced path only)
    double max_logit_ = std::numeric_limits<double>::quiet_NaN();
    double partition_ = 0.0;

    double kth_logit_ = 0.0;
    std::size_t crossing_rank_ = 0;
    std::int32_t crossing_id_ = -1;
    double crossing_mass_ = 0.0;
    std::shared_ptr<const IdList> walk_ids_;
    std::shared_ptr<const Values> walk_mass_;
    double max_prob_ = 0.0;
    double prob_floor_ = 0.0;

    std::shared_ptr<const Values> logits_snapshot_;
    std::shared_ptr<const IdList> kept_snapshot_;
    std::shared_ptr<const Values> probs_snapshot_;
};

}  // namespace

void scale_kept_by_temperature(Values& logits, const IdList& kept, double temperature) {
    double largest = 0.0;
    for (const auto id : kept) largest = std::max(largest, std::fabs(logits[id]));
    for (const auto id : kept) {
        logits[id] = apply_temperature(logits[id], temperature);
        if (!std::isfinite(logits[id])) {
            throw InputError("temperature", "temperature " + format_number(temperature) +
                                                " is too small for these logits: l / T overflows at id " +
                                                std::to_string(id) + " (T must be at least " +
                                                format_number(largest / DBL_MAX) + ")");
        }
    }
}

SampleTrace trace_step(const StepInput& input, Pcg32& rng, std::uint64_t seed, std::uint64_t draws_before) {
    SampleTrace trace;
    trace.vocab_size = input.logits.size();
    trace.params = input.params;
    trace.params.seed = seed;
    trace.seed = seed;
    trace.stages.resize(kStageCount);
    Pipeline(input, &trace).run(rng);
    trace.draws_before = draws_before;
    trace.draws_consumed = draws_before + (trace.greedy ? 0 : 1);
    return trace;
}

SampleResult sample_step(const StepInput& input, Pcg32& rng) { return Pipeline(input, nullptr).run(rng); }

SampleTrace trace_once(std::span<const double> logits, const SamplingParams& params,
                       std::span<const std::int64_t> prompt_ids, std::span<const std::int64_t> output_ids,
                       std::uint64_t skip_draws) {
    const std::uint64_t seed = params.seed.value_or(choose_seed());
    Pcg32 rng = stream(seed, kSampleLabel);
    rng.skip_draws(skip_draws);
    const HistoryCounts history = count_history(prompt_ids, output_ids, logits.size());
    return trace_step(StepInput{logits, params, history}, rng, seed, skip_draws);
}

double StageTrace::prob_of(std::int32_t id) const {
    if (!kept) return 0.0;
    const auto it = std::lower_bound(kept->begin(), kept->end(), id);
    if (it == kept->end() || *it != id) return 0.0;
    return (*probs)[static_cast<std::size_t>(it - kept->begin())];
}

bool StageTrace::keeps(std::int32_t id) const {
    return kept && std::binary_search(kept->begin(), kept->end(), id);
}

}  // namespace samplescope
