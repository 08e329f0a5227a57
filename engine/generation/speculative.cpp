#include "engine/generation/speculative.h"

#include <algorithm>
#include <cmath>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"
#include "engine/core/inverse_cdf.h"
#include "engine/core/token_history.h"
#include "engine/generation/generation.h"

namespace samplescope {

const SpecPreset& spec_preset(std::string_view name, const std::string& field) {
    std::string names;
    for (const auto& preset : kSpecPresets) {
        if (preset.name == name) return preset;
        names += (names.empty() ? "" : ", ") + std::string(preset.name);
    }
    throw InputError(field, "--" + field + " must be one of " + names + ", got \"" + std::string(name) + "\"");
}

double row_prob(const SpecRow& row, std::int32_t id) {
    const auto at = std::lower_bound(row.ids.begin(), row.ids.end(), id);
    return at != row.ids.end() && *at == id ? row.probs[static_cast<std::size_t>(at - row.ids.begin())] : 0.0;
}

namespace {

// Walks the union of two rows' kept sets in ascending id order: f(id, p, q).
template <class F>
void for_union(const SpecRow& p, const SpecRow& q, F f) {
    if (p.ids == q.ids) {
        // One kept set (no truncation, the common case at full V): no merge.
        for (std::size_t i = 0; i < p.ids.size(); ++i) f(p.ids[i], p.probs[i], q.probs[i]);
        return;
    }
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < p.ids.size() || j < q.ids.size()) {
        const bool take_p = j == q.ids.size() || (i < p.ids.size() && p.ids[i] <= q.ids[j]);
        const bool take_q = i == p.ids.size() || (j < q.ids.size() && q.ids[j] <= p.ids[i]);
        const std::int32_t id = take_p ? p.ids[i] : q.ids[j];
        f(id, take_p ? p.probs[i++] : 0.0, take_q ? q.probs[j++] : 0.0);
    }
}

void normalise(Values& mass) {
    double sum = 0.0;
    for (const double m : mass) sum += m;  // ascending id order, one after another (contract section 2)
    for (double& m : mass) m /= sum;
}

}  // namespace

double overlap(const SpecRow& p, const SpecRow& q) {
    double sum = 0.0;
    for_union(p, q, [&](std::int32_t, double pi, double qi) { sum += std::min(pi, qi); });
    return sum;
}

void positive_difference(const SpecRow& p, const SpecRow& q, IdList& ids, Values& mass) {
    ids.clear();
    mass.clear();
    for_union(p, q, [&](std::int32_t id, double pi, double qi) {
        if (pi > qi) {
            ids.push_back(id);
            mass.push_back(pi - qi);
        }
    });
}

void contract_residual(const SpecRow& p, const SpecRow& q, IdList& ids, Values& probs) {
    positive_difference(p, q, ids, probs);
    if (ids.empty()) {
        ids = p.ids;
        probs = p.probs;
        return;
    }
    normalise(probs);
}

namespace {

// Which uniform feeds which decision of a round: drawn from the stream in the
// preset's own order (kSpecRules "draws"), or given as k + 1 values laid out as
// FlashInfer's uniform_samples (a diff on the same uniforms).
class RoundUniforms {
public:
    static RoundUniforms stream(const SpecPreset& preset, std::size_t k, bool greedy_request,
                                const UniformSource& next) {
        RoundUniforms u;
        u.preset_ = &preset;
        u.k_ = k;
        u.next_ = next;
        if (preset.draws == SpecRule::DrawsVllm && !greedy_request) {
            u.bonus_ = u.take();  // the bonus token is sampled before the rejection sampler runs
            for (std::size_t i = 0; i < k; ++i) u.fixed_.push_back(u.take());
            if (k > 0) u.recovered_ = u.take();
        } else if (preset.draws == SpecRule::DrawsFlashInfer) {
            for (std::size_t i = 0; i <= k; ++i) u.fixed_.push_back(u.take());
        }
        return u;
    }

    static RoundUniforms aligned(const SpecPreset& preset, std::span<const double> given) {
        RoundUniforms u;
        u.preset_ = &preset;
        u.k_ = given.size() - 1;
        u.fixed_.assign(given.begin(), given.end());
        u.aligned_ = true;
        return u;
    }

    // The uniform that tests position i.
    double test(std::size_t i) { return lazy() ? take() : fixed_.at(i); }

    // The uniform of the final draw after the chain stopped at `pos` (k: all accepted).
    double final(std::size_t pos) {
        if (preset_->draws == SpecRule::DrawsFlashInfer) return fixed_.at(std::min(pos + 1, k_));
        if (aligned_) return fixed_.at(k_);
        if (preset_->draws == SpecRule::DrawsVllm) return pos == k_ ? bonus_.value_or(0.0) : recovered_.value_or(0.0);
        return take();
    }

