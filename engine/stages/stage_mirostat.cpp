// The mirostat unit, v1 and v2 as llama.cpp defines them (ggml-org/llama.cpp
// src/llama-sampling.cpp llama_sampler_mirostat_apply and
// llama_sampler_mirostat_v2_apply). Mirostat keeps the surprise -log2 q of
// the drawn tokens near a target tau through a state mu: 2 tau at the start of
// a request, and after each token mu - eta (surprise - tau), the surprise
// taken from the drawn token's final q (the runner, PipelineTrace::mirostat).
//
// v2: over the candidates in rank order, keep the prefix whose surprise is at
//     most mu (at least one id).
// v1: estimate the Zipf exponent s from the top m = 100 ranks,
//     s = sum t_i b_i / sum t_i^2 with t_i = log((i + 2) / (i + 1)) and
//     b_i = log(q_i / q_{i+1}); then k = ((s - 1) 2^mu / (1 - V^(1 - s)))^(1 / s)
//     over the whole vocabulary V, and keep the top max(1, floor(k)).
//
// llama.cpp's mirostat draws the token itself; here the contract's draw does,
// as in every pipeline. The state mu comes in as PipelineInput::mirostat_mu
// (a Request carries it from step to step).
#include <cmath>

#include "engine/base/input_error.h"
#include "engine/core/gates.h"
#include "engine/stages/stage_unit.h"
#include "engine/stages/truncation.h"

