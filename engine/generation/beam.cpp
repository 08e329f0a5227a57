#include "engine/generation/beam.h"

#include <algorithm>
#include <cmath>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"
#include "engine/core/element_math.h"
#include "engine/core/row_checks.h"
#include "engine/core/row_math.h"
#include "engine/generation/generation.h"

namespace samplescope {

BeamRules parse_beam_rules(std::string_view text, const std::string& field) {
    if (text == "hf") return BeamRules::Hf;
    if (text == "vllm") return BeamRules::Vllm;
    throw InputError(field, "--" + field + " must be hf or vllm, got \"" + std::string(text) + "\"");
}

std::string_view beam_rules_name(BeamRules rules) { return rules == BeamRules::Hf ? "hf" : "vllm"; }

EarlyStopping parse_early_stopping(std::string_view text, const std::string& field) {
    if (text == "false") return EarlyStopping::False;
    if (text == "true") return EarlyStopping::True;
    if (text == "never") return EarlyStopping::Never;
    throw InputError(field, "--" + field + " must be true, false or never, got \"" + std::string(text) + "\"");
}

double parse_length_penalty(std::string_view text) {
    const auto value = parse_real(text);
    if (!value || !std::isfinite(*value) || real_overflows(text)) {
        throw InputError("length_penalty", "--length-penalty must be a finite number, got \"" + std::string(text) + "\"");
    }
    return *value;
}

std::string_view early_stopping_name(EarlyStopping value) {
    switch (value) {
        case EarlyStopping::True: return "true";
        case EarlyStopping::Never: return "never";
        default: return "false";
    }
}

std::string_view candidate_fate_name(CandidateFate fate) {
    switch (fate) {
        case CandidateFate::Kept: return "kept";
        case CandidateFate::Finished: return "finished";
        case CandidateFate::NotFinished: return "not_finished";
        default: return "pruned";
    }
}

namespace {

// The `m` best finite entries of `scores` by (score desc, id asc), best
// first, in one pass: an entry is looked at only when it beats the m-th kept
// so far (m = 2w is small; a full sort or nth_element over V costs more).
std::vector<std::int32_t> best_ids(const std::vector<double>& scores, std::size_t m) {
    std::vector<std::int32_t> best;
    best.reserve(m + 1);
    const auto before = [&](std::int32_t a, std::int32_t b) {
        return ranks_before(scores[static_cast<std::size_t>(a)], a, scores[static_cast<std::size_t>(b)], b);
    };
    for (std::size_t i = 0; i < scores.size(); ++i) {
        const auto id = static_cast<std::int32_t>(i);
        if (!(scores[i] > -HUGE_VAL)) continue;
        if (best.size() == m && !before(id, best.back())) continue;
        best.insert(std::upper_bound(best.begin(), best.end(), id, before), id);
        if (best.size() > m) best.pop_back();
    }
    return best;
}

// Sorts hypotheses by score, best first, equal scores keeping their order.
void sort_by_score(std::vector<BeamHypothesis>& hypotheses) {
    std::stable_sort(hypotheses.begin(), hypotheses.end(),
                     [](const BeamHypothesis& a, const BeamHypothesis& b) { return a.score > b.score; });
}

}  // namespace

BeamSearch::BeamSearch(std::shared_ptr<const LanguageModel> model, std::vector<PromptWord> prompt, BeamOptions options)
    : model_(std::move(model)), prompt_(std::move(prompt)), options_(options), eos_(model_->end_id()) {
    if (options_.width < 1 || options_.width > kMaxBeamWidth) {
        throw InputError("width", "--width must be an integer in [1, " + std::to_string(kMaxBeamWidth) + "], got \"" +
                                      std::to_string(options_.width) + "\"");
    }
    if (options_.steps < 1 || options_.steps > kMaxBeamSteps) {
        throw InputError("steps", "--steps must be an integer in [1, " + std::to_string(kMaxBeamSteps) + "], got \"" +
                                      std::to_string(options_.steps) + "\"");
    }
    if (!std::isfinite(options_.length_penalty)) {
        throw InputError("length_penalty", "--length-penalty must be finite, got " + format_number(options_.length_penalty));
    }
    if (!(options_.repetition_penalty > 0.0) || !std::isfinite(options_.repetition_penalty)) {
        throw InputError("repetition_penalty", "--repetition-penalty must be finite and > 0, got " +
                                                   format_number(options_.repetition_penalty));
    }
    if (options_.rules == BeamRules::Vllm && options_.early_stopping != EarlyStopping::False) {
        throw InputError("early_stopping", "--early-stopping " + std::string(early_stopping_name(options_.early_stopping)) +
                                               ": vLLM's beam search has no early stopping (it runs every step); "
                                               "give --beam-rules hf");
    }
    if (options_.rules == BeamRules::Vllm && options_.repetition_penalty != 1.0) {
        throw InputError("repetition_penalty", "--repetition-penalty " + format_number(options_.repetition_penalty) +
                                                   ": vLLM's beam search applies no penalty (it sums raw "
                                                   "log-probabilities); give --beam-rules hf");
    }
    if (const auto rows = model_->max_generated(); rows && options_.steps > *rows) {
        throw InputError("steps", "--steps " + std::to_string(options_.steps) + ": " + model_->description() +
                                      " holds only " + std::to_string(*rows) + " rows, one per step");
    }
    const auto vocab = static_cast<std::int64_t>(model_->vocab_size());
    for (std::size_t i = 0; i < prompt_.size(); ++i) {
        const std::int64_t id = prompt_[i].id;
        if (id != kUnknownWord && (id < 0 || id >= vocab)) {
            throw InputError("prompt_ids", "prompt id " + std::to_string(id) + " at position " + std::to_string(i) +
                                               " is outside [0, " + std::to_string(vocab) + ")");
        }
    }
    prompt_ids_ = known_prompt_ids(prompt_);
    beams_.push_back(Beam{});  // the prompt alone
}

double BeamSearch::length_of(std::size_t generated, bool ends_in_eos) const {
    std::size_t length = generated;
    if (options_.rules == BeamRules::Vllm) length = prompt_.size() + generated - (ends_in_eos ? 1 : 0);
    // Only an empty prompt ending at once could give 0 (vLLM would divide by it); no model here allows that.
    return std::pow(static_cast<double>(std::max<std::size_t>(length, 1)), options_.length_penalty);
}

void BeamSearch::scores_for(const Beam& beam, std::vector<double>& scores) {
    std::vector<std::int64_t> context;
    context.reserve(prompt_.size() + beam.tokens.size());
    for (const auto& word : prompt_) context.push_back(word.id);
    context.insert(context.end(), beam.tokens.begin(), beam.tokens.end());
    model_->next_logits({context, prompt_.size()}, row_);
    check_logits(row_);
    const auto sums = row_softmax_sums(row_.data(), static_cast<std::int64_t>(row_.size()));
    scores.resize(row_.size());
    // log_softmax_at's arithmetic, (l - M) - log Z, with log Z taken once rather than per id.
    const double log_partition = std::log(sums.partition);
    for (std::size_t i = 0; i < row_.size(); ++i) scores[i] = (row_[i] - sums.max_logit) - log_partition;
    if (options_.repetition_penalty != 1.0) {
        std::vector<std::int64_t> seen = prompt_ids_;
        seen.insert(seen.end(), beam.tokens.begin(), beam.tokens.end());
        std::sort(seen.begin(), seen.end());
        seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
        for (const auto id : seen) {
            auto& s = scores[static_cast<std::size_t>(id)];
            s = apply_repetition_penalty(s, options_.repetition_penalty);
        }
    }
}

BeamStep BeamSearch::step() {
    if (done_) throw InputError("steps", "the beam search has finished");
    const std::size_t w = options_.width;
    const std::size_t step = step_ + 1;
    const bool hf = options_.rules == BeamRules::Hf;
    const bool last = step == options_.steps;
    BeamStep out;
    out.step = step;
    out.beams = beams_;

    std::vector<double> scores;
    std::vector<BeamCandidate> pool;
    for (std::size_t b = 0; b < beams_.size(); ++b) {
        scores_for(beams_[b], scores);
        const auto ids = best_ids(scores, 2 * w);
        for (std::size_t r = 0; r < ids.size(); ++r) {
            BeamCandidate c;
            c.beam = b;
            c.token = ids[r];
            c.token_logprob = scores[static_cast<std::size_t>(ids[r])];
            c.logprob = beams_[b].logprob + c.token_logprob;
            c.rank = r;
            const bool eos = eos_ && c.token == *eos_ && !options_.ignore_eos;
            c.ends = eos || (hf && last);  // HF's length limit ends every candidate of the last step
            c.score = c.logprob / length_of(step, eos);
            pool.push_back(c);
        }
    }

    std::vector<Beam> kept;
    if (hf) {
        // The best 2w over all beams, by summed score (ties: lower beam, then lower id).
        std::stable_sort(pool.begin(), pool.end(),
                         [](const BeamCandidate& a, const BeamCandidate& b) { return a.logprob > b.logprob; });
        if (pool.size() > 2 * w) pool.resize(2 * w);
        const bool closed = options_.early_stopping == EarlyStopping::True && finished_.size() == w;
        std::vector<BeamHypothesis> merged = finished_;
        std::vector<std::size_t> added;  // pool index of each hypothesis appended to merged
        for (std::size_t j = 0; j < pool.size(); ++j) {
            BeamCandidate& c = pool[j];
            c.rank = j;
            if (!c.ends) continue;
            c.fate = CandidateFate::NotFinished;
            if (j >= w || closed || !improvable_) continue;
            BeamHypothesis h;
            h.tokens = beams_[c.beam].tokens;
            h.tokens.push_back(c.token);
            h.logprob = c.logprob;
            h.score = c.score;
            h.length = step;
            h.step = step;
            merged.push_back(std::move(h));
            added.push_back(j);
        }
        // The w best of the old and the new (a stable sort keeps the old first among equals).
        std::vector<std::size_t> order(merged.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return merged[a].score > merged[b].score; });
        if (order.size() > w) order.resize(w);
        finished_.clear();
        for (const std::size_t i : order) {
            finished_.push_back(merged[i]);
            if (i >= merged.size() - added.size()) pool[added[i - (merged.size() - added.size())]].fate = CandidateFate::Finished;
        }
        for (auto& c : pool) {
            if (c.ends) continue;
            if (kept.size() < w) {
                c.fate = CandidateFate::Kept;
                Beam next = beams_[c.beam];
                next.tokens.push_back(c.token);
                next.logprob = c.logprob;
                kept.push_back(std::move(next));
            }
        }
    } else {
        // Every EOS candidate is completed; the others compete by their length-penalised score.
        std::vector<std::size_t> running;
        for (std::size_t j = 0; j < pool.size(); ++j) {
            BeamCandidate& c = pool[j];
            if (c.ends) {
                c.fate = CandidateFate::Finished;
                BeamHypothesis h;
                h.tokens = beams_[c.beam].tokens;
                h.tokens.push_back(c.token);
                h.logprob = c.logprob;
                h.score = c.score;
                h.length = prompt_.size() + step - 1;
                h.step = step;
                finished_.push_back(std::move(h));
            } else {
                running.push_back(j);
            }
        }
        std::stable_sort(running.begin(), running.end(),
                         [&](std::size_t a, std::size_t b) { return pool[a].score > pool[b].score; });
        for (std::size_t i = 0; i < running.size() && i < w; ++i) {
            BeamCandidate& c = pool[running[i]];
            c.fate = CandidateFate::Kept;
            Beam next = beams_[c.beam];
            next.tokens.push_back(c.token);
            next.logprob = c.logprob;
            kept.push_back(std::move(next));
        }
    }

