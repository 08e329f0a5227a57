// What one sampling step did, stage by stage: enough for a GUI or a CLI to show
// every number without recomputing any of them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/sampling_params.h"
#include "engine/core/stage.h"

namespace samplescope {

using IdList = std::vector<std::int32_t>;
using Values = std::vector<double>;

// A stage's q: softmax over its kept set at its logits, aligned with the kept
// set. Held when the run computed it anyway (a truncated set, the final
// distribution); for a row-sized stage (the raw logits, a penalty,
// temperature) computed from the stage's logits and kept set the first time
// it is read, with the same arithmetic as the run would have used, so the
// same bits, and kept from then on. A trace at V = 10^6 then holds no
// row-sized q that nobody reads. Reads from several threads are safe.
class StageProbs {
public:
    StageProbs() = default;
    // Held values (a null pointer: none).
    StageProbs(std::shared_ptr<const Values> held) : held_(std::move(held)) {}  // NOLINT: stands in for the pointer
    // Computed from `logits` (all V) over `kept` (ascending, finite) when first read.
    static StageProbs from_logits(std::shared_ptr<const Values> logits, std::shared_ptr<const IdList> kept);

    explicit operator bool() const { return held_ || lazy_; }
    const Values& operator*() const { return *get(); }
    const Values* operator->() const { return get().get(); }
    // The values, computed now if they were not yet.
    const std::shared_ptr<const Values>& get() const;
    // Whether reading costs nothing (held, or computed before).
    bool ready() const;
    // The values for one look, without keeping them when they were not kept
    // already (a reader that passes over each stage once, such as --full).
    std::shared_ptr<const Values> once() const;
    // Takes `earlier`'s computed values instead of computing its own when both
    // are computed from the logits and kept set (not held) and those are equal
    // value for value, so the result is the same by construction: a reader of
    // the next trace of an unchanged stage pays nothing. True when this q is
    // computed after the call (taken now, or computed before).
    bool adopt(const StageProbs& earlier) const;
    // Whether it is computed from the logits and kept set it was made with
    // (from_logits) rather than held: two such q of the same two arrays are
    // the same q.
    bool computed_from_logits() const { return lazy_ != nullptr; }

private:
    struct Lazy;
    std::shared_ptr<const Values> held_;
    std::shared_ptr<Lazy> lazy_;
};

struct StageTrace {
    Stage stage = Stage::Widen;
    bool active = false;
    // The V logits after this stage. Truncation stages do not change logits: a
    // dropped id keeps its value and is simply absent from `kept`.
    std::shared_ptr<const Values> logits;
    // The ids still in play after this stage, ascending. Before truncation these
    // are the ids with a finite logit.
    std::shared_ptr<const IdList> kept;
    // Softmax over `kept` at this stage, aligned with `kept` (sums to 1).
    StageProbs probs;

    // Thresholds, set on the stage that used them.
    std::optional<double> kth_logit;            // top-k: the k-th logit in rank order
    std::optional<std::size_t> crossing_rank;   // top-p: 1-based rank of the token that reached p
    std::optional<std::int32_t> crossing_id;    // top-p: that token's id
    std::optional<double> crossing_mass;        // top-p: the running mass at that token
    std::optional<double> max_prob;             // min-p: max q over the kept set it saw
    std::optional<double> prob_floor;           // min-p: min_p x max q
    std::optional<double> entropy;              // typical-p: H = -sum q log q over the ids it saw (nats)
    std::optional<double> max_logit;            // top-n-sigma: the largest candidate logit
    std::optional<double> logit_mean;           // top-n-sigma: the candidates' mean logit
    std::optional<double> logit_sigma;          // top-n-sigma: their population standard deviation
    std::optional<double> logit_floor;          // top-n-sigma: max - n x sigma (logits below it are dropped)
    // temperature with a dynamic range: the temperature the entropy gave
    // (entropy above, max_entropy = log n over the n candidates).
    std::optional<double> temperature_used;
    std::optional<double> max_entropy;
    // DRY: each penalised id (ascending), the repeat it would extend, its
    // penalty; and the cap a sequence breaker put on the repeats.
    std::shared_ptr<const IdList> dry_ids;
    std::shared_ptr<const std::vector<std::int64_t>> dry_lengths;
    std::shared_ptr<const Values> dry_penalties;
    std::optional<std::size_t> dry_repeat_limit;
    // XTC: the coin (label 6), whether it fired, and the ids it removes when
    // it fires (removed from the kept set only when it did).
    std::optional<double> xtc_coin;
    std::optional<bool> xtc_fired;
    std::shared_ptr<const IdList> xtc_removed;
    // mirostat: mu before the step; v1 also the Zipf exponent s and the k it gave.
    std::optional<double> mirostat_mu;
    std::optional<double> mirostat_s_hat;
    std::optional<double> mirostat_k;

    // top-p: the ids it walked, in rank order, up to and including the crossing
    // one (typical-p: in its own order, by |-log q - H|),
    // one, with the running mass after each (the cumulative curve of the plot).
    std::shared_ptr<const IdList> walk_ids;
    std::shared_ptr<const Values> walk_mass;

    std::size_t kept_count() const { return kept ? kept->size() : 0; }
    // q of an id at this stage, 0 when it is not kept.
    double prob_of(std::int32_t id) const;
    bool keeps(std::int32_t id) const;
};

struct SampleTrace {
    std::size_t vocab_size = 0;
    SamplingParams params;         // as given, with the seed that was used filled in
    std::uint64_t seed = 0;
    // One per Stage in kStages order for the contract's sampler; a pipeline's
    // trace (engine/stages/pipeline.h) holds its own stages in its own order.
    std::vector<StageTrace> stages;

    std::int32_t token = -1;
    double logprob = 0.0;          // log_softmax over all V ids after the penalties
    bool greedy = false;
    std::optional<double> u;       // the uniform drawn; none when greedy
    Values cumulative;             // the inverse-CDF walk: running sums aligned with final_kept()
    bool fell_back = false;        // u was not below the last cumulative sum (rounding)
    std::uint64_t draws_before = 0;  // draws the request had consumed before this step
    std::uint64_t draws_consumed = 0;  // and after it
    // The keys of the parameters set away from their default that no step of
    // the pipeline read: the table's in its order, then the lists.
    std::vector<std::string> ignored_params;

    // The stage's trace, found by its Stage (a pipeline's order may differ from kStages).
    const StageTrace* find_stage(Stage s) const {
        for (const auto& st : stages) {
            if (st.stage == s) return &st;
        }
        return nullptr;
    }
    // Every trace holds Widen, Softmax and Draw; the contract's holds every
    // stage. Throws std::out_of_range naming a stage this trace does not hold.
    const StageTrace& stage(Stage s) const;
    // The final kept set, ascending ({token} when greedy).
    const IdList& final_kept() const { return *stage(Stage::Softmax).kept; }
    const Values& final_probs() const { return *stage(Stage::Softmax).probs; }
};

// The lean result, for callers that only want the token.
struct SampleResult {
    std::int32_t token = -1;
    double logprob = 0.0;
    std::optional<double> u;
    std::size_t kept_count = 0;
};

}  // namespace samplescope