    std::optional<double> bonus() const { return bonus_; }
    std::uint64_t taken() const { return taken_; }

private:
    bool lazy() const { return !aligned_ && preset_->draws == SpecRule::DrawsContract; }
    double take() {
        ++taken_;
        return next_();
    }

    const SpecPreset* preset_ = nullptr;
    std::size_t k_ = 0;
    UniformSource next_;
    std::vector<double> fixed_;
    std::optional<double> bonus_;
    std::optional<double> recovered_;
    bool aligned_ = false;
    std::uint64_t taken_ = 0;
};

void check_round(const SpecRoundInput& input) {
    const std::size_t k = input.draft.size();
    if (input.draft_tokens.size() != k || input.target.size() != k + 1) {
        throw InputError("rows", "a round of " + std::to_string(k) + " draft rows needs " + std::to_string(k) +
                                     " draft tokens and " + std::to_string(k + 1) + " target rows, got " +
                                     std::to_string(input.draft_tokens.size()) + " and " +
                                     std::to_string(input.target.size()));
    }
    const auto vocab = static_cast<std::int64_t>(input.vocab);
    for (std::size_t i = 0; i < k; ++i) {
        const std::int32_t x = input.draft_tokens[i];
        if (x < 0 || x >= vocab) {
            throw InputError("draft_tokens", "draft token " + std::to_string(x) + " at position " + std::to_string(i) +
                                                 " is outside [0, " + std::to_string(vocab) + ")");
        }
    }
    const auto check_row = [&](const SpecRow& row, const char* which, std::size_t i) {
        if (row.ids.size() != row.probs.size() || row.ids.empty() ||
            (!row.ids.empty() && (row.ids.front() < 0 || row.ids.back() >= vocab))) {
            throw InputError("rows", std::string(which) + " row " + std::to_string(i) +
                                         " is not a distribution over [0, " + std::to_string(vocab) + ")");
        }
    };
    for (std::size_t i = 0; i < k; ++i) check_row(input.draft[i], "draft", i);
    for (std::size_t i = 0; i <= k; ++i) check_row(input.target[i], "target", i);
}

bool all_greedy(const std::vector<SpecRow>& rows) {
    return std::all_of(rows.begin(), rows.end(), [](const SpecRow& row) { return row.greedy; });
}

bool accepts(SpecRule rule, double p, double q, double u) {
    switch (rule) {
        case SpecRule::AcceptVllm: return q > 0.0 && p / q >= u;
        case SpecRule::AcceptFlashInfer: return u * q < p;
        default: return q > 0.0 && u < std::min(1.0, p / q);
    }
}

// The final token from `ids`/`mass` (unnormalised for FlashInfer) under the preset's rule.
std::int32_t draw_final(const SpecPreset& preset, const IdList& ids, const Values& mass, double u, bool& fell_back) {
    if (preset.residual != SpecRule::ResidualFlashInfer) return inverse_cdf_draw(ids, mass, u, nullptr, fell_back);
    double sum = 0.0;
    for (const double m : mass) sum += m;
    const double threshold = u * sum;
    double running = 0.0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        running += mass[i];
        if (running > threshold) return ids[i];
    }
    fell_back = true;
    return ids.back();  // the last id with r > 0 (the kernel's last_valid_id)
}