    beams_ = std::move(kept);
    step_ = step;
    if (hf && !beams_.empty() && !last) {
        // Can the best running beam still beat the worst finished hypothesis?
        if (finished_.size() == w) {
            const std::size_t length =
                options_.early_stopping == EarlyStopping::Never && options_.length_penalty > 0.0 ? options_.steps : step;
            out.best_possible = beams_.front().logprob /
                                std::pow(static_cast<double>(length), options_.length_penalty);
            out.worst_finished = finished_.back().score;
            improvable_ = improvable_ && *out.best_possible > *out.worst_finished;
        }
    }
    if (last) {
        out.stop_reason = "the length limit (--steps " + std::to_string(options_.steps) + ")";
    } else if (beams_.empty()) {
        out.stop_reason = "no beam left to extend";
    } else if (hf && options_.early_stopping == EarlyStopping::True && finished_.size() == w) {
        out.stop_reason = "early_stopping true: " + std::to_string(w) + " hypotheses finished";
    } else if (hf && !improvable_) {
        out.stop_reason = "no running beam can beat the worst finished hypothesis";
    }
    done_ = !out.stop_reason.empty();
    out.done = done_;
    out.candidates = std::move(pool);
    out.kept = beams_;
    out.finished = finished_;
    if (!hf) sort_by_score(out.finished);
    return out;
}

std::vector<BeamHypothesis> BeamSearch::result() const {
    std::vector<BeamHypothesis> all = finished_;
    if (options_.rules == BeamRules::Vllm) {
        for (const auto& beam : beams_) {
            BeamHypothesis h;
            h.tokens = beam.tokens;
            h.logprob = beam.logprob;
            h.length = prompt_.size() + beam.tokens.size();
            h.score = beam.logprob / length_of(beam.tokens.size(), false);
            h.step = step_;
            h.finished = false;
            all.push_back(std::move(h));
        }
    }
    sort_by_score(all);
    if (all.size() > options_.width) all.resize(options_.width);
    return all;
}

}  // namespace samplescope
