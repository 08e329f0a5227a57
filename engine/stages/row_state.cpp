#include "engine/stages/row_state.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/base/buffer_pool.h"
#include "engine/core/element_math.h"
#include "engine/core/row_checks.h"

namespace samplescope {

void softmax_over_ids(const Values& logits, const IdList& ids, Values& probs, Arithmetic arithmetic) {
    probs.resize(ids.size());
    if (arithmetic == Arithmetic::F64) {
        const SoftmaxSums sums = softmax_sums(logits.data(), ids.data(), static_cast<std::int64_t>(ids.size()));
        for (std::size_t i = 0; i < ids.size(); ++i) probs[i] = softmax_numerator(logits[ids[i]], sums.max_logit);
        for (auto& q : probs) q /= sums.partition;
        return;
    }
    double m = -HUGE_VAL;
    for (const auto id : ids) m = std::max(m, logits[static_cast<std::size_t>(id)]);
    double z = 0.0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const double shifted = in_arithmetic(arithmetic, logits[static_cast<std::size_t>(ids[i])] - m);
        probs[i] = in_arithmetic(arithmetic, std::exp(shifted));
        z += probs[i];
    }
    z = in_arithmetic(arithmetic, z);
    for (auto& q : probs) q = in_arithmetic(arithmetic, q / z);
}

Values softmax_over_ids(const Values& logits, const IdList& ids, Arithmetic arithmetic) {
    Values probs;
    softmax_over_ids(logits, ids, probs, arithmetic);
    return probs;
}

IdList rank_order(const Values& logits, const IdList& ids, std::size_t prefix) {
    IdList ranked = ids;
    const auto before = [&logits](std::int32_t a, std::int32_t b) { return ranks_before(logits[a], a, logits[b], b); };
    if (prefix < ranked.size()) {
        // (logit desc, id asc) is a strict total order: the first `prefix`
        // after the selection are exactly the top ones, then only they are sorted.
        const auto cut = ranked.begin() + static_cast<std::ptrdiff_t>(prefix);
        std::nth_element(ranked.begin(), cut, ranked.end(), before);
        std::sort(ranked.begin(), cut, before);
    } else {
        std::sort(ranked.begin(), ranked.end(), before);
    }
    return ranked;
}

namespace {

// The working arrays of the last run on this thread, handed to the next one so
// their pages stay mapped (see engine/base/buffer_pool.h).
struct WorkingArrays {
    Values logits;
    Values numerators;
    IdList kept;
    IdList ranked;
    std::vector<RowState::RankKey> rank_keys;
};
thread_local WorkingArrays t_working;

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

}  // namespace

RowState::RowState(const Pipeline& pipeline_in, const PipelineInput& input_in, bool tracing_in,
                   const HistoryCounts* counted, Arithmetic arithmetic_in)
    : own_history_(counted ? nullptr
                           : std::make_unique<const HistoryCounts>(
                                 count_history(input_in.prompt_ids, input_in.output_ids, input_in.logits.size()))),
      pipeline(pipeline_in), input(input_in), params(input_in.params), vocab(input_in.logits.size()),
      tracing(tracing_in && arithmetic_in == Arithmetic::F64), arithmetic(arithmetic_in),
      history(counted ? *counted : *own_history_) {
    logits_.swap(t_working.logits);
    numerators_.swap(t_working.numerators);
    kept_.swap(t_working.kept);
    ranked_.swap(t_working.ranked);
    rank_keys_.swap(t_working.rank_keys);
    logits_.assign(input.logits.begin(), input.logits.end());
    finite_ids(logits_, kept_);
    any_joint_ = std::any_of(pipeline.steps.begin(), pipeline.steps.end(), [](const PipelineStep& s) { return s.joint; });
    if (tracing) refresh_numerators({});
}

RowState::~RowState() {
    t_working.logits.swap(logits_);
    t_working.numerators.swap(numerators_);
    t_working.kept.swap(kept_);
    t_working.ranked.swap(ranked_);
    t_working.rank_keys.swap(rank_keys_);
}

void RowState::begin_step(const PipelineStep& step, bool truncation_before) {
    const bool truncates = stage_info(step.stage).truncates;
    joint_ = truncates && step.joint && truncation_before && !(pipeline.joint_only_without_min_p && uses_min_p(params));
    if (truncates && !joint_ && any_joint_) group_input_ = kept_;
}

