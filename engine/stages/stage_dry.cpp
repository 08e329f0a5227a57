// The DRY unit ("don't repeat yourself"), as llama.cpp defines it
// (ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_dry_apply, ported
// there from koboldcpp). Over the last N tokens of the history (the prompt's,
// then the output's; N = dry_penalty_last_n, -1 = all of it):
//
// 1. The repeat limit: walking back from the newest token, the first sequence
//    breaker found (its head at distance i from the end, its tail of length t
//    following it) caps every repeat at i - t tokens, so no repeat reaches
//    across it. No step runs when the limit (or the window) is below the
//    allowed length.
// 2. For each earlier position j, the length of the longest common suffix of
//    the history up to j and the whole history, capped at the limit.
// 3. Where that length L >= the allowed length, the token right after j would
//    extend the repeat to L + 1: it loses multiplier x base^(L - allowed),
//    the longest L per token counting. A token that is a breaker of its own
//    (a single-token sequence) is never penalised.
//
// llama.cpp clamps the exponent so base^exponent stays below float's maximum;
// the same clamp is kept here. Both scans are linear in N, as llama.cpp's step
// 2 is (a Z-algorithm over the reversed history there): step 1 runs one
// Knuth-Morris-Pratt matcher per breaker over the reversed window, step 2 the
// Z-algorithm, so a 200,000-id history costs milliseconds (docs/samplers.md).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "engine/core/gates.h"
#include "engine/stages/row_state.h"
#include "engine/stages/stage_unit.h"

