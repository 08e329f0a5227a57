#include "engine/stages/row_state.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

#include "engine/base/buffer_pool.h"
#include "engine/core/element_math.h"
#include "engine/core/row_checks.h"

namespace samplescope {

void softmax_over_ids(const Values& logits, const IdList& ids, Values& probs, Arithmetic arithmetic) {
    probs.resize(ids.size());
    if (arithmetic == Arithmetic::F64) {
        softmax_into(logits.data(), ids.data(), static_cast<std::int64_t>(ids.size()), probs.data());
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
    IdList kept;
    IdList ranked;
    std::vector<RowState::RankKey> rank_keys;
    std::vector<std::uint32_t> bucket_ends;
    std::vector<std::uint64_t> marks;
    std::vector<RowState::RankKey> key_temp;
    std::vector<std::uint32_t> piece_starts;
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
// Without branches: a row's signs are as good as random, and a mispredicted
// branch per id cost more than the rest of the key.
inline std::uint64_t descending_key(double logit) {
    constexpr std::uint64_t kSign = std::uint64_t{1} << 63;
    // Adding +0 turns -0 into +0 and leaves every other value as it is.
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(logit + 0.0);
    // All ones for a negative logit: its bits are inverted; a positive one gets the sign bit set.
    const auto negative = static_cast<std::uint64_t>(static_cast<std::int64_t>(bits) >> 63);
    const std::uint64_t ascending = bits ^ (negative | kSign);
    return ~ascending;
}

// The top 16 bits of a rank key (sign, exponent and four mantissa bits of the
// logit): a bucket index whose order is the rank order between buckets.
constexpr int kBucketShift = 48;
constexpr std::size_t kBuckets = std::size_t{1} << (64 - kBucketShift);
// A kept set this short is sorted whole: clearing and walking 65,536 bucket
// counts would cost more than the sort (a speculative test's six-token rows
// spent most of their time there).
constexpr std::size_t kSortWholeSet = 1024;
inline std::size_t bucket_of(double logit) { return static_cast<std::size_t>(descending_key(logit) >> kBucketShift); }

// A function object, not a function, so the sorts inline it.
constexpr auto by_rank = [](const RowState::RankKey& a, const RowState::RankKey& b) {
    return ranks_before(a.logit, a.id, b.logit, b.id);
};

// Insertion sort by logit alone, descending, and stable: keys that arrive in
// ascending id order among equal logits leave in rank order. Reads `from`
// and writes `to` (which may be the same array). Gives up, and returns false,
// once it has moved keys `budget` places in all; `to` then holds the keys
// placed so far, `from` from there on the rest.
bool insertion_sort(const RowState::RankKey* from, RowState::RankKey* to, std::size_t n, std::size_t budget,
                    std::size_t& placed) {
    std::size_t moved = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const RowState::RankKey key = from[i];
        std::size_t j = i;
        for (; j > 0 && key.logit > to[j - 1].logit; --j) to[j] = to[j - 1];
        to[j] = key;
        moved += i - j;
        if (moved > budget) {
            placed = i + 1;
            return false;
        }
    }
    placed = n;
    return true;
}

// Sorts one bucket's keys, `keys[0..n)` (in ascending id order), in place into
// rank order. They are scattered into `temp` by the next key bits, into two
// to four times as many pieces as keys (keeping the id order within a
// piece), so nearly every piece holds one key or none; one insertion pass
// back into `keys` puts the rest in order. Keys alike in all those bits (a
// row of near-equal logits) would make that pass quadratic: past a budget of
// moves the bucket is sorted by comparison instead. (logit desc, id asc) is
// a strict total order: any sort gives the same result.
void sort_bucket(RowState::RankKey* keys, std::size_t n, std::vector<RowState::RankKey>& temp,
                 std::vector<std::uint32_t>& start) {
    constexpr std::size_t kSmall = 32;
    const RowState::RankKey* from = keys;
    if (n > kSmall) {
        const int bits = static_cast<int>(std::min<std::size_t>(std::bit_width(n) + 1, 14));
        const int shift = kBucketShift - bits;
        const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
        const auto digit = [shift, mask](const RowState::RankKey& key) {
            return static_cast<std::size_t>((descending_key(key.logit) >> shift) & mask);
        };
        const std::size_t pieces = std::size_t{1} << bits;
        start.assign(pieces, 0);
        for (std::size_t i = 0; i < n; ++i) ++start[digit(keys[i])];
        std::uint32_t total = 0;
        for (auto& s : start) {
            const std::uint32_t size = s;
            s = total;
            total += size;
        }
        temp.resize(n);
        for (std::size_t i = 0; i < n; ++i) temp[start[digit(keys[i])]++] = keys[i];
        from = temp.data();
    }
    // A small bucket's pass is quadratic at worst, and short.
    const std::size_t budget = n > kSmall ? 8 * n : n * n;
    std::size_t placed = 0;
    if (!insertion_sort(from, keys, n, budget, placed)) {
        if (from != keys) std::copy(from + placed, from + n, keys + placed);
        std::sort(keys, keys + n, by_rank);
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
    kept_.swap(t_working.kept);
    ranked_.swap(t_working.ranked);
    rank_keys_.swap(t_working.rank_keys);
    bucket_ends_.swap(t_working.bucket_ends);
    logits_ = pooled_doubles(vocab);
    std::copy(input.logits.begin(), input.logits.end(), logits_->begin());
    finite_ids(*logits_, kept_);
    any_joint_ = std::any_of(pipeline.steps.begin(), pipeline.steps.end(), [](const PipelineStep& s) { return s.joint; });
}

RowState::~RowState() {
    t_working.kept.swap(kept_);
    t_working.ranked.swap(ranked_);
    t_working.rank_keys.swap(rank_keys_);
    t_working.bucket_ends.swap(bucket_ends_);
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
        const double x = (*logits_)[static_cast<std::size_t>(id)];
        const PenaltyOutcome outcome = penalty_outcome(x);
        if (outcome == PenaltyOutcome::Refused) throw penalty_overflow_error(penalty, id, x);
        dropped = dropped || (outcome == PenaltyOutcome::Dropped && std::binary_search(kept_.begin(), kept_.end(), id));
    }
    if (dropped) {
        const auto finite_end = std::remove_if(kept_.begin(), kept_.end(), [this](std::int32_t id) {
            return !std::isfinite((*logits_)[static_cast<std::size_t>(id)]);
        });
        kept_.erase(finite_end, kept_.end());
        if (kept_.empty()) throw penalty_emptied_error(penalty);
        kept_dirty_ = true;
    }
    logits_dirty_ = true;
    kept_probs_valid_ = false;
    numerators_.reset();
    ranked_valid_ = false;
    penalised_sums_valid_ = false;
}

Values& RowState::own(std::shared_ptr<Values>& array) {
    // Copy on write: a trace's snapshot (or the penalised logits) may share it.
    if (array.use_count() > 1) {
        auto copy = pooled_doubles(array->size());
        std::copy(array->begin(), array->end(), copy->begin());
        array = std::move(copy);
    }
    return *array;
}

void RowState::split_penalised() {
    if (penalised_split_) return;
    penalised_ = logits_;  // shared until either is written
    penalised_split_ = true;
}

void RowState::scale(double temperature) {
    // Every id kept (so every id finite), in f64: the row is divided as one
    // contiguous array, a loop the compiler vectorises.
    const bool whole_row = kept_.size() == vocab && arithmetic == Arithmetic::F64;
    // The unscaled logits, for an overflow's message: kept by the split, or
    // their largest |l| taken before scaling in place.
    const Values* unscaled = nullptr;
    double largest = 0.0;
    if (whole_row && !penalised_split_) {
        // The penalised logits stay in their array, which becomes penalised_;
        // the scaled ones are written into a new one instead of copying first.
        split_penalised();
        unscaled = penalised_.get();
        auto scaled = pooled_doubles(vocab);
        const double* from = penalised_->data();
        double* to = scaled->data();
        for (std::size_t i = 0; i < vocab; ++i) to[i] = apply_temperature(from[i], temperature);
        logits_ = std::move(scaled);
    } else {
        if (penalised_split_) {
            for (const auto id : kept_) largest = std::max(largest, std::fabs((*logits_)[static_cast<std::size_t>(id)]));
        } else {
            split_penalised();
            unscaled = penalised_.get();
        }
        Values& l = own(logits_);
        if (whole_row) {
            for (std::size_t i = 0; i < vocab; ++i) l[i] = apply_temperature(l[i], temperature);
        } else {
            for (const auto id : kept_) {
                auto& x = l[static_cast<std::size_t>(id)];
                x = r(apply_temperature(x, temperature));
            }
        }
    }
    // A finite l over T > 0 is never NaN, so only |l / T| = inf is refused.
    const Values& l = *logits_;
    const double largest_scaled =
        whole_row ? row_max_abs(l.data(), static_cast<std::int64_t>(vocab))
                  : max_abs_over_ids(l.data(), kept_.data(), static_cast<std::int64_t>(kept_.size()));
    if (!std::isfinite(largest_scaled)) {
        if (unscaled) {
            for (const auto id : kept_) largest = std::max(largest, std::fabs((*unscaled)[static_cast<std::size_t>(id)]));
        }
        for (const auto id : kept_) {
            if (!std::isfinite(l[static_cast<std::size_t>(id)])) throw temperature_overflow_error(temperature, id, largest);
        }
    }
    logits_dirty_ = true;
    kept_probs_valid_ = false;
    numerators_.reset();
    ranked_valid_ = false;
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
            kept_.resize(count);  // a shrink: nothing is filled
            std::int32_t* out = kept_.data();
            for (std::size_t w = 0; w < marks.size(); ++w) {
                for (std::uint64_t bits = marks[w]; bits != 0; bits &= bits - 1) {
                    *out++ = static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
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
        if (arithmetic == Arithmetic::F64) {
            // Step 9 over the kept set (as StageProbs computes it from a trace).
            const Values& l = *logits_;
            const std::size_t n = kept_.size();
            probs = pooled_doubles(n);
            double* q = probs->data();
            // The same arithmetic as softmax_into; over every id the
            // numerators are kept for the truncated sets that follow.
            SoftmaxSums sums{0.0, 0.0};
            if (n == vocab) {
                // The numerators are kept (until the logits change): a
                // truncated set that keeps the maximum has the same ones.
                sums.max_logit = row_max(l.data(), static_cast<std::int64_t>(n));
                numerators_ = pooled_doubles(n);
                double* e = numerators_->data();
                for (std::size_t i = 0; i < n; ++i) {
                    e[i] = softmax_numerator(l[i], sums.max_logit);
                    sums.partition += e[i];
                }
                numerators_max_ = sums.max_logit;
                for (std::size_t i = 0; i < n; ++i) q[i] = e[i] / sums.partition;
            } else if (numerators_ &&
                       max_over_ids(l.data(), kept_.data(), static_cast<std::int64_t>(n)) == numerators_max_) {
                const double* e = numerators_->data();
                sums.max_logit = numerators_max_;
                // Gathered once, summed in id order, then divided as one
                // contiguous array (a loop the compiler vectorises).
                for (std::size_t i = 0; i < n; ++i) {
                    q[i] = e[static_cast<std::size_t>(kept_[i])];
                    sums.partition += q[i];
                }
                for (std::size_t i = 0; i < n; ++i) q[i] /= sums.partition;
            } else {
                sums = softmax_into(l.data(), kept_.data(), static_cast<std::int64_t>(n), q);
            }
            // The maximum's numerator is exp(0) = 1.
            largest_kept_prob_ = 1.0 / sums.partition;
            // Before any truncation or split, these sums are the logprob's
            // too: the finite ids of the penalised row (a -inf adds +0).
            if (kept_is_finite_ && !penalised_split_) {
                penalised_sums_ = sums;
                penalised_sums_valid_ = true;
            }
        } else {
            probs = pooled_doubles();
            softmax_over_ids(*logits_, kept_, *probs, arithmetic);
            largest_kept_prob_ = 1.0;  // rounded per operation: only a bound
        }
        kept_probs_ = std::move(probs);
        kept_probs_valid_ = true;
    }
    return kept_probs_;
}

const Values& RowState::kept_probs() { return *shared_kept_probs(); }

double RowState::largest_kept_prob() {
    shared_kept_probs();
    return largest_kept_prob_;
}

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
    if (!bucketed_ && n <= kSortWholeSet) {
        sort_whole_set();
    } else if (!bucketed_ && block * 16 <= n && ranked_count_ < 512) {
        // A block much smaller than the kept set (top-k, a peaked top-p): one
        // scan keeps only the keys that can be in it, and only they are sorted.
        select_first(block);
    } else {
        // Further (a broad top-p, a stack's rule): every kept id is keyed into
        // buckets that are in rank order, and buckets are sorted only as far
        // as the ranking is asked for. The rest of the row is never sorted.
        if (!bucketed_) bucket_keys();
        auto& working = t_working;
        while (ranked_count_ < target) {
            // The next bucket, already in place after the ranked prefix, sorted.
            const std::size_t begin = next_bucket_ == 0 ? 0 : bucket_ends_[next_bucket_ - 1];
            const std::size_t end = bucket_ends_[next_bucket_++];
            sort_bucket(rank_keys_.data() + begin, end - begin, working.key_temp, working.piece_starts);
            ranked_count_ = end;
        }
    }
    // Ids of the new ranks only: a select rebuilt the prefix, a bucket extended it.
    const std::size_t from = bucketed_ ? std::min(ranked_.size(), ranked_count_) : 0;
    ranked_.resize(ranked_count_);
    for (std::size_t i = from; i < ranked_count_; ++i) ranked_[i] = rank_keys_[i].id;
    return ranked_;
}

void RowState::sort_whole_set() {
    // Every kept key, sorted by comparison once: the ranking is complete.
    const std::size_t n = kept_.size();
    const double* l = logits_->data();
    rank_keys_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto id = kept_[i];
        rank_keys_[i] = RankKey{l[static_cast<std::size_t>(id)], static_cast<std::int32_t>(id)};
    }
    std::sort(rank_keys_.begin(), rank_keys_.end(), by_rank);
    ranked_.clear();
    ranked_count_ = n;
    next_bucket_ = kBuckets;
    bucketed_ = true;
}

void RowState::bucket_keys() {
    // A counting pass and a scatter: rank_keys_ then holds every kept id
    // with its logit, bucket after bucket in rank order, each bucket in
    // ascending id order, so sorting a bucket reads nothing else.
    auto& ends = bucket_ends_;
    ends.assign(kBuckets, 0);
    const std::size_t n = kept_.size();
    const double* l = logits_->data();
    const bool whole_row = n == vocab;
    if (whole_row) {
        for (std::size_t i = 0; i < n; ++i) ++ends[bucket_of(l[i])];
    } else {
        for (const auto id : kept_) ++ends[bucket_of(l[static_cast<std::size_t>(id)])];
    }
    std::uint32_t total = 0;
    for (auto& e : ends) {
        const std::uint32_t size = e;
        e = total;  // the bucket's start, until the scatter moves it to its end
        total += size;
    }
    rank_keys_.resize(n);
    RankKey* out = rank_keys_.data();
    if (whole_row) {
        for (std::size_t i = 0; i < n; ++i) out[ends[bucket_of(l[i])]++] = RankKey{l[i], static_cast<std::int32_t>(i)};
    } else {
        for (const auto id : kept_) {
            const double x = l[static_cast<std::size_t>(id)];
            out[ends[bucket_of(x)]++] = RankKey{x, id};
        }
    }
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
        const double* l = logits_->data();
        std::size_t i = 0;
        for (; i < vocab && !cut; ++i) consider(l[i], static_cast<std::int32_t>(i));
        // After the first cut nearly every id ranks after the worst kept: four
        // at a time are passed over by one comparison with its logit.
        while (i < vocab) {
            if (i + 4 <= vocab && std::max(std::max(l[i], l[i + 1]), std::max(l[i + 2], l[i + 3])) < worst.logit) {
                i += 4;
                continue;
            }
            consider(l[i], static_cast<std::int32_t>(i));
            ++i;
        }
    } else {
        for (const auto id : kept_) consider((*logits_)[static_cast<std::size_t>(id)], id);
    }
    if (rank_keys_.size() > count) cut_back();
    std::sort(rank_keys_.begin(), rank_keys_.end(), by_rank);
    ranked_count_ = rank_keys_.size();
}

