#include "engine/pipelines/pipeline_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/core/element_math.h"

namespace samplescope {

Values softmax_over_ids(const Values& logits, const IdList& ids) {
    double max_logit = -std::numeric_limits<double>::infinity();
    for (const auto id : ids) max_logit = std::max(max_logit, logits[id]);
    Values probs(ids.size());
    double partition = 0.0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        probs[i] = softmax_numerator(logits[ids[i]], max_logit);
        partition += probs[i];
    }
    for (auto& q : probs) q /= partition;
    return probs;
}

IdList rank_order(const Values& logits, const IdList& ids) {
    IdList ranked = ids;
    std::sort(ranked.begin(), ranked.end(),
              [&logits](std::int32_t a, std::int32_t b) { return ranks_before(logits[a], a, logits[b], b); });
    return ranked;
}

bool truncation_active(Rule rule, const SamplingParams& params, std::size_t vocab_size) {
    switch (rule_info(rule).stage) {
        case Stage::TopK: return uses_top_k(params, vocab_size);
        case Stage::TopP: return uses_top_p(params);
        case Stage::MinP: return uses_min_p(params);
        default: return false;
    }
}

namespace {

bool near(double a, double b) { return std::fabs(a - b) <= kNearBoundary; }

// Everything a rule needs about its candidates, in rank order.
struct Ranked {
    IdList ids;    // rank order
    Values probs;  // q of each, in rank order (softmax over the candidates)
};

Ranked ranked_candidates(const TruncationView& view) {
    const Values probs = softmax_over_ids(view.logits, view.candidates);
    Values prob_of_id(view.logits.size(), 0.0);
    for (std::size_t i = 0; i < view.candidates.size(); ++i) prob_of_id[view.candidates[i]] = probs[i];
    Ranked ranked;
    ranked.ids = rank_order(view.logits, view.candidates);
    ranked.probs.reserve(ranked.ids.size());
    for (const auto id : ranked.ids) ranked.probs.push_back(prob_of_id[id]);
    return ranked;
}

IdList ascending(IdList ids) {
    std::sort(ids.begin(), ids.end());
    return ids;
}

// The first `count` ids of the rank order, kept; the top-p trace fields from them.
void keep_prefix(const Ranked& ranked, std::size_t count, TruncationOutcome& out, bool with_walk) {
    out.kept = ascending(IdList(ranked.ids.begin(), ranked.ids.begin() + static_cast<std::ptrdiff_t>(count)));
    if (!with_walk) return;
    auto walk_ids = std::make_shared<IdList>();
    auto walk_mass = std::make_shared<Values>();
    double mass = 0.0;
    for (std::size_t i = 0; i < count; ++i) {
        mass += ranked.probs[i];
        walk_ids->push_back(ranked.ids[i]);
        walk_mass->push_back(mass);
    }
    out.crossing_rank = count;
    out.crossing_id = ranked.ids[count - 1];
    out.crossing_mass = mass;
    out.walk_ids = std::move(walk_ids);
    out.walk_mass = std::move(walk_mass);
}

// Whether ranks `last_kept` and `last_kept + 1` hold equal logits: an unstable
// sort could have put either on the kept side.
bool tie_across(const TruncationView& view, const Ranked& ranked, std::size_t kept_count) {
    if (kept_count == 0 || kept_count >= ranked.ids.size()) return false;
    return view.logits[ranked.ids[kept_count - 1]] == view.logits[ranked.ids[kept_count]];
}

// ---- top-k -------------------------------------------------------------

TruncationOutcome top_k(Rule rule, const TruncationView& view) {
    TruncationOutcome out;
    const Ranked ranked = ranked_candidates(view);
    const std::size_t n = ranked.ids.size();
    const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(view.params.top_k), n);
    const double kth = view.logits[ranked.ids[k - 1]];
    out.kth_logit = kth;
    if (k < n) {
        const double next = view.logits[ranked.ids[k]];
        out.near_boundary = std::fabs(kth - next) <= kNearBoundary * std::max(1.0, std::fabs(kth));
    }
    switch (rule) {
        case Rule::TopKContract:
            // The contract: the first k by (logit desc, id asc).
            keep_prefix(ranked, k, out, false);
            break;
        case Rule::TopKExactUnstable:
            // SGLang torch: positions >= k of a descending sort are zeroed;
            // llama.cpp: partial_sort then size = k. Exactly k either way.
            keep_prefix(ranked, k, out, false);
            out.tie_at_boundary = tie_across(view, ranked, k);
            break;
        case Rule::TopKKeepTies:
            // vLLM: logits_sort < (k-th value) are masked; HF: scores < topk(...)[-1].
            for (const auto id : view.candidates) {
                if (!(view.logits[id] < kth)) out.kept.push_back(id);
            }
            break;
        case Rule::TopKFlashInfer: {
            // FlashInfer: t survives when #{j : p_j > p_t} < k, counted on
            // probabilities, so ties by value stay together. In rank order q is
            // non-increasing, so the count is the start of t's run of equal q.
            std::size_t run_start = 0;
            for (std::size_t i = 0; i < n; ++i) {
                if (i > 0 && ranked.probs[i] != ranked.probs[i - 1]) run_start = i;
                if (run_start < k) out.kept.push_back(ranked.ids[i]);
            }
            out.kept = ascending(std::move(out.kept));
            break;
        }
        default: break;
    }
    return out;
}

