#include "engine/stages/row_state.h"

#include <algorithm>
#include <array>
#include <bit>
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
    Values spare;
    std::vector<std::uint32_t> bucket_ends;
    IdList bucket_ids;
    std::vector<std::uint64_t> marks;
    std::vector<RowState::RankKey> key_temp;
};
thread_local WorkingArrays t_working;

void finite_ids(const Values& logits, IdList& ids) {
    if (all_finite(logits.data(), static_cast<std::int64_t>(logits.size()))) {
        ids.resize(logits.size());
        std::iota(ids.begin(), ids.end(), 0);
        return;
    }
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

// A logit as an unsigned key whose ascending order is the logits' descending
// order, with -0 and +0 one key (they compare equal).
inline std::uint64_t descending_key(double logit) {
    constexpr std::uint64_t kSign = std::uint64_t{1} << 63;
    const std::uint64_t bits = logit == 0.0 ? 0 : std::bit_cast<std::uint64_t>(logit);
    const std::uint64_t ascending = (bits & kSign) ? ~bits : bits | kSign;
    return ~ascending;
}

// The top 16 bits of a rank key (sign, exponent and four mantissa bits of the
// logit): a bucket index whose order is the rank order between buckets.
constexpr int kBucketShift = 48;
constexpr std::size_t kBuckets = std::size_t{1} << (64 - kBucketShift);
inline std::size_t bucket_of(double logit) { return static_cast<std::size_t>(descending_key(logit) >> kBucketShift); }

// A function object, not a function, so the sorts inline it.
constexpr auto by_rank = [](const RowState::RankKey& a, const RowState::RankKey& b) {
    return ranks_before(a.logit, a.id, b.logit, b.id);
};

// Writes one bucket's keys, `keys` (in ascending id order), to `out` in rank
// order: scattered by the next 8 key bits (keeping the id order), then each
// of those small pieces sorted by comparison (a strict total order: any sort
// gives the same result).
void sort_bucket(const std::vector<RowState::RankKey>& keys, RowState::RankKey* out) {
    const std::size_t n = keys.size();
    if (n < 64) {
        std::copy(keys.begin(), keys.end(), out);
        std::sort(out, out + n, by_rank);
        return;
    }
    constexpr int kShift = kBucketShift - 8;
    std::array<std::uint32_t, 257> start{};
    for (const auto& key : keys) ++start[((descending_key(key.logit) >> kShift) & 0xff) + 1];
    for (std::size_t b = 0; b < 256; ++b) start[b + 1] += start[b];
    std::array<std::uint32_t, 256> next{};
    std::copy(start.begin(), start.end() - 1, next.begin());
    for (const auto& key : keys) out[next[(descending_key(key.logit) >> kShift) & 0xff]++] = key;
    for (std::size_t b = 0; b < 256; ++b) {
        if (start[b + 1] > start[b] + 1) std::sort(out + start[b], out + start[b + 1], by_rank);
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
    spare_.swap(t_working.spare);
    bucket_ends_.swap(t_working.bucket_ends);
    bucket_ids_.swap(t_working.bucket_ids);
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
    t_working.bucket_ends.swap(bucket_ends_);
    t_working.bucket_ids.swap(bucket_ids_);
    // The array the penalised logits ended in, or the one never used.
    t_working.spare.swap(penalised_.capacity() > spare_.capacity() ? penalised_ : spare_);
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
    // Every id kept (so every id finite), in f64: the row is divided as one
    // contiguous array, a loop the compiler vectorises.
    const bool whole_row = kept_.size() == vocab && arithmetic == Arithmetic::F64;
    const bool shares_snapshot = tracing && logits_snapshot_ && !logits_dirty_;
    // The unscaled logits, for an overflow's message: kept by the split, or
    // their largest |l| taken before scaling in place.
    const Values* unscaled = nullptr;
    double largest = 0.0;
    if (whole_row && !penalised_split_ && !shares_snapshot) {
        // The penalised logits stay in their array, which becomes penalised_;
        // the scaled ones are written into the other instead of copying first.
        penalised_.swap(logits_);
        logits_.swap(spare_);
        logits_.resize(vocab);
        if (numerators_valid_) {
            penalised_sums_ = numerator_sums_;
            penalised_sums_valid_ = true;
        }
        penalised_split_ = true;
        unscaled = &penalised_;
        const double* from = penalised_.data();
        double* to = logits_.data();
        for (std::size_t i = 0; i < vocab; ++i) to[i] = apply_temperature(from[i], temperature);
    } else {
        if (penalised_split_) {
            for (const auto id : kept_) largest = std::max(largest, std::fabs(logits_[static_cast<std::size_t>(id)]));
        } else {
            split_penalised();
            unscaled = penalised_shared_ ? penalised_shared_.get() : &penalised_;
        }
        if (whole_row) {
            double* l = logits_.data();
            for (std::size_t i = 0; i < vocab; ++i) l[i] = apply_temperature(l[i], temperature);
        } else {
            for (const auto id : kept_) {
                auto& l = logits_[static_cast<std::size_t>(id)];
                l = r(apply_temperature(l, temperature));
            }
        }
    }
    // A finite l over T > 0 is never NaN, so only |l / T| = inf is refused.
    const double largest_scaled =
        whole_row ? row_max_abs(logits_.data(), static_cast<std::int64_t>(vocab))
                  : max_abs_over_ids(logits_.data(), kept_.data(), static_cast<std::int64_t>(kept_.size()));
    if (!std::isfinite(largest_scaled)) {
        if (unscaled) {
            for (const auto id : kept_) largest = std::max(largest, std::fabs((*unscaled)[static_cast<std::size_t>(id)]));
        }
        for (const auto id : kept_) {
            if (!std::isfinite(logits_[static_cast<std::size_t>(id)])) throw temperature_overflow_error(temperature, id, largest);
        }
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
    bucketed_ = false;  // the ranked prefix is all that is kept now
    if (count != kept_.size()) {
        if (count * 16 < kept_.size()) {
            kept_.assign(ranked_.begin(), ranked_.end());
            std::sort(kept_.begin(), kept_.end());
        } else {
            // Many ids: marked in a bitmap and read back in ascending order,
            // linear in V instead of a sort of count ids.
            auto& marks = t_working.marks;
            marks.assign((vocab + 63) / 64, 0);
            for (const auto id : ranked_) marks[static_cast<std::size_t>(id) >> 6] |= std::uint64_t{1} << (id & 63);
            kept_.clear();
            for (std::size_t w = 0; w < marks.size(); ++w) {
                for (std::uint64_t bits = marks[w]; bits != 0; bits &= bits - 1) {
                    kept_.push_back(static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
                }
            }
        }
        kept_dirty_ = true;
        kept_probs_valid_ = false;
        kept_is_finite_ = false;
    }
}

// ---- what the units read ---------------------------------------------------

std::shared_ptr<const Values> RowState::shared_kept_probs() {
    if (!kept_probs_valid_) {
        std::shared_ptr<Values> probs;
        if (kept_is_finite_ && numerators_valid_) {
            // The whole row's numerators over their sum: the same arithmetic
            // as softmax_over_ids on every finite id, without a second exp pass.
            probs = pooled_doubles(kept_.size());
            const double z = numerator_sums_.partition;
            double* q = probs->data();
            if (kept_.size() == numerators_.size()) {
                const double* e = numerators_.data();
                for (std::size_t i = 0; i < kept_.size(); ++i) q[i] = e[i] / z;
            } else {
                for (std::size_t i = 0; i < kept_.size(); ++i) q[i] = numerators_[static_cast<std::size_t>(kept_[i])] / z;
            }
        } else if (numerators_valid_ &&
                   max_over_ids(logits_.data(), kept_.data(), static_cast<std::int64_t>(kept_.size())) ==
                       numerator_sums_.max_logit) {
            // A truncated set that kept the row's maximum: its numerators
            // exp(l - M) are the row's, so only their sum in id order is new.
            probs = pooled_doubles(kept_.size());
            double z = 0.0;
            for (const auto id : kept_) z += numerators_[static_cast<std::size_t>(id)];
            double* q = probs->data();
            for (std::size_t i = 0; i < kept_.size(); ++i) q[i] = numerators_[static_cast<std::size_t>(kept_[i])] / z;
        } else {
            probs = pooled_doubles();
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
        ranked_.clear();
        rank_keys_.clear();
        ranked_count_ = 0;
        bucketed_ = false;
        ranked_valid_ = true;
    }
    const std::size_t target = std::min(count, n);
    if (ranked_count_ >= target) return ranked_;
    // The next block: at least 64 ranks, eight times the last, at most twice
    // (a broad row's top-p goes on to the buckets without more scans).
    const std::size_t block = std::max({target, std::size_t{64}, ranked_count_ * 8});
    if (!bucketed_ && block * 16 <= n && ranked_count_ < 512) {
        // A block much smaller than the kept set (top-k, a peaked top-p): one
        // scan keeps only the keys that can be in it, and only they are sorted.
        select_first(block);
    } else {
        // Further (a broad top-p, a stack's rule): every kept id is keyed into
        // buckets that are in rank order, and buckets are sorted only as far
        // as the ranking is asked for. The rest of the row is never sorted.
        if (!bucketed_) bucket_keys();
        while (ranked_count_ < target) {
            // The next bucket's ids (ascending) as keys after the ranked prefix, then sorted.
            const std::size_t begin = next_bucket_ == 0 ? 0 : bucket_ends_[next_bucket_ - 1];
            const std::size_t end = bucket_ends_[next_bucket_++];
            auto& keys = t_working.key_temp;
            keys.clear();
            for (std::size_t i = begin; i < end; ++i) {
                const std::int32_t id = bucket_ids_[i];
                keys.push_back(RankKey{logits_[static_cast<std::size_t>(id)], id});
            }
            rank_keys_.resize(end);
            sort_bucket(keys, rank_keys_.data() + begin);
            ranked_count_ = end;
        }
    }
    // Ids of the new ranks only: a select rebuilt the prefix, a bucket extended it.
    const std::size_t from = bucketed_ ? std::min(ranked_.size(), ranked_count_) : 0;
    ranked_.resize(ranked_count_);
    for (std::size_t i = from; i < ranked_count_; ++i) ranked_[i] = rank_keys_[i].id;
    return ranked_;
}

void RowState::bucket_keys() {
    // A counting pass and a scatter: bucket_ids_ then holds every kept id,
    // bucket after bucket in rank order, each bucket in ascending id order.
    // Only ids move (4 bytes each); a bucket's keys are made when it is sorted.
    auto& ends = bucket_ends_;
    ends.assign(kBuckets, 0);
    const std::size_t n = kept_.size();
    const bool whole_row = n == vocab;
    for (std::size_t i = 0; i < n; ++i) {
        ++ends[bucket_of(whole_row ? logits_[i] : logits_[static_cast<std::size_t>(kept_[i])])];
    }
    std::uint32_t total = 0;
    for (auto& e : ends) {
        const std::uint32_t size = e;
        e = total;  // the bucket's start, until the scatter moves it to its end
        total += size;
    }
    bucket_ids_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int32_t id = kept_[i];
        bucket_ids_[ends[bucket_of(logits_[static_cast<std::size_t>(id)])]++] = id;
    }
    rank_keys_.clear();
    ranked_.clear();
    ranked_count_ = 0;
    next_bucket_ = 0;
    bucketed_ = true;
}

void RowState::select_first(std::size_t count) {
    // Keys are collected while they rank before the worst of the best `count`
    // seen so far; whenever the buffer fills, it is cut back to those `count`.
    // On a row in random order few keys pass after the first cut, so the scan
    // is one comparison per id: O(n + count log n) instead of a selection over
    // the whole row.
    const std::size_t capacity = count * 4;
    rank_keys_.clear();
    rank_keys_.reserve(capacity);
    RankKey worst{HUGE_VAL, -1};  // nothing ranks after it: every key passes until the first cut
    bool cut = false;
    const auto cut_back = [&] {
        std::nth_element(rank_keys_.begin(), rank_keys_.begin() + static_cast<std::ptrdiff_t>(count - 1), rank_keys_.end(),
                         by_rank);
        rank_keys_.resize(count);
        worst = rank_keys_[count - 1];
        cut = true;
    };
    const auto consider = [&](double logit, std::int32_t id) {
        if (cut && !ranks_before(logit, id, worst.logit, worst.id)) return;
        rank_keys_.push_back(RankKey{logit, id});
        if (rank_keys_.size() == capacity) cut_back();
    };
    if (kept_.size() == vocab) {
        for (std::size_t i = 0; i < vocab; ++i) consider(logits_[i], static_cast<std::int32_t>(i));
    } else {
        for (const auto id : kept_) consider(logits_[static_cast<std::size_t>(id)], id);
    }
    if (rank_keys_.size() > count) cut_back();
    std::sort(rank_keys_.begin(), rank_keys_.end(), by_rank);
    ranked_count_ = rank_keys_.size();
}

// ---- for the runner -----------------------------------------------------------

void RowState::refresh_numerators(std::span<const std::int32_t> touched) {
    // Keeps exp(l - M) for the whole row, M the row's max, and their sequential
    // sum. After a penalty that left M unchanged only the touched ids need a
    // new exp; every other numerator is the same computation.
    const SoftmaxSums previous = numerator_sums_;
    const std::size_t n = logits_.size();
    const double m = row_max(logits_.data(), static_cast<std::int64_t>(n));
    double z = 0.0;
    if (numerators_valid_ && !touched.empty() && m == previous.max_logit) {
        for (const auto id : touched) {
            numerators_[static_cast<std::size_t>(id)] = softmax_numerator(logits_[static_cast<std::size_t>(id)], m);
        }
        for (std::size_t i = 0; i < n; ++i) z += numerators_[i];
    } else {
        // The exp pass and the sum in one loop (the same additions in the same order).
        numerators_.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const double e = softmax_numerator(logits_[i], m);
            numerators_[i] = e;
            z += e;
        }
    }
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