SpecVerification verify(const SpecPreset& preset, const SpecRoundInput& input, RoundUniforms& uniforms,
                        const ResidualBuilder& residual) {
    const std::size_t k = input.draft.size();
    SpecVerification out;
    out.positions.resize(k);
    const bool vllm_greedy = preset.greedy == SpecRule::GreedyVllm && all_greedy(input.target);
    // Whether a row is decided without a uniform: the contract's greedy rows,
    // vLLM's greedy requests; FlashInfer has no greedy path.
    const auto decided = [&](const SpecRow& row) {
        return preset.greedy == SpecRule::GreedyContract ? row.greedy : vllm_greedy;
    };
    std::size_t stop = k;  // the first rejected position
    for (std::size_t i = 0; i < k; ++i) {
        SpecPosition& at = out.positions[i];
        const SpecRow& p = input.target[i];
        const SpecRow& q = input.draft[i];
        at.token = input.draft_tokens[i];
        at.q = row_prob(q, at.token);
        at.p = row_prob(p, at.token);
        at.acceptance = at.q > 0.0 ? std::min(1.0, at.p / at.q) : 0.0;
        at.overlap = overlap(p, q);
        if (stop < k) {
            // The chain has stopped; vLLM and FlashInfer drew this position's uniform anyway.
            if (preset.draws == SpecRule::DrawsFlashInfer || (preset.draws == SpecRule::DrawsVllm && !vllm_greedy)) {
                at.u = uniforms.test(i);
            }
            continue;
        }
        at.tested = true;
        if (decided(p)) {
            at.accepted = at.token == p.ids.front();
        } else {
            at.u = uniforms.test(i);
            at.accepted = accepts(preset.accept, at.p, at.q, *at.u);
        }
        if (at.accepted) {
            out.emitted.push_back(at.token);
            ++out.accepted;
        } else {
            stop = i;
        }
    }
    out.tested = stop < k ? stop + 1 : k;

    SpecFinal& final = out.final;
    final.position = stop;
    final.bonus = stop == k;
    const SpecRow& p = input.target[stop];
    Values mass;  // what the draw walks (unnormalised for FlashInfer)
    if (final.bonus) {
        final.ids = p.ids;
        final.probs = p.probs;
        mass = p.probs;
    } else if (residual) {
        residual(p, input.draft[stop], final.ids, final.probs);
        mass = final.probs;
    } else {
        positive_difference(p, input.draft[stop], final.ids, mass);
        final.empty_residual = final.ids.empty();
        if (final.empty_residual) {
            // Each engine's own answer when p = q leaves nothing to draw from.
            if (preset.residual == SpecRule::ResidualVllm) {
                final.ids = {0};
                mass = {1.0};
            } else if (preset.residual == SpecRule::ResidualFlashInfer) {
                final.ids = {static_cast<std::int32_t>(input.vocab - 1)};
                mass = {1.0};
            } else {
                final.ids = p.ids;
                mass = p.probs;
            }
        }
        final.probs = mass;
        normalise(final.probs);
        if (preset.residual != SpecRule::ResidualFlashInfer) mass = final.probs;
    }
    if (decided(p)) {
        // One-hot: the argmax of p (max(0, p - q) is one-hot there too).
        final.token = p.ids.front();
        final.ids = {final.token};
        final.probs = {1.0};
    } else {
        final.u = uniforms.final(stop);
        final.token = draw_final(preset, final.ids, mass, *final.u, final.fell_back);
    }
    out.emitted.push_back(final.token);
    out.bonus_u = uniforms.bonus();
    out.uniforms = uniforms.taken();
    return out;
}

}  // namespace

SpecVerification verify_round(const SpecPreset& preset, const SpecRoundInput& input, const UniformSource& uniform,
                              const ResidualBuilder& residual) {
    check_round(input);
    const bool vllm_greedy = preset.greedy == SpecRule::GreedyVllm && all_greedy(input.target);
    RoundUniforms uniforms = RoundUniforms::stream(preset, input.draft.size(), vllm_greedy, uniform);
    return verify(preset, input, uniforms, residual);
}

SpecVerification verify_round_aligned(const SpecPreset& preset, const SpecRoundInput& input,
                                      std::span<const double> uniforms) {
    check_round(input);
    if (uniforms.size() != input.draft.size() + 1) {
        throw InputError("uniforms", "a round of " + std::to_string(input.draft.size()) + " draft tokens takes " +
                                         std::to_string(input.draft.size() + 1) + " uniforms, got " +
                                         std::to_string(uniforms.size()));
    }
    RoundUniforms given = RoundUniforms::aligned(preset, uniforms);
    return verify(preset, input, given, {});
}