// ---- top-p -------------------------------------------------------------

TruncationOutcome top_p(Rule rule, const TruncationView& view) {
    TruncationOutcome out;
    const Ranked ranked = ranked_candidates(view);
    const std::size_t n = ranked.ids.size();
    const double p = view.params.top_p;
    switch (rule) {
        case Rule::TopPContract:
        case Rule::TopPInclusiveCumsum: {
            // Contract: walking in rank order, the id whose running mass first
            // reaches p is the last kept. llama.cpp: cum_sum += p_i; the first i
            // with cum_sum >= p gives last_idx = i + 1 (all kept if none does).
            double mass = 0.0;
            std::size_t count = n;
            double before = 0.0;
            for (std::size_t i = 0; i < n; ++i) {
                before = mass;
                mass += ranked.probs[i];
                if (top_p_reached(mass, p)) {
                    count = i + 1;
                    break;
                }
            }
            out.near_boundary = near(before, p) || (count < n && near(mass, p));
            keep_prefix(ranked, count, out, true);
            if (rule == Rule::TopPInclusiveCumsum) out.tie_at_boundary = tie_across(view, ranked, count);
            break;
        }
        case Rule::TopPAscendingCumsum: {
            // vLLM / HF: sort ascending, cumsum, mask cumsum <= 1 - p, and the
            // last (largest) position is always kept. Ascending order is the
            // reverse of the rank order, so among equal values the lower id
            // sits later and survives.
            const double threshold = 1.0 - p;
            double cumsum = 0.0;
            std::size_t dropped = 0;  // the masked positions form a prefix of the ascending order
            for (std::size_t j = 0; j < n; ++j) {
                const std::size_t i = n - 1 - j;
                cumsum += ranked.probs[i];
                const bool masked = cumsum <= threshold && j + 1 < n;
                if (near(cumsum, threshold)) out.near_boundary = true;
                if (!masked) break;
                ++dropped;
            }
            keep_prefix(ranked, n - dropped, out, true);
            out.tie_at_boundary = tie_across(view, ranked, n - dropped);
            break;
        }
        case Rule::TopPExclusivePrefix: {
            // SGLang torch: probs_sum = cumsum of the descending sort; positions
            // with (probs_sum - probs_sort) > p are zeroed, elementwise.
            double probs_sum = 0.0;
            std::vector<bool> keep(n, false);
            for (std::size_t i = 0; i < n; ++i) {
                probs_sum += ranked.probs[i];
                const double prefix = probs_sum - ranked.probs[i];
                keep[i] = !(prefix > p);
                if (near(prefix, p)) out.near_boundary = true;
            }
            std::size_t last = 0;
            for (std::size_t i = 0; i < n; ++i) {
                if (keep[i]) {
                    out.kept.push_back(ranked.ids[i]);
                    last = i;
                }
                if (i + 1 < n && keep[i] != keep[i + 1] &&
                    view.logits[ranked.ids[i]] == view.logits[ranked.ids[i + 1]]) {
                    out.tie_at_boundary = true;
                }
            }
            out.kept = ascending(std::move(out.kept));
            auto kept_sorted = out.kept;
            keep_prefix(ranked, last + 1, out, true);  // the walk up to the last kept position
            out.kept = std::move(kept_sorted);
            break;
        }
        case Rule::TopPMassAboveByValue: {
            // FlashInfer: t is accepted when the mass of ids with p_j > p_t is
            // < top_p. Runs of equal q share that mass, so they stay or go together.
            double above = 0.0;  // mass of the runs before the current one
            double run_mass = 0.0;
            std::size_t count = 0;
            for (std::size_t i = 0; i < n; ++i) {
                if (i > 0 && ranked.probs[i] != ranked.probs[i - 1]) {
                    above += run_mass;
                    run_mass = 0.0;
                }
                if (near(above, p)) out.near_boundary = true;
                if (!(above < p)) break;
                run_mass += ranked.probs[i];
                count = i + 1;
            }
            if (count == 0) {
                // top_p = 0 accepts nothing under this rule; keep the top run of
                // equal values rather than an empty set.
                count = 1;
                while (count < n && ranked.probs[count] == ranked.probs[0]) ++count;
                out.note = "top_p = 0 accepts no id under FlashInfer's rule; the top value is kept";
            }
            keep_prefix(ranked, count, out, true);
            break;
        }
        default: break;
    }
    return out;
}

