#include "ui/panels/knob_notes.h"

#include <algorithm>
#include <cstdio>

namespace samplescope::ui {

namespace {

// The stage before `stage` in the trace's own order (what it received).
const StageTrace* inputOf(const SampleTrace& trace, Stage stage) {
    const StageTrace* before = nullptr;
    for (const auto& st : trace.stages) {
        if (st.stage == stage) return before;
        before = &st;
    }
    return nullptr;
}

bool sameLogits(const StageTrace& a, const StageTrace& b) {
    if (!a.logits || !b.logits) return false;
    return a.logits == b.logits || *a.logits == *b.logits;
}

// Four significant digits: enough to compare with a threshold, short enough for a badge's tooltip.
std::string shortNumber(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", x);
    return text;
}

std::string count(std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

KnobNotes knob_notes(const SampleTrace& trace) {
    KnobNotes notes;
    notes.params = trace.params;
    const auto set = [&notes](Param param, std::string reason) {
        auto& slot = notes.reasons[static_cast<std::size_t>(param)];
        if (!slot) slot = std::move(reason);
    };
    const SamplingParams& p = trace.params;
    const StageTrace* widen = trace.find_stage(Stage::Widen);
    if (!widen) return notes;
    const std::size_t candidates = widen->kept_count();

    if (candidates == 1) {
        for (std::size_t i = 0; i < kContractParamCount; ++i) {
            set(kParams[i].param, "only one token has a finite logit: it is chosen whatever the parameters");
        }
        return notes;
    }

    // The penalties: on, yet no logit moved.
    if (const StageTrace* st = trace.find_stage(Stage::RepetitionPenalty); st && st->active) {
        if (const StageTrace* in = inputOf(trace, Stage::RepetitionPenalty); in && sameLogits(*st, *in)) {
            set(Param::RepetitionPenalty,
                "changes no logit: no id of the prompt or output has a finite, non-zero logit in this row");
        }
    }
    if (const StageTrace* st = trace.find_stage(Stage::PresenceFrequency); st && st->active) {
        if (const StageTrace* in = inputOf(trace, Stage::PresenceFrequency); in && sameLogits(*st, *in)) {
            const std::string reason = "changes no logit: no id has been generated yet (presence and frequency "
                                       "apply to generated ids only)";
            if (p.presence_penalty != 0.0) set(Param::PresencePenalty, reason);
            if (p.frequency_penalty != 0.0) set(Param::FrequencyPenalty, reason);
        }
    }

    if (trace.greedy || is_greedy(p)) {
        const std::string reason = "greedy (T = 0) takes the largest logit; truncation is skipped";
        set(Param::TopK, reason);
        set(Param::TopP, reason);
        set(Param::MinP, reason);
        return notes;
    }

    // Top-k's set does not depend on T (a positive scale keeps the order).
    if (const StageTrace* st = trace.find_stage(Stage::TopK); st && st->active && p.top_k == 1) {
        set(Param::Temperature, "top-k = 1 keeps one token, whose q is 1 at any temperature");
    }
    if (p.top_k > 0 && static_cast<std::size_t>(p.top_k) >= candidates) {
        set(Param::TopK, "k = " + std::to_string(p.top_k) + " keeps every one of the " +
                             count(candidates, "candidate", "candidates") + " (a k at or above them is off)");
    }

    // A truncation stage that kept every token reaching it, or saw only one.
    const auto truncation = [&](Stage stage, Param param, auto why_all_kept) {
        const StageTrace* st = trace.find_stage(stage);
        const StageTrace* in = inputOf(trace, stage);
        if (!st || !in) return;
        const std::size_t reaching = in->kept_count();
        if (reaching == 1) {
            set(param, "only one token reaches this stage: nothing is left to drop");
        } else if (st->active && st->kept_count() == reaching) {
            set(param, why_all_kept(*st, reaching));
        }
    };
    truncation(Stage::TopP, Param::TopP, [&](const StageTrace& st, std::size_t reaching) {
        std::string reason = "p = " + shortNumber(p.top_p) + " keeps all " + count(reaching, "token", "tokens") +
                             " that reach it";
        if (st.crossing_mass) reason += ": the mass reaches p only at the last (" + shortNumber(*st.crossing_mass) + ")";
        return reason;
    });
    truncation(Stage::MinP, Param::MinP, [&](const StageTrace& st, std::size_t reaching) {
        std::string reason = "keeps all " + count(reaching, "token", "tokens") + " that reach it";
        if (st.prob_floor && st.probs) {
            const auto& q = *st.probs;
            const double smallest = q.empty() ? 0.0 : *std::min_element(q.begin(), q.end());
            reason += ": the floor min_p x max q = " + shortNumber(*st.prob_floor) + " is at or below the smallest q (" +
                      shortNumber(smallest) + ")";
        }
        return reason;
    });
    return notes;
}

}  // namespace samplescope::ui