SpecRoundDiff diff_round(const SpecPreset& a, const SpecPreset& b, const SpecRoundInput& input,
                         std::span<const double> uniforms) {
    SpecRoundDiff out;
    out.a = verify_round_aligned(a, input, uniforms);
    out.b = verify_round_aligned(b, input, uniforms);
    out.same_emitted = out.a.emitted == out.b.emitted;
    const std::string an(a.name);
    const std::string bn(b.name);
    const auto verdict = [](const SpecPosition& at) {
        return !at.tested ? std::string("not reached") : at.accepted ? std::string("accepts") : std::string("rejects");
    };
    for (std::size_t i = 0; i < input.draft.size(); ++i) {
        const SpecPosition& pa = out.a.positions[i];
        const SpecPosition& pb = out.b.positions[i];
        if (pa.tested != pb.tested || pa.accepted != pb.accepted) {
            out.differences.push_back("position " + std::to_string(i) + " (x = " + std::to_string(pa.token) +
                                      ", p = " + format_number(pa.p) + ", q = " + format_number(pa.q) + ", u = " +
                                      (pa.u ? format_number(*pa.u) : std::string("none")) + "): " + an + " " +
                                      verdict(pa) + ", " + bn + " " + verdict(pb));
        }
        if (pa.q == 0.0 && (pa.tested || pb.tested)) {
            out.differences.push_back("position " + std::to_string(i) + ": q(x) = 0, a token the draft cannot "
                                      "propose: " + an + " " + verdict(pa) + ", " + bn + " " + verdict(pb));
        }
    }
    const SpecFinal& fa = out.a.final;
    const SpecFinal& fb = out.b.final;
    const auto describe = [](const SpecFinal& f) {
        return (f.bonus ? std::string("bonus from p_") : std::string("residual at ")) + std::to_string(f.position) +
               ", " + std::to_string(f.ids.size()) + " ids, u = " + (f.u ? format_number(*f.u) : std::string("none")) +
               ", token " + std::to_string(f.token);
    };
    if (fa.bonus != fb.bonus || fa.position != fb.position || fa.token != fb.token || fa.ids != fb.ids) {
        out.differences.push_back("final draw: " + an + " " + describe(fa) + "; " + bn + " " + describe(fb));
    }
    if (fa.empty_residual || fb.empty_residual) {
        out.differences.push_back("max(0, p - q) is empty at position " + std::to_string(fa.position) + ": " + an +
                                  " draws token " + std::to_string(fa.token) + ", " + bn + " token " +
                                  std::to_string(fb.token));
    }
    return out;
}

void check_same_vocabulary(const LanguageModel& target, const LanguageModel& draft) {
    if (target.vocab_size() != draft.vocab_size()) {
        throw InputError("draft", "the draft's vocabulary has " + format_count(draft.vocab_size()) +
                                      " tokens and the target's " + format_count(target.vocab_size()) +
                                      ": speculative decoding needs one vocabulary (" + draft.description() + ")");
    }
    const auto& a = target.labels();
    const auto& b = draft.labels();
    if (&a == &b || a.empty() || b.empty()) return;  // one model's data shared (NgramModel::restricted)
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] != b[i]) {
            throw InputError("draft", "token " + std::to_string(i) + " is \"" + a[i] + "\" in the target and \"" +
                                          b[i] + "\" in the draft: speculative decoding needs one vocabulary");
        }
    }
}

Speculation::Speculation(std::shared_ptr<const LanguageModel> target, std::shared_ptr<const LanguageModel> draft,
                         Pipeline pipeline, SamplingParams params, std::vector<PromptWord> prompt,
                         SpeculativeOptions options)
    : target_(std::move(target)),
      draft_(std::move(draft)),
      pipeline_(std::move(pipeline)),
      params_(std::move(params)),
      prompt_(std::move(prompt)),
      options_(std::move(options)),
      rng_(stream(0, kSampleLabel)) {
    validate(params_);
    check_pipeline(pipeline_);
    if (options_.k < 1 || options_.k > kMaxSpeculativeK) {
        throw InputError("k", "--k must be an integer in [1, " + std::to_string(kMaxSpeculativeK) + "], got \"" +
                                  std::to_string(options_.k) + "\"");
    }
    const PipelineStep* mirostat = pipeline_.find_step(Stage::Mirostat);
    if (mirostat && mirostat->enabled && uses_mirostat(params_)) {
        throw InputError("mirostat", "--mirostat " + std::to_string(params_.mirostat) +
                                         ": speculative decoding cannot carry mirostat's mu, which moves with the "
                                         "surprise of a token drawn from its own distribution (a draft token "
                                         "accepted against p is not); use --mirostat 0");
    }
    check_same_vocabulary(*target_, *draft_);
    if (!options_.preset) options_.preset = &kSpecPresets[0];
    seed_ = seed_or_chosen(params_.seed);
    params_.seed = seed_;
    rng_ = stream(seed_, kSampleLabel);
    const auto vocab = static_cast<std::int64_t>(target_->vocab_size());
    for (std::size_t i = 0; i < prompt_.size(); ++i) {
        const std::int64_t id = prompt_[i].id;
        if (id != kUnknownWord && (id < 0 || id >= vocab)) {
            throw InputError("prompt_ids", "prompt id " + std::to_string(id) + " at position " + std::to_string(i) +
                                               " is outside [0, " + std::to_string(vocab) + ")");
        }
        context_.push_back(id);
    }
    prompt_ids_ = known_prompt_ids(prompt_);
}

bool Speculation::ended() const {
    const auto end = target_->end_id();
    return options_.stop_at_end && end && context_.size() > prompt_.size() && context_.back() == *end;
}