// ---- min-p -------------------------------------------------------------

TruncationOutcome min_p(Rule rule, const TruncationView& view) {
    TruncationOutcome out;
    const Values probs = softmax_over_ids(view.logits, view.candidates);
    const double max_prob = *std::max_element(probs.begin(), probs.end());
    out.max_prob = max_prob;
    out.prob_floor = min_p_floor(max_prob, view.params.min_p);
    if (rule == Rule::MinPProb) {
        // vLLM, HF, SGLang, FlashInfer and the contract: q < min_p x max q is dropped.
        for (std::size_t i = 0; i < probs.size(); ++i) {
            if (min_p_keeps(probs[i], *out.prob_floor)) out.kept.push_back(view.candidates[i]);
            if (std::fabs(probs[i] - *out.prob_floor) <= kNearBoundary * max_prob) out.near_boundary = true;
        }
    } else {
        // llama.cpp: min_logit = max_logit + logf(p); keep logit >= min_logit.
        double max_logit = -std::numeric_limits<double>::infinity();
        for (const auto id : view.candidates) max_logit = std::max(max_logit, view.logits[id]);
        const double min_logit = max_logit + std::log(view.params.min_p);
        for (const auto id : view.candidates) {
            if (view.logits[id] >= min_logit) out.kept.push_back(id);
            if (near(view.logits[id], min_logit)) out.near_boundary = true;
        }
    }
    return out;
}

}  // namespace

TruncationOutcome apply_truncation(Rule rule, const TruncationView& view) {
    switch (rule_info(rule).stage) {
        case Stage::TopK: return top_k(rule, view);
        case Stage::TopP: return top_p(rule, view);
        case Stage::MinP: return min_p(rule, view);
        default: break;
    }
    TruncationOutcome unchanged;
    unchanged.kept = view.candidates;
    return unchanged;
}

}  // namespace samplescope
