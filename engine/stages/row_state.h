// The row as the stage units see and change it during one run of a pipeline:
// the current logits, the kept set, the penalised logits the logprob needs,
// the ids the current truncation step decides on, and the caches that let a
// trace at V = 128,256 stay cheap (a lazily extended rank order, the whole
// row's softmax numerators once computed, logits shared with the trace's
// snapshots until written). Units change the row only through the methods
// below, so the runner knows what each stage changed and records only that.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/core/row_math.h"
#include "engine/core/token_history.h"
#include "engine/core/trace.h"
#include "engine/stages/pipeline.h"

namespace samplescope {

// A keep-or-drop decision this close to its threshold gets the "near the
// boundary" badge: the stacks compute in float32, so an f64 model may disagree
// with them there (docs/pipelines.md).
inline constexpr double kNearBoundary = 1e-6;

// x as `arithmetic` holds it: unchanged in F64; in F32 rounded to the nearest
// float32 (ties to even), overflowing to +-inf as a float32 operation would.
// Inline: every operation of a run goes through it.
inline double in_arithmetic(Arithmetic arithmetic, double x) {
    if (arithmetic == Arithmetic::F64 || !std::isfinite(x)) return x;
    // The float32 overflow threshold: FLT_MAX plus half an ulp (2^127 x (2 - 2^-24)).
    constexpr double kOverflow = 3.4028235677973366e38;
    if (std::fabs(x) >= kOverflow) return std::copysign(HUGE_VAL, x);
    return static_cast<double>(static_cast<float>(x));
}

// Softmax over `ids` (ascending) at `logits`, aligned with ids: max-subtracted,
// the partition summed sequentially in ascending id order (contract section 2).
// In F32, each numerator exp(l - M) and each quotient is rounded to float32
// (the partition is summed in f64 and rounded once: the stacks' vectorised
// float sums are not in id order, and this is nearer to them than a serial
// float32 sum).
Values softmax_over_ids(const Values& logits, const IdList& ids, Arithmetic arithmetic = Arithmetic::F64);
void softmax_over_ids(const Values& logits, const IdList& ids, Values& probs,
                      Arithmetic arithmetic = Arithmetic::F64);

// `ids` in rank order: logit descending, then id ascending. Where a stack
// sorts unstably this is the order the preset assumes (lower id first). With
// `prefix`, only the first `prefix` ranks are in order (the rest follow them,
// unordered): O(n + prefix log prefix) instead of O(n log n).
IdList rank_order(const Values& logits, const IdList& ids, std::size_t prefix = SIZE_MAX);

class RowState {
    // The history when the caller did not count it (declared first: `history` refers to it).
    std::unique_ptr<const HistoryCounts> own_history_;

public:
    // `history`, when given, is the input's history already counted (and
    // checked against V); else it is counted here.
    // In F32 `input` is already rounded to float32 (the runner's copy) and the
    // run never traces.
    RowState(const Pipeline& pipeline, const PipelineInput& input, bool tracing, const HistoryCounts* history,
             Arithmetic arithmetic = Arithmetic::F64);
    // A kept id beside its logit, as the ranking sorts them. Made without
    // values when not given any: the bucketing sizes its array for every
    // kept id and writes each key once, with no zero-filling before.
    struct RankKey {
        RankKey() {}  // NOLINT: left unset on purpose
        RankKey(double logit_in, std::int32_t id_in) : logit(logit_in), id(id_in) {}
        double logit;
        std::int32_t id;
    };

    RowState(const RowState&) = delete;
    RowState& operator=(const RowState&) = delete;
    ~RowState();

    const Pipeline& pipeline;
    const PipelineInput& input;
    const SamplingParams& params;
    const std::size_t vocab;
    const bool tracing;
    const Arithmetic arithmetic;
    const HistoryCounts& history;

    // A result as this run's arithmetic holds it (see in_arithmetic).
    double r(double x) const { return in_arithmetic(arithmetic, x); }

    const Values& logits() const { return *logits_; }
    const IdList& kept() const { return kept_; }
    // The ids the current truncation step decides on: the kept set, or for a
    // joint step the set the first step of its group saw.
    const IdList& candidates() const { return joint_ ? group_input_ : kept_; }
    bool joint() const { return joint_; }

    // Greedy: the chosen token, and whether a draw still follows (llama.cpp's
    // temperature <= 0 keeps the maximum and draws over it).
    std::int32_t greedy_token = -1;
    bool draw_after_greedy = false;
    // Mirostat: whether its step ran, and mu as that step saw it (the runner
    // updates mu from the drawn token).
    bool mirostat_ran = false;
    double mirostat_mu = 0.0;

