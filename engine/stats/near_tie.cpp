#include "engine/stats/near_tie.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/core/element_math.h"

namespace samplescope {

std::string_view verdict_name(Verdict verdict) {
    switch (verdict) {
        case Verdict::Equal: return "equal";
        case Verdict::NearTie: return "near-tie";
        case Verdict::Mismatch: return "mismatch";
    }
    return "mismatch";
}

bool within_delta(double a, double b, double delta) {
    if (a == b) return true;
    if (!std::isfinite(a) || !std::isfinite(b)) return false;
    const double scale = std::max({1.0, std::fabs(a), std::fabs(b)});
    return std::fabs(a - b) <= delta * scale;
}

Verdict worst(Verdict a, Verdict b) { return static_cast<int>(a) > static_cast<int>(b) ? a : b; }

void CompareCounts::add(Verdict verdict) {
    ++rows;
    switch (verdict) {
        case Verdict::Equal: ++equal; break;
        case Verdict::NearTie: ++near_tie; break;
        case Verdict::Mismatch: ++mismatch; break;
    }
}

namespace {

double logit_at(const StageTrace& stage, std::int32_t id) {
    if (!stage.logits || id < 0 || static_cast<std::size_t>(id) >= stage.logits->size()) {
        return -std::numeric_limits<double>::infinity();
    }
    return (*stage.logits)[static_cast<std::size_t>(id)];
}

std::size_t position_in(const IdList& ids, std::int32_t id) {
    return static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
}

// The mass of the ids ranked before `id` in the distribution top-p saw.
double exclusive_prefix_mass(const SampleTrace& reference, std::int32_t id) {
    const StageTrace& input = reference.stage(Stage::TopK);  // what top-p received
    const StageTrace& top_p = reference.stage(Stage::TopP);
    const double own = logit_at(top_p, id);
    double mass = 0.0;
    const IdList& ids = *input.kept;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ranks_before(logit_at(top_p, ids[i]), ids[i], own, id)) mass += (*input.probs)[i];
    }
    return mass;
}

bool decision_near_threshold(const SampleTrace& reference, std::int32_t id, double delta) {
    if (reference.greedy) {
        const StageTrace& greedy = reference.stage(Stage::Greedy);
        return within_delta(logit_at(greedy, id), logit_at(greedy, reference.token), delta);
    }
    const StageTrace& top_k = reference.stage(Stage::TopK);
    if (top_k.active && top_k.kth_logit) {
        // Dropped: its logit is at the k-th. Kept: the best dropped logit is at its own.
        const double own = logit_at(top_k, id);
        if (!top_k.keeps(id)) {
            if (within_delta(own, *top_k.kth_logit, delta)) return true;
        } else {
            const StageTrace& before = reference.stage(Stage::Temperature);
            double best_dropped = -std::numeric_limits<double>::infinity();
            for (const auto other : *before.kept) {
                if (!top_k.keeps(other)) best_dropped = std::max(best_dropped, logit_at(top_k, other));
            }
            if (within_delta(own, best_dropped, delta)) return true;
        }
    }
    const StageTrace& top_p = reference.stage(Stage::TopP);
    if (top_p.active && top_k.keeps(id) &&
        within_delta(exclusive_prefix_mass(reference, id), reference.params.top_p, delta)) {
        return true;
    }
    const StageTrace& min_p = reference.stage(Stage::MinP);
    if (min_p.active && top_p.keeps(id) && min_p.prob_floor &&
        within_delta(top_p.prob_of(id), *min_p.prob_floor, delta)) {
        return true;
    }
    return false;
}

}  // namespace

Verdict compare_token(const SampleTrace& reference, std::int32_t token, double delta) {
    if (token == reference.token) return Verdict::Equal;
    if (token < 0 || static_cast<std::size_t>(token) >= reference.vocab_size) return Verdict::Mismatch;
    if (reference.greedy || !reference.u) {
        const StageTrace& greedy = reference.stage(Stage::Greedy);
        return within_delta(logit_at(greedy, token), logit_at(greedy, reference.token), delta) ? Verdict::NearTie
                                                                                                : Verdict::Mismatch;
    }
    const IdList& kept = reference.final_kept();
    const Values& cumulative = reference.cumulative;
    if (cumulative.empty()) return Verdict::Mismatch;
    const std::size_t a = position_in(kept, reference.token);
    const std::size_t b = position_in(kept, token);
    // The boundaries between the two tokens' intervals (one to either side when
    // the other token is absent from the kept set and b is only its insertion point).
    const std::size_t first = std::min(a, b) == 0 ? 0 : std::min(a, b) - 1;
    const std::size_t last = std::min(std::max(a, b), cumulative.size() - 1);
    for (std::size_t j = first; j <= last; ++j) {
        if (std::fabs(*reference.u - cumulative[j]) <= delta) return Verdict::NearTie;
    }
    return Verdict::Mismatch;
}

Verdict compare_kept(const SampleTrace& reference, std::span<const std::int32_t> kept, double delta,
                     std::vector<std::int32_t>* mismatched) {
    const IdList& ref = reference.final_kept();
    std::vector<std::int32_t> differing;
    std::set_symmetric_difference(ref.begin(), ref.end(), kept.begin(), kept.end(), std::back_inserter(differing));
    if (differing.empty()) return Verdict::Equal;
    Verdict verdict = Verdict::NearTie;
    for (const auto id : differing) {
        if (id >= 0 && static_cast<std::size_t>(id) < reference.vocab_size &&
            decision_near_threshold(reference, id, delta)) {
            continue;
        }
        verdict = Verdict::Mismatch;
        if (mismatched) mismatched->push_back(id);
    }
    return verdict;
}

Verdict compare_logprob(double reference, double other, double tolerance) {
    return std::fabs(reference - other) <= tolerance ? Verdict::Equal : Verdict::Mismatch;
}

double reference_logprob_of(const SampleTrace& reference, std::int32_t id) {
    const StageTrace& penalised = reference.stage(Stage::PresenceFrequency);
    const Values& logits = *penalised.logits;
    double max_logit = -std::numeric_limits<double>::infinity();
    for (const double x : logits) {
        if (std::isfinite(x)) max_logit = std::max(max_logit, x);
    }
    double partition = 0.0;  // ascending ids, one after another, as the reference sums
    for (const double x : logits) {
        if (std::isfinite(x)) partition += softmax_numerator(x, max_logit);
    }
    return log_softmax_at(logits[static_cast<std::size_t>(id)], max_logit, partition);
}

}  // namespace samplescope