// ---- for the runner -----------------------------------------------------------

void RowState::snapshot(StageTrace& out) {
    const bool changed = logits_dirty_ || kept_dirty_ || !probs_snapshot_;
    if (logits_dirty_ || !logits_snapshot_) {
        logits_snapshot_ = logits_;  // shared: the next write copies (own)
        logits_dirty_ = false;
    }
    if (kept_dirty_ || !kept_snapshot_) {
        auto kept = pooled_ids();
        kept->assign(kept_.begin(), kept_.end());
        kept_snapshot_ = std::move(kept);
        kept_dirty_ = false;
    }
    if (changed) {
        // q held when it is at hand or cheap (a truncated set) or wanted next
        // (the final distribution); a row-sized q is left for the trace's
        // reader to compute, from the same logits and kept set.
        const bool eager = kept_probs_valid_ || kept_.size() * 16 <= vocab || out.stage == Stage::Softmax;
        probs_snapshot_ = eager ? StageProbs(shared_kept_probs()) : StageProbs::from_logits(logits_snapshot_, kept_snapshot_);
    }
    if (!out.logits) out.logits = logits_snapshot_;
    if (!out.kept) out.kept = kept_snapshot_;
    if (!out.probs) out.probs = probs_snapshot_;
}

double RowState::contract_logprob(std::int32_t token) {
    const std::shared_ptr<Values>& row = penalised_split_ ? penalised_ : logits_;
    const Values& values = *row;
    // The caller's memo (pipeline.h LogprobMemo), in f64 runs only (a float32 rerun's row is another row).
    LogprobMemo* memo = arithmetic == Arithmetic::F64 ? input.logprob_memo : nullptr;
    if (!penalised_sums_valid_) {
        if (memo && memo->row && memo->row->size() == values.size() &&
            std::memcmp(memo->row->data(), values.data(), values.size() * sizeof(double)) == 0) {
            penalised_sums_ = SoftmaxSums{memo->max_logit, memo->partition};
        } else {
            penalised_sums_ = row_softmax_sums(values.data(), static_cast<std::int64_t>(values.size()));
        }
        penalised_sums_valid_ = true;
    }
    if (memo && memo->row != row) {
        memo->row = row;
        memo->max_logit = penalised_sums_.max_logit;
        memo->partition = penalised_sums_.partition;
    }
    return log_softmax_at(values[static_cast<std::size_t>(token)], penalised_sums_.max_logit, penalised_sums_.partition);
}

PenaltyScope last_n_scope(const RowState& row) {
    const auto n = static_cast<std::size_t>(row.pipeline.penalty_last_n);
    const std::size_t from_output = std::min(n, row.input.output_ids.size());
    const std::size_t from_prompt = std::min(n - from_output, row.input.prompt_ids.size());
    std::map<std::int32_t, std::uint32_t> counts;
    for (const auto id : row.input.prompt_ids.last(from_prompt)) ++counts[static_cast<std::int32_t>(id)];
    for (const auto id : row.input.output_ids.last(from_output)) ++counts[static_cast<std::int32_t>(id)];
    PenaltyScope scope;
    for (const auto& [id, count] : counts) {
        scope.ids.push_back(id);
        scope.counts.push_back(count);
    }
    return scope;
}

bool penalty_window_open(const Pipeline& pipeline, const PipelineStep& step) {
    const bool windowed = step.rule == Rule::RepetitionLastN || step.rule == Rule::PresenceFrequencyLastN;
    return !windowed || pipeline.penalty_last_n > 0;
}

}  // namespace samplescope