// ---- changes ------------------------------------------------------------

void RowState::after_penalty(std::span<const std::int32_t> touched, const char* penalty) {
    bool dropped = false;
    for (const auto id : touched) {
        const double x = logits_[static_cast<std::size_t>(id)];
        const PenaltyOutcome outcome = penalty_outcome(x);
        if (outcome == PenaltyOutcome::Refused) throw penalty_overflow_error(penalty, id, x);
        dropped = dropped || (outcome == PenaltyOutcome::Dropped && std::binary_search(kept_.begin(), kept_.end(), id));
    }
    if (dropped) {
        const auto finite_end = std::remove_if(kept_.begin(), kept_.end(), [this](std::int32_t id) {
            return !std::isfinite(logits_[static_cast<std::size_t>(id)]);
        });
        kept_.erase(finite_end, kept_.end());
        if (kept_.empty()) throw penalty_emptied_error(penalty);
        kept_dirty_ = true;
    }
    logits_dirty_ = true;
    kept_probs_valid_ = false;
    ranked_valid_ = false;
    penalised_sums_valid_ = false;
    if (tracing) refresh_numerators(touched);
}

void RowState::own_penalised() {
    if (penalised_.empty() && penalised_shared_) penalised_ = *penalised_shared_;
    penalised_shared_.reset();
}

void RowState::split_penalised() {
    if (penalised_split_) return;
    if (tracing && logits_snapshot_ && !logits_dirty_) {
        penalised_shared_ = logits_snapshot_;
    } else {
        penalised_ = logits_;
    }
    if (numerators_valid_) {
        penalised_sums_ = numerator_sums_;
        penalised_sums_valid_ = true;
    }
    penalised_split_ = true;
}

void RowState::scale(double temperature) {
    split_penalised();
    double largest = 0.0;
    for (const auto id : kept_) largest = std::max(largest, std::fabs(logits_[static_cast<std::size_t>(id)]));
    for (const auto id : kept_) {
        auto& l = logits_[static_cast<std::size_t>(id)];
        l = r(apply_temperature(l, temperature));
        if (!std::isfinite(l)) throw temperature_overflow_error(temperature, id, largest);
    }
    logits_dirty_ = true;
    kept_probs_valid_ = false;
    ranked_valid_ = false;
    numerators_valid_ = false;
    if (tracing) refresh_numerators({});
}

void RowState::set_kept(IdList kept) {
    if (kept == kept_) return;
    kept_ = std::move(kept);
    kept_dirty_ = true;
    kept_probs_valid_ = false;
    ranked_valid_ = false;
    kept_is_finite_ = false;
}

void RowState::keep_ranked_prefix(std::size_t count) {
    ranked(count);
    ranked_.resize(count);
    rank_keys_.resize(count);
    ranked_count_ = count;
    if (count != kept_.size()) {
        kept_.assign(ranked_.begin(), ranked_.end());
        std::sort(kept_.begin(), kept_.end());
        kept_dirty_ = true;
        kept_probs_valid_ = false;
        kept_is_finite_ = false;
    }
}

// ---- what the units read ---------------------------------------------------

std::shared_ptr<const Values> RowState::shared_kept_probs() {
    if (!kept_probs_valid_) {
        auto probs = pooled_doubles();
        if (kept_is_finite_ && numerators_valid_) {
            // The whole row's numerators over their sum: the same arithmetic
            // as softmax_over_ids on every finite id, without a second exp pass.
            probs->resize(kept_.size());
            const double z = numerator_sums_.partition;
            if (kept_.size() == numerators_.size()) {
                for (std::size_t i = 0; i < kept_.size(); ++i) (*probs)[i] = numerators_[i] / z;
            } else {
                for (std::size_t i = 0; i < kept_.size(); ++i) {
                    (*probs)[i] = numerators_[static_cast<std::size_t>(kept_[i])] / z;
                }
            }
        } else {
            softmax_over_ids(logits_, kept_, *probs, arithmetic);
        }
        kept_probs_ = std::move(probs);
        kept_probs_valid_ = true;
    }
    return kept_probs_;
}

const Values& RowState::kept_probs() { return *shared_kept_probs(); }