namespace samplescope {

namespace {

struct DryPenalty {
    IdList ids;                         // ascending
    std::vector<std::int64_t> lengths;  // the repeat each would extend
    Values penalties;
    std::size_t repeat_limit = 0;
};

// The window reversed: element i is the i-th token from the end (0 = the
// newest), llama.cpp's rat(i).
std::vector<std::int64_t> reversed_window(const RowState& row) {
    const auto& prompt = row.input.prompt_ids;
    const auto& output = row.input.output_ids;
    const std::size_t total = prompt.size() + output.size();
    const std::size_t n = row.params.dry_penalty_last_n < 0
                              ? total
                              : std::min(total, static_cast<std::size_t>(row.params.dry_penalty_last_n));
    std::vector<std::int64_t> tokens;
    tokens.reserve(n);
    for (std::size_t i = total; i > total - n; --i) {
        tokens.push_back(i - 1 < prompt.size() ? prompt[i - 1] : output[i - 1 - prompt.size()]);
    }
    return tokens;
}

// Step 1. A breaker b (head b[0], tail b[1..t]) matches at i when at(i) =
// b[0], at(i - 1) = b[1], ..., at(i - t) = b[t]: reading the reversed window
// forwards, b reversed ends at index i. One KMP matcher per breaker advances
// over the reversed window in step; the first index where any completes, with
// the longest tail completing there, gives the limit i - t. O(N x breakers).
std::size_t repeat_limit(const std::vector<std::int64_t>& at, const std::vector<std::vector<std::int64_t>>& breakers) {
    struct Matcher {
        std::vector<std::int64_t> pattern;  // the breaker reversed
        std::vector<std::size_t> border;    // KMP: the longest proper border of each prefix
        std::size_t matched = 0;
    };
    std::vector<Matcher> matchers;
    matchers.reserve(breakers.size());
    for (const auto& breaker : breakers) {
        Matcher m;
        m.pattern.assign(breaker.rbegin(), breaker.rend());
        m.border.assign(m.pattern.size(), 0);
        for (std::size_t i = 1, k = 0; i < m.pattern.size(); ++i) {
            while (k > 0 && m.pattern[i] != m.pattern[k]) k = m.border[k - 1];
            if (m.pattern[i] == m.pattern[k]) ++k;
            m.border[i] = k;
        }
        matchers.push_back(std::move(m));
    }
    for (std::size_t i = 0; i < at.size(); ++i) {
        std::optional<std::size_t> longest;
        for (Matcher& m : matchers) {
            // No matcher is ever full here: the scan ends at the first full match.
            while (m.matched > 0 && m.pattern[m.matched] != at[i]) m.matched = m.border[m.matched - 1];
            if (m.pattern[m.matched] == at[i]) ++m.matched;
            if (m.matched == m.pattern.size()) {
                const std::size_t tail = m.pattern.size() - 1;
                if (!longest || tail > *longest) longest = tail;
            }
        }
        if (longest) return i - *longest;
    }
    return at.size();
}

// Step 2. z[k] = the length of the longest common prefix of the reversed
// window and its suffix from k: the repeat ending k tokens back. The
// Z-algorithm (a standard linear-time string algorithm) reuses the rightmost
// box [left, right) already matched, so every token is compared O(1) times.
std::vector<std::size_t> z_lengths(const std::vector<std::int64_t>& at) {
    const std::size_t n = at.size();
    std::vector<std::size_t> z(n, 0);
    if (n > 0) z[0] = n;
    std::size_t left = 0;
    std::size_t right = 0;
    for (std::size_t k = 1; k < n; ++k) {
        std::size_t length = k < right ? std::min(right - k, z[k - left]) : 0;
        while (k + length < n && at[length] == at[k + length]) ++length;
        if (k + length > right) {
            left = k;
            right = k + length;
        }
        z[k] = length;
    }
    return z;
}

std::optional<DryPenalty> decide(const RowState& row) {
    const SamplingParams& p = row.params;
    const std::vector<std::int64_t> at = reversed_window(row);
    const std::size_t n = at.size();
    const auto allowed = static_cast<std::size_t>(p.dry_allowed_length);
    if (n <= allowed) return std::nullopt;

    const std::size_t limit = repeat_limit(at, p.dry_sequence_breakers);
    if (limit < allowed) return std::nullopt;

    // The longest repeat each token would extend.
    const std::vector<std::size_t> z = z_lengths(at);
    std::map<std::int64_t, std::size_t> longest_for;
    for (std::size_t k = 1; k < n; ++k) {
        const std::size_t length = std::min(z[k], limit);
        if (length < allowed) continue;
        // The suffix ending k tokens back repeats the end: the token after it extends the repeat.
        const std::int64_t next = at[k - 1];
        auto [it, inserted] = longest_for.emplace(next, length);
        if (!inserted) it->second = std::max(it->second, length);
    }

    int max_exponent = 0;
    if (p.dry_base > 1.000001) max_exponent = static_cast<int>(88.7228391 / std::log(p.dry_base));
    DryPenalty out;
    out.repeat_limit = limit;
    for (const auto& [token, length] : longest_for) {
        const std::int64_t id = token;  // a structured binding cannot be captured before C++20 in every compiler
        const bool own_breaker = std::any_of(p.dry_sequence_breakers.begin(), p.dry_sequence_breakers.end(),
                                             [id](const auto& b) { return b.size() == 1 && b.front() == id; });
        if (own_breaker) continue;
        auto exponent = static_cast<int>(length - allowed);
        if (max_exponent > 0 && exponent > max_exponent) exponent = max_exponent;
        out.ids.push_back(static_cast<std::int32_t>(id));
        out.lengths.push_back(static_cast<std::int64_t>(length));
        out.penalties.push_back(row.r(p.dry_multiplier * row.r(std::pow(p.dry_base, exponent))));
    }
    return out;
}

// llama_sampler_dry_apply returns at multiplier 0 or a window of 0 (base < 1 is refused here).
bool gate(const SamplingParams& p, std::size_t) { return gate_dry(p.dry_multiplier, p.dry_penalty_last_n); }

bool dry(RowState& row, const PipelineStep&, StepReport& report, StageTrace& shown) {
    if (!gate(row.params, row.vocab)) return false;
    check_dry_sequence_breakers(row.params.dry_sequence_breakers, row.vocab);
    std::optional<DryPenalty> penalty = decide(row);
    if (!penalty) {
        report.note = "no repeat longer than the allowed length in the window";
        shown.dry_ids = std::make_shared<const IdList>();
        return true;
    }
    const Values& amounts = penalty->penalties;
    row.penalise(penalty->ids, "dry", [&row, &amounts](double logit, std::size_t i) { return row.r(logit - amounts[i]); });
    shown.dry_repeat_limit = penalty->repeat_limit;
    shown.dry_ids = std::make_shared<const IdList>(std::move(penalty->ids));
    shown.dry_lengths = std::make_shared<const std::vector<std::int64_t>>(std::move(penalty->lengths));
    shown.dry_penalties = std::make_shared<const Values>(std::move(penalty->penalties));
    return true;
}

constexpr Param kReads[] = {Param::DryMultiplier, Param::DryBase, Param::DryAllowedLength, Param::DryPenaltyLastN};
constexpr StageUnit kUnit{kReads, listens_always, dry};

constexpr ParamInfo kStageParams[] = {
    {.param = Param::DryMultiplier, .key = "dry_multiplier", .label = "DRY multiplier", .default_value = 0.0,
     .slider_min = 0.0, .slider_max = 2.0,
     .formula = "Don't repeat yourself (llama.cpp): an id that would extend a repeat of length L >= allowed length "
                "loses multiplier x base^(L - allowed). Off at 0.",
     .valid_range = ">= 0 and finite", .real = &SamplingParams::dry_multiplier, .min = 0.0,
     .role = ParamRole::Switch, .on = gate, .blocked = "off (last N 0)", .summary = "DRY"},
    {.param = Param::DryBase, .key = "dry_base", .label = "DRY base", .default_value = 1.75, .slider_min = 1.0,
     .slider_max = 3.0, .formula = "The base of DRY's penalty, growing with the repeat's length. Default 1.75.",
     .valid_range = ">= 1 and finite", .real = &SamplingParams::dry_base, .min = 1.0, .on = gate},
    {.param = Param::DryAllowedLength, .key = "dry_allowed_length", .label = "DRY allowed length",
     .default_value = 2.0, .slider_min = 0.0, .slider_max = 10.0,
     .formula = "The longest repeat DRY lets pass unpenalised. Default 2.", .valid_range = "an integer >= 0",
     .whole = &SamplingParams::dry_allowed_length, .min = 0.0, .on = gate},
    {.param = Param::DryPenaltyLastN, .key = "dry_penalty_last_n", .label = "DRY last N", .default_value = -1.0,
     .slider_min = -1.0, .slider_max = 512.0,
     .formula = "How many of the last tokens DRY scans: -1 the whole history, 0 none (off). Default -1.",
     .valid_range = "an integer >= -1", .whole = &SamplingParams::dry_penalty_last_n, .min = -1.0, .on = gate,
     .badge = [](const SamplingParams& p, std::size_t vocab) {
         return p.dry_penalty_last_n == 0 ? ParamBadge{"off (0)", false, {}} : shapes_badge(gate(p, vocab));
     }},
};

constexpr ListParamInfo kStageLists[] = {
    {.key = "dry_sequence_breakers", .label = "DRY breakers", .syntax = "\"id,id;id\"",
     .set = [](const SamplingParams& p) { return !p.dry_sequence_breakers.empty(); },
     .on = [](const SamplingParams& p, std::size_t vocab) { return !p.dry_sequence_breakers.empty() && gate(p, vocab); },
     .text = [](const SamplingParams& p) { return format_dry_sequence_breakers(p.dry_sequence_breakers); },
     .parse = [](SamplingParams& p, std::string_view text) {
         p.dry_sequence_breakers = parse_dry_sequence_breakers(text);
     },
     .check = [](const SamplingParams& p, std::size_t vocab) {
         check_dry_sequence_breakers(p.dry_sequence_breakers, vocab);
     },
     .validate = [](const SamplingParams& p) { validate_dry_sequence_breakers(p.dry_sequence_breakers); },
     .badge = [](const SamplingParams& p, std::size_t vocab) {
         if (p.dry_sequence_breakers.empty()) return ParamBadge{"none", false, {}};
         return shapes_badge(gate(p, vocab));
     }},
};

constexpr RuleInfo kStageRules[] = {
    {Rule::DryLlamaCpp, Stage::Dry, "llamacpp", "multiplier x base^(L - allowed)", "llamacpp",
     "Over the last N tokens (prompt and output): for each earlier end of a repeat of the suffix, of length "
     "L >= allowed (cut at the latest sequence breaker), the id after it loses multiplier x base^(L - allowed), the "
     "longest L per id; single-token breakers are never penalised.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_dry_apply", false},
};

std::string off_reason(const SamplingParams& p, std::size_t) {
    return "Off: dry_multiplier = " + format_number(p.dry_multiplier) +
           ", dry_penalty_last_n = " + std::to_string(p.dry_penalty_last_n) +
           " (off at multiplier 0 or last N 0).\nThe distribution passes through unchanged.";
}

std::string formula(const SamplingParams& p) {
    const std::string allowed = std::to_string(p.dry_allowed_length);
    return "penalty(id) = multiplier x base^(L - allowed) = " + format_number(p.dry_multiplier) + " x " +
           format_number(p.dry_base) + "^(L - " + allowed + "), L the longest repeat of the history's suffix that id "
           "would extend (L >= " + allowed + "), cut at the latest sequence breaker; last N = " +
           std::to_string(p.dry_penalty_last_n) + " (-1 the whole history).";
}

}  // namespace

extern const StageDescriptor stage_dry_descriptor;
constinit const StageDescriptor stage_dry_descriptor{
    .stage = Stage::Dry,
    .name = "dry",
    .title = "DRY",
    .summary = "An id that would extend a repeated suffix of length L >= allowed loses multiplier x base^(L - allowed).",
    .changes_logits = true,
    .mark = PlotMark::DryPenalties,
    .params = kStageParams,
    .lists = kStageLists,
    .rules = kStageRules,
    .gate = gate,
    .off_reason = off_reason,
    .formula = formula,
    .unit = &kUnit,
};

}  // namespace samplescope