bool Speculation::exhausted() const {
    return options_.max_tokens != 0 && generated().size() >= options_.max_tokens;
}

SpecRow Speculation::row_at(const LanguageModel& model, std::span<const std::int64_t> context,
                            std::vector<double>& scratch) const {
    model.next_logits({context, prompt_.size()}, scratch);
    const PipelineInput input{scratch, params_, prompt_ids_, context.subspan(prompt_.size())};
    // Counted here, the ids being known good (the prompt's checked, the rest
    // the models'), so the runner checks the row once rather than twice.
    const HistoryCounts history = count_history(input.prompt_ids, input.output_ids, scratch.size());
    return exact_distribution(pipeline_, input, &history);
}

SpeculativeRound Speculation::round() {
    if (ended()) {
        throw InputError("steps", "the text has ended (" + target_->token_text(context_.back()) +
                                      "); start again to go on");
    }
    if (exhausted()) {
        throw InputError("steps", "the " + std::to_string(options_.max_tokens) + " tokens asked for are written");
    }
    const std::size_t done = generated().size();
    std::size_t k = options_.k;
    if (options_.max_tokens) k = std::min<std::uint64_t>(k, options_.max_tokens - done - 1);
    // A recorded model has T rows: the target needs position done + k, the draft done + k - 1.
    if (const auto rows = target_->max_generated()) {
        if (*rows <= done) {
            throw InputError("steps", target_->description() + " holds only " + std::to_string(*rows) +
                                          " rows, one per generated token");
        }
        k = std::min(k, *rows - done - 1);
    }
    if (const auto rows = draft_->max_generated()) k = std::min(k, *rows > done ? *rows - done : 0);

    SpeculativeRound out;
    out.index = stats_.rounds;
    out.k = k;
    out.draws_before = draws_;
    out.rows.vocab = target_->vocab_size();
    Pcg32 rng = rng_;  // committed only when the round succeeds
    std::uint64_t draws = draws_;
    const UniformSource next = [&] {
        check_draw_counter(draws, 1, "skip_draws");
        ++draws;
        return rng.uniform_f64();
    };
    std::vector<std::int64_t> context = context_;
    std::vector<double> scratch;
    for (std::size_t i = 0; i < k; ++i) {
        SpecRow q = row_at(*draft_, context, scratch);
        std::int32_t x = q.ids.front();
        std::optional<double> u;
        if (!q.greedy) {
            u = next();
            bool fell_back = false;
            x = inverse_cdf_draw(q.ids, q.probs, *u, nullptr, fell_back);
        }
        out.rows.draft.push_back(std::move(q));
        out.rows.draft_tokens.push_back(x);
        out.draft_u.push_back(u);
        context.push_back(x);
    }
    const std::size_t base = context_.size();
    for (std::size_t i = 0; i <= k; ++i) {
        out.rows.target.push_back(row_at(*target_, std::span(context).first(base + i), scratch));
    }
    out.verification = verify_round(*options_.preset, out.rows, next, options_.residual);

    // Commit: the emitted tokens, cut after the end of text.
    const auto end = target_->end_id();
    for (const std::int32_t token : out.verification.emitted) {
        out.emitted.push_back(token);
        if (options_.stop_at_end && end && token == *end) {
            out.ended = true;
            break;
        }
    }
    context_.resize(base);
    context_.insert(context_.end(), out.emitted.begin(), out.emitted.end());
    rng_ = rng;
    draws_ = draws;
    out.draws_after = draws_;
    ++stats_.rounds;
    for (const auto& at : out.verification.positions) {
        if (!at.tested) continue;
        ++stats_.tested;
        stats_.accepted += at.accepted ? 1 : 0;
        stats_.expected += at.overlap;
        stats_.expected_variance += at.overlap * (1.0 - at.overlap);
    }
    return out;
}

double SpeculativeStats::standard_error() const {
    return tested ? std::sqrt(expected_variance) / static_cast<double>(tested) : 0.0;
}

double SpeculativeStats::z() const {
    const double sd = std::sqrt(expected_variance);
    return sd > 0.0 ? (static_cast<double>(accepted) - expected) / sd : 0.0;
}

std::string Speculation::text() const {
    std::vector<std::string> texts;
    for (const auto& word : prompt_) texts.push_back(word.text);
    for (const auto id : generated()) texts.push_back(target_->token_text(id));
    return join_token_texts(texts);
}

std::string Speculation::generated_text() const {
    std::vector<std::string> texts;
    for (const auto id : generated()) texts.push_back(target_->token_text(id));
    return join_token_texts(texts);
}

}  // namespace samplescope