namespace samplescope {

namespace {

constexpr std::size_t kZipfRanks = 100;  // llama.cpp's m (common_sampler_init)

bool gate(const SamplingParams& p, std::size_t) { return gate_mirostat(p.mirostat); }

bool mirostat(RowState& row, const PipelineStep&, StepReport& report, StageTrace& shown) {
    if (!gate(row.params, row.vocab)) return false;
    const TruncationView view = view_of(row);
    const auto r = [&row](double x) { return row.r(x); };
    const double mu = row.input.mirostat_mu.value_or(r(2.0 * row.params.mirostat_tau));
    const Ranked ranked = ranked_candidates(view);
    const std::size_t n = ranked.ids.size();
    TruncationOutcome out;
    out.shown.mirostat_mu = mu;
    std::size_t count = 1;
    if (row.params.mirostat == 2) {
        count = 0;
        while (count < n && r(-std::log2(ranked.probs[count])) <= mu) ++count;
        if (count < n && near_threshold(r(-std::log2(ranked.probs[count])), mu)) out.near_boundary = true;
        if (count > 0 && near_threshold(r(-std::log2(ranked.probs[count - 1])), mu)) out.near_boundary = true;
        if (count == 0) {
            count = 1;
            out.note = "even the top id's surprise exceeds mu: it stays alone";
        }
    } else {
        double sum_tb = 0.0;
        double sum_tt = 0.0;
        for (std::size_t i = 0; i + 1 < kZipfRanks && i + 1 < n; ++i) {
            const double t = r(std::log(static_cast<double>(i + 2) / static_cast<double>(i + 1)));
            const double b = r(std::log(r(ranked.probs[i] / ranked.probs[i + 1])));
            sum_tb = r(sum_tb + r(t * b));
            sum_tt = r(sum_tt + r(t * t));
        }
        const double s_hat = r(sum_tb / sum_tt);
        const double epsilon = r(s_hat - 1.0);
        const double k = r(std::pow(r(r(epsilon * r(std::pow(2.0, mu))) /
                                      r(1.0 - r(std::pow(static_cast<double>(row.vocab), -epsilon)))),
                                    r(1.0 / s_hat)));
        out.shown.mirostat_s_hat = s_hat;
        out.shown.mirostat_k = k;
        // llama.cpp takes max(int(k), 1) and top-k clamps it to the candidates;
        // a k that is not a number (one candidate: no ranks to fit) keeps one.
        if (k >= static_cast<double>(n)) {
            count = n;
        } else if (k >= 1.0) {
            count = static_cast<std::size_t>(k);
            if (std::fabs(k - std::round(k)) <= kNearBoundary * k) out.near_boundary = true;
        }
    }
    keep_prefix(ranked, count, out, false);
    out.tie_at_boundary = tie_across(view, ranked, count);
    if (out.note.empty()) {
        out.note = "mu " + format_number(mu) + ": " + std::to_string(count) + (count == 1 ? " id" : " ids") + " kept";
    }
    apply_outcome(row, std::move(out), report, shown);
    row.mirostat_ran = true;
    row.mirostat_mu = mu;
    return true;
}

constexpr Param kReads[] = {Param::Mirostat, Param::MirostatTau, Param::MirostatEta};
constexpr StageUnit kUnit{kReads, listens_always, mirostat};

constexpr ParamInfo kStageParams[] = {
    {.param = Param::Mirostat, .key = "mirostat", .label = "Mirostat", .default_value = 0.0, .slider_min = 0.0,
     .slider_max = 2.0,
     .formula = "Mirostat 1 or 2 (llama.cpp): keeps the surprise -log2 q of the drawn tokens near tau by a state mu "
                "(2 tau at the start, mu - eta (surprise - tau) after each token); replaces llama.cpp's truncation. "
                "Off at 0.",
     .valid_range = "0, 1 or 2", .whole = &SamplingParams::mirostat, .min = 0.0, .max = 2.0,
     .role = ParamRole::Switch, .on = gate,
     .badge = [](const SamplingParams& p, std::size_t vocab) {
         if (!gate(p, vocab)) return ParamBadge{"off", false, {}};
         // Appended: GCC 12 misreads `"v" + std::string` under -Wrestrict.
         const std::string version = std::to_string(p.mirostat);
         ParamBadge badge{"v", true, "mirostat "};
         badge.text += version;
         badge.summary += version;
         return badge;
     }},
    {.param = Param::MirostatTau, .key = "mirostat_tau", .label = "Mirostat tau", .default_value = 5.0,
     .slider_min = 0.0, .slider_max = 10.0, .formula = "Mirostat's target surprise, in bits. Default 5.",
     .valid_range = ">= 0 and finite", .real = &SamplingParams::mirostat_tau, .min = 0.0, .on = gate},
    {.param = Param::MirostatEta, .key = "mirostat_eta", .label = "Mirostat eta", .default_value = 0.1,
     .slider_min = 0.0, .slider_max = 1.0, .formula = "Mirostat's learning rate for mu. Default 0.1.",
     .valid_range = ">= 0 and finite", .real = &SamplingParams::mirostat_eta, .min = 0.0, .on = gate},
};

constexpr RuleInfo kStageRules[] = {
    {Rule::MirostatLlamaCpp, Stage::Mirostat, "llamacpp", "v1: top k(mu); v2: -log2 q <= mu", "llamacpp",
     "v2: keep the ranked prefix with -log2 q <= mu (at least one). v1: s from the top 100 ranks' Zipf fit, "
     "k = ((s - 1) 2^mu / (1 - V^(1 - s)))^(1 / s), keep the top max(1, k). After the draw mu -= eta "
     "(-log2 q_token - tau).",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_mirostat_apply, llama_sampler_mirostat_v2_apply",
     true},
};

std::string formula(const SamplingParams& p) {
    return "v2: keep the ranked ids with surprise -log2 q <= mu, i.e. q >= 2^-mu. v1: s_hat from the top 100 ranks "
           "(Zipf), k = ((s_hat - 1) 2^mu / (1 - V^(1 - s_hat)))^(1 / s_hat). After the draw mu -= eta (surprise - "
           "tau), tau = " + format_number(p.mirostat_tau) + ", eta = " + format_number(p.mirostat_eta) +
           "; mu starts at 2 tau.";
}

}  // namespace

extern const StageDescriptor stage_mirostat_descriptor;
constinit const StageDescriptor stage_mirostat_descriptor{
    .stage = Stage::Mirostat,
    .name = "mirostat",
    .title = "Mirostat",
    .summary = "Keep the ids whose surprise -log2 q fits mu (v2), or the top k that Zipf's law gives for mu (v1).",
    .truncates = true,
    .mark = PlotMark::MirostatMu,
    .params = kStageParams,
    .rules = kStageRules,
    .gate = gate,
    .off_reason = [](const SamplingParams& p, std::size_t) {
        return off_because("mirostat = " + std::to_string(p.mirostat), "off at 0; 1 or 2 picks the version", true);
    },
    .formula = formula,
    .unit = &kUnit,
};

}  // namespace samplescope