const IdList& RowState::ranked(std::size_t count) {
    const std::size_t n = kept_.size();
    if (!ranked_valid_) {
        // The ranking works on (logit, id) pairs side by side: the selection and
        // the sort then compare neighbours in memory instead of looking up a
        // logit per comparison across the whole row.
        rank_keys_.resize(n);
        for (std::size_t i = 0; i < n; ++i) rank_keys_[i] = RankKey{logits_[static_cast<std::size_t>(kept_[i])], kept_[i]};
        ranked_.assign(kept_.begin(), kept_.end());
        ranked_count_ = 0;
        ranked_valid_ = true;
    }
    const std::size_t target = std::min(count, n);
    if (ranked_count_ >= target) return ranked_;
    const auto by_rank = [](const RankKey& a, const RankKey& b) { return ranks_before(a.logit, a.id, b.logit, b.id); };
    // Select the next block of the ranking in linear time, then sort only it.
    const std::size_t grow = std::min(n, std::max({target, std::size_t{64}, ranked_count_ * 4}));
    const auto first = rank_keys_.begin() + static_cast<std::ptrdiff_t>(ranked_count_);
    const auto last = rank_keys_.begin() + static_cast<std::ptrdiff_t>(grow);
    if (grow < n) std::nth_element(first, last, rank_keys_.end(), by_rank);
    std::sort(first, last, by_rank);
    for (std::size_t i = ranked_count_; i < n; ++i) ranked_[i] = rank_keys_[i].id;
    ranked_count_ = grow;
    return ranked_;
}

// ---- for the runner -----------------------------------------------------------

void RowState::refresh_numerators(std::span<const std::int32_t> touched) {
    // Keeps exp(l - M) for the whole row, M the row's max, and their sequential
    // sum. After a penalty that left M unchanged only the touched ids need a
    // new exp; every other numerator is the same computation.
    const SoftmaxSums previous = numerator_sums_;
    double m = -HUGE_VAL;
    for (const double x : logits_) m = x > m ? x : m;
    if (numerators_valid_ && !touched.empty() && m == previous.max_logit) {
        for (const auto id : touched) {
            numerators_[static_cast<std::size_t>(id)] = softmax_numerator(logits_[static_cast<std::size_t>(id)], m);
        }
    } else {
        numerators_.resize(logits_.size());
        for (std::size_t i = 0; i < logits_.size(); ++i) numerators_[i] = softmax_numerator(logits_[i], m);
    }
    double z = 0.0;
    for (const double e : numerators_) z += e;
    numerator_sums_ = SoftmaxSums{m, z};
    numerators_valid_ = true;
}

void RowState::snapshot(StageTrace& out) {
    const bool changed = logits_dirty_ || kept_dirty_ || !probs_snapshot_;
    if (logits_dirty_ || !logits_snapshot_) {
        auto logits = pooled_doubles();
        logits->assign(logits_.begin(), logits_.end());
        logits_snapshot_ = std::move(logits);
        logits_dirty_ = false;
    }
    if (kept_dirty_ || !kept_snapshot_) {
        auto kept = pooled_ids();
        kept->assign(kept_.begin(), kept_.end());
        kept_snapshot_ = std::move(kept);
        kept_dirty_ = false;
    }
    if (changed) probs_snapshot_ = shared_kept_probs();
    if (!out.logits) out.logits = logits_snapshot_;
    if (!out.kept) out.kept = kept_snapshot_;
    if (!out.probs) out.probs = probs_snapshot_;
}

double RowState::contract_logprob(std::int32_t token) {
    const Values& values = !penalised_split_ ? logits_ : (penalised_shared_ ? *penalised_shared_ : penalised_);
    SoftmaxSums sums{};
    if (penalised_split_ && penalised_sums_valid_) {
        sums = penalised_sums_;
    } else if (!penalised_split_ && numerators_valid_) {
        sums = numerator_sums_;
    } else {
        sums = row_softmax_sums(values.data(), static_cast<std::int64_t>(values.size()));
        if (penalised_split_) {
            penalised_sums_ = sums;
            penalised_sums_valid_ = true;
        }
    }
    return log_softmax_at(values[static_cast<std::size_t>(token)], sums.max_logit, sums.partition);
}

}  // namespace samplescope