    // ---- changes --------------------------------------------------------
    // A penalty: `apply(logit, index)` gives the new logit of ids[index]; it is
    // applied to the current and to the penalised logits. Refuses +inf or NaN
    // (naming the first such id of `ids`) and drops ids pushed to -inf.
    template <class Apply>
    void penalise(std::span<const std::int32_t> ids, const char* penalty, Apply apply) {
        Values& l = own(logits_);
        Values* penalised = penalised_split_ ? &own(penalised_) : nullptr;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const auto id = static_cast<std::size_t>(ids[i]);
            l[id] = r(apply(l[id], i));
            if (penalised) (*penalised)[id] = r(apply((*penalised)[id], i));
        }
        after_penalty(ids, penalty);
    }
    // Temperature: l / T over the kept ids (refusing an overflow).
    void scale(double temperature);
    // A truncation's result: ascending ids, a non-empty subset of the kept set
    // (for a joint step the runner intersects it with the kept set).
    void set_kept(IdList kept);
    // The same, when the first `count` ids of the rank order are what stays.
    void keep_ranked_prefix(std::size_t count);

    // ---- what the units read ---------------------------------------------
    // q over the kept set, aligned with kept().
    const Values& kept_probs();
    std::shared_ptr<const Values> shared_kept_probs();
    // No q of the kept set exceeds this (in f64 it is the largest q itself).
    double largest_kept_prob();
    // The first min(count, n) ids of the kept set in rank order (possibly a
    // few more). Extended lazily: a peaked row never sorts, nor even keys, its tail.
    const IdList& ranked(std::size_t count);
    std::size_t ranked_count() const { return ranked_count_; }

    // ---- for the runner ----------------------------------------------------
    void begin_step(const PipelineStep& step, bool truncation_before);
    // Snapshots of what changed since the last record, shared pointers to what did not.
    void snapshot(StageTrace& out);
    // log_softmax over all V ids of the penalised logits at `token`.
    double contract_logprob(std::int32_t token);

private:
    static Values& own(std::shared_ptr<Values>& array);
    void after_penalty(std::span<const std::int32_t> touched, const char* penalty);
    void split_penalised();
    void select_first(std::size_t count);
    void bucket_keys();
    void sort_whole_set();

    // The current logits, shared with a trace's snapshot until written.
    std::shared_ptr<Values> logits_;
    IdList kept_;
    IdList group_input_;
    bool joint_ = false;
    std::shared_ptr<Values> penalised_;  // the penalised logits, once a later step changed logits_ (else logits_ is them)
    bool penalised_split_ = false;
    bool kept_is_finite_ = true;  // no truncation yet: kept_ holds every finite id

    // Caches.
    std::shared_ptr<Values> kept_probs_;  // pooled; a new one whenever the kept set or the logits change
    bool kept_probs_valid_ = false;
    double largest_kept_prob_ = 1.0;
    // exp(l - M) over the whole row from the last q over every id, M the
    // row's maximum (none once the logits change).
    std::shared_ptr<Values> numerators_;
    double numerators_max_ = 0.0;
    bool any_joint_ = false;
    IdList ranked_;
    std::vector<RankKey> rank_keys_;  // the kept ids with their logits, the first ranked_count_ in rank order
    std::size_t ranked_count_ = 0;
    bool ranked_valid_ = false;
    // Once bucketed, rank_keys_ holds every kept id with its logit, in
    // buckets in rank order, bucket_ends_[b] where bucket b ends; its first
    // ranked_count_ keys (the buckets sorted so far) are in rank order.
    bool bucketed_ = false;
    std::vector<std::uint32_t> bucket_ends_;
    std::size_t next_bucket_ = 0;
    SoftmaxSums penalised_sums_{0.0, 0.0};
    bool penalised_sums_valid_ = false;

    // What changed since the last snapshot.
    bool logits_dirty_ = true;
    bool kept_dirty_ = true;
    std::shared_ptr<const Values> logits_snapshot_;
    std::shared_ptr<const IdList> kept_snapshot_;
    StageProbs probs_snapshot_;
};

// The ids a last-N penalty rule covers, with their counts: llama.cpp's ring
// buffer of the last N accepted tokens, the prompt's tail first
// (ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_penalties_apply).
struct PenaltyScope {
    std::vector<std::int32_t> ids;       // distinct, ascending
    std::vector<std::uint32_t> counts;   // aligned with ids, each > 0
};
PenaltyScope last_n_scope(const RowState& row);

// Whether a penalty step reads its parameters: a last-N rule with a window of 0 reads nothing.
bool penalty_window_open(const Pipeline& pipeline, const PipelineStep& step);

}  // namespace samplescope
