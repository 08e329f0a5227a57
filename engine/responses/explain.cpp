#include "engine/responses/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "engine/base/input_error.h"
#include "engine/core/row_math.h"
#include "engine/pipelines/pipeline_runner.h"
#include "engine/responses/rest_bounds.h"

namespace samplescope {

const char* token_verdict_name(TokenVerdict verdict) {
    switch (verdict) {
        case TokenVerdict::Kept: return "kept";
        case TokenVerdict::Cut: return "cut";
        case TokenVerdict::CannotTell: return "cannot_tell";
        case TokenVerdict::NotReached: return "not_reached";
        case TokenVerdict::Off: return "off";
    }
    return "?";
}

std::string ResponseExplanation::summary_line() const {
    std::string line = std::to_string(tokens.size()) + " tokens checked: " + std::to_string(kept) + " possible, " +
                       std::to_string(excluded) + " excluded";
    if (excluded > 0) {
        std::string at;
        std::size_t listed = 0;
        for (const auto& token : tokens) {
            if (token.verdict != TokenVerdict::Cut) continue;
            if (listed == 8) {
                at += ", ...";
                break;
            }
            at += (listed++ ? ", " : "") + std::to_string(token.position);
        }
        line += " (position" + std::string(excluded > 1 ? "s " : " ") + at + ")";
    }
    return line + ", " + std::to_string(undecidable) + " cannot tell";
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Four significant digits: the reasons are read by people; the JSON holds the full numbers.
std::string num(double x) {
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", x);
    return buffer;
}

// What the response shows at one position, arranged for the bounds: the
// contiguous top of the distribution (`list`), where the token sits, and
// the rest.
struct View {
    std::vector<double> list;                          // descending, natural log
    std::vector<std::optional<std::int64_t>> list_ids;
    std::optional<std::size_t> index;                  // the token in `list`
    std::optional<double> value;                       // the token's number
    std::optional<std::int64_t> exact_rank;            // an engine's own rank of a token outside `list`
    bool value_inferred = false;                       // -inf because the list reaches -inf without it
    bool normalised = true;
    double rest_lo = 0.0;                              // absolute mass outside `list` (the token's among it when outside)
    double rest_hi = 0.0;
    double count = kUnbounded;                         // ids outside `list`

    std::size_t size() const { return list.size(); }
    // Relative weights: the largest listed id weighs 1.
    double relative(double v) const { return std::exp(v - list.front()); }
    RestShape rest_shape() const {
        RestShape shape;
        const double top = list.empty() ? 1.0 : std::exp(list.front());
        shape.mass_lo = normalised ? rest_lo / top : 0.0;
        shape.mass_hi = normalised ? rest_hi / top : kUnbounded;
        shape.cap = list.empty() ? 1.0 : relative(list.back());
        shape.count = count;
        return shape;
    }
};

// The prefix of `list` each stage's input holds, and which rest ids it holds.
struct KeptState {
    std::size_t a_lo = 0;
    std::size_t a_hi = 0;
    RestFilter rest;
};

View make_view(const Response& response, const ResponsePosition& position, bool normalised,
               std::optional<std::size_t> vocab) {
    View view;
    view.normalised = normalised;
    view.value = position.token.value;
    const auto& top = position.top;
    bool inside = position.token_in_top.has_value();
    if (inside && position.rank) {
        // vLLM lists {sampled, top 1..N}: the whole list is the top when its rank is within it.
        inside = *position.rank <= static_cast<std::int64_t>(top.size());
        if (!inside) view.exact_rank = position.rank;
    } else if (inside && response.sampled_listed_first) {
        // Listed last in a list that always holds it: it may sit anywhere below the others.
        const double v = *top[*position.token_in_top].value;
        bool lowest = true;
        for (const auto& entry : top) lowest = lowest && *entry.value >= v;
        inside = !lowest;
    } else if (!inside && position.rank) {
        view.exact_rank = position.rank;
    }
    for (std::size_t i = 0; i < top.size(); ++i) {
        if (!inside && position.token_in_top && i == *position.token_in_top) continue;
        if (inside && position.token_in_top && i == *position.token_in_top) view.index = view.list.size();
        view.list.push_back(*top[i].value);
        view.list_ids.push_back(top[i].id);
    }
    // A list that reaches -inf has shown every id with a number: one not listed has -inf too.
    if (!view.value && !view.index && !view.list.empty() && view.list.back() == -kInf) {
        view.value = -kInf;
        view.value_inferred = true;
    }
    if (normalised) {
        double listed = 0.0;
        for (const double v : view.list) listed += std::exp(v);
        const double rest = std::max(0.0, 1.0 - listed);
        // The numbers are float32's, printed: their sum is known to about 1e-6.
        view.rest_lo = std::max(0.0, rest - kVerdictTolerance);
        view.rest_hi = std::min(1.0, rest + kVerdictTolerance);
        // Without alternatives, a token of probability above 1/2 is the largest of all.
        if (view.list.empty() && view.value && std::exp(*view.value) > 0.5) {
            view.list.push_back(*view.value);
            view.list_ids.push_back(position.token.id);
            view.index = 0;
            view.rest_lo = std::max(0.0, view.rest_lo - std::exp(*view.value));
            view.rest_hi = std::max(0.0, view.rest_hi - std::exp(*view.value));
        }
    }
    if (vocab) view.count = std::max(0.0, static_cast<double>(*vocab) - static_cast<double>(view.list.size()));
    return view;
}

// A full row as the whole distribution: every id with a finite number, normalised.
View full_view(const std::vector<double>& row, std::int64_t token) {
    View view;
    std::vector<std::int32_t> ids;
    for (std::size_t i = 0; i < row.size(); ++i) {
        if (std::isfinite(row[i])) ids.push_back(static_cast<std::int32_t>(i));
    }
    std::stable_sort(ids.begin(), ids.end(), [&row](std::int32_t a, std::int32_t b) { return row[a] > row[b]; });
    const SoftmaxSums sums = row_softmax_sums(row.data(), static_cast<std::int64_t>(row.size()));
    for (const auto id : ids) {
        if (id == token) view.index = view.list.size();
        view.list.push_back(log_softmax_at(row[id], sums.max_logit, sums.partition));
        view.list_ids.push_back(id);
    }
    view.value = log_softmax_at(row[static_cast<std::size_t>(token)], sums.max_logit, sums.partition);
    view.count = static_cast<double>(row.size() - ids.size());
    return view;
}

// Ranks of the token: 1 + the ids shown above it, and as far down as the mass left allows.
void rank_bounds(const View& view, TokenExplanation& out) {
    if (view.index) {
        const double v = view.list[*view.index];
        std::int64_t greater = 0;
        std::int64_t at_least = 0;
        for (const double x : view.list) {
            greater += x > v ? 1 : 0;
            at_least += x >= v ? 1 : 0;
        }
        out.rank_lo = greater + 1;
        out.rank_hi = at_least;
        return;
    }
    if (view.exact_rank) {
        out.rank_lo = *view.exact_rank;
        out.rank_hi = *view.exact_rank;
        return;
    }
    // Unlisted, it is at most the lowest listed number, and may tie with it.
    const double at_most = view.value ? *view.value : (view.list.empty() ? kInf : view.list.back());
    std::int64_t greater = 0;
    for (const double x : view.list) greater += x > at_most ? 1 : 0;
    out.rank_lo = greater + 1;
    const std::int64_t listed = static_cast<std::int64_t>(view.size());
    if (view.normalised && view.value && std::isfinite(*view.value)) {
        const double p = std::exp(*view.value);
        // Each rest id above it holds at least p of the rest's mass.
        const double above = std::floor(std::max(0.0, view.rest_hi - p) / p);
        if (above < 1e15) out.rank_hi = listed + 1 + static_cast<std::int64_t>(above);
    }
    if (!std::isinf(view.count)) {
        const auto all = listed + static_cast<std::int64_t>(view.count);
        out.rank_hi = out.rank_hi ? std::min(*out.rank_hi, all) : all;
    }
}

StageVerdict verdict(Stage stage, TokenVerdict v, std::string parameter, std::string reason) {
    StageVerdict out;
    out.stage = stage;
    out.verdict = v;
    out.parameter = std::move(parameter);
    out.reason = std::move(reason);
    return out;
}

std::string rank_text(const TokenExplanation& token) {
    if (token.rank_hi && *token.rank_hi == token.rank_lo) return "rank " + std::to_string(token.rank_lo);
    if (!token.rank_hi) return "rank " + std::to_string(token.rank_lo) + " or below";
    return "rank " + std::to_string(token.rank_lo) + " to " + std::to_string(*token.rank_hi);
}

// Greedy (and llama.cpp's T <= 0): only the largest id.
StageVerdict greedy_verdict(Stage stage, const std::string& parameter, const View& view, const TokenExplanation& token) {
    StageVerdict out = verdict(stage, TokenVerdict::CannotTell, parameter, "");
    out.quantity = "rank";
    out.lo = static_cast<double>(token.rank_lo);
    if (token.rank_hi) out.hi = static_cast<double>(*token.rank_hi);
    if (token.rank_lo > 1) {
        out.verdict = TokenVerdict::Cut;
        out.reason = rank_text(token) + ": a greedy step draws only the largest";
    } else if (token.rank_hi == 1) {
        out.verdict = TokenVerdict::Kept;
        out.reason = "the largest: a greedy step draws it";
    } else {
        out.reason = view.index ? "tied for the largest: the engine's tie rule decides"
                                : "the response shows nothing above it, nor whether it is the largest";
    }
    return out;
}

struct StageContext {
    const View& view;
    const TokenExplanation& token;
    double power = 1.0;       // the stage's weights are the shown weights to this power
    bool final_point = false;  // the numbers are the final distribution's (renormalised after every cut)
};

StageVerdict top_k_verdict(const StageContext& c, const PipelineStep& step, std::int64_t k, KeptState& state) {
    const auto& token = c.token;
    StageVerdict out = verdict(Stage::TopK, TokenVerdict::CannotTell, "top_k = " + std::to_string(k), "");
    out.quantity = "rank";
    out.lo = static_cast<double>(token.rank_lo);
    if (token.rank_hi) out.hi = static_cast<double>(*token.rank_hi);
    // By value (keep every id tied with the k-th; FlashInfer's count of larger
    // ids) a token with rank_lo - 1 larger ids is in when that count is below k.
    const bool by_value = step.rule == Rule::TopKKeepTies || step.rule == Rule::TopKFlashInfer;
    std::int64_t lo = token.rank_lo;
    std::optional<std::int64_t> hi = token.rank_hi;
    if (by_value && c.view.index) hi = lo;
    // The contract breaks ties by the lower id: with every tied id known, the rank is exact.
    if (step.rule == Rule::TopKContract && c.view.index && hi && *hi > lo) {
        const auto& ids = c.view.list_ids;
        const double v = c.view.list[*c.view.index];
        bool all = ids[*c.view.index].has_value();
        std::int64_t below_id = 0;
        for (std::size_t i = 0; i < c.view.size() && all; ++i) {
            if (i == *c.view.index || c.view.list[i] != v) continue;
            all = ids[i].has_value();
            if (all && *ids[i] < *ids[*c.view.index]) ++below_id;
        }
        if (all) hi = lo = lo + below_id;
    }
    if (hi && *hi <= k) {
        out.verdict = TokenVerdict::Kept;
        out.reason = rank_text(token) + " <= " + std::to_string(k);
    } else if (lo > k) {
        out.verdict = TokenVerdict::Cut;
        out.reason = rank_text(token) + " > " + std::to_string(k) + ": top_k excludes it";
    } else if (c.view.index) {
        out.reason = "tied with other ids at the k-th place: " + std::string(rule_info(step.rule).title) + " decides";
    } else {
        out.reason = rank_text(token) + ": not among the " + std::to_string(c.view.size()) +
                     " shown, so its place against k = " + std::to_string(k) + " is unknown";
    }
    const std::size_t m = c.view.size();
    const std::size_t kk = static_cast<std::size_t>(k);
    if (kk <= m) {
        // By value every id tied with the k-th stays, listed or not.
        std::size_t kept = kk;
        if (by_value) {
            while (kept < m && c.view.list[kept] == c.view.list[kk - 1]) ++kept;
        }
        state.a_lo = std::min(state.a_lo, kk);
        state.a_hi = std::min(state.a_hi, kept);
        if (by_value && kept == m && c.view.list[kk - 1] == c.view.list.back()) {
            state.rest.floor = std::max(state.rest.floor, c.view.relative(c.view.list.back()));
        } else {
            state.rest.limit = 0.0;
        }
    } else {
        state.rest.limit = std::min(state.rest.limit, static_cast<double>(kk - m));
        state.rest.ties_beyond_limit = state.rest.ties_beyond_limit || by_value;
    }
    return out;
}

StageVerdict min_p_verdict(const StageContext& c, const PipelineStep& step, double m, std::int64_t min_keep,
                           KeptState& state) {
    const auto& view = c.view;
    StageVerdict out = verdict(Stage::MinP, TokenVerdict::CannotTell, "min_p = " + num(m), "");
    out.quantity = "q / max q";
    const double log_m = std::log(m);
    if (view.list.empty()) {
        out.reason = "no alternatives shown: the largest probability is unknown";
        return out;
    }
    // q / max q at this stage: the shown ratio to the stage's power (temperature between them).
    const auto ratio = [&](double v) { return std::exp(c.power * (v - view.list.front())); };
    if (view.value) {
        const double r = ratio(*view.value);
        out.lo = r;
        out.hi = r;
        if (std::fabs(r - m) <= kVerdictTolerance * std::max(m, 1e-300) + 1e-15) {
            out.reason = "q / max q = " + num(r) + " is at the threshold " + num(m) + ", where rounding decides";
        } else if (r >= m) {
            out.verdict = TokenVerdict::Kept;
            out.reason = "q / max q = " + num(r) + " >= " + num(m);
        } else {
            out.verdict = TokenVerdict::Cut;
            out.reason = "q / max q = " + num(r) + " < " + num(m) + ": min_p excludes it";
        }
    } else {
        const double cap = ratio(view.list.back());
        out.lo = 0.0;
        out.hi = cap;
        if (cap < m * (1.0 - kVerdictTolerance)) {
            out.verdict = TokenVerdict::Cut;
            out.reason = "below every id shown, so q / max q <= " + num(cap) + " < " + num(m);
        } else {
            out.reason = "its own probability is not shown; q / max q <= " + num(cap);
        }
    }
    // llama.cpp's min-p keeps at least min_keep ids whatever their q.
    if (step.rule == Rule::MinPLog && out.verdict == TokenVerdict::Cut && c.token.rank_lo <= min_keep) {
        out.verdict = c.token.rank_hi && *c.token.rank_hi <= min_keep ? TokenVerdict::Kept : TokenVerdict::CannotTell;
        out.reason += " (but min_keep = " + std::to_string(min_keep) + " keeps the first ranks)";
    }
    std::size_t a = 0;
    while (a < view.size() && c.power * (view.list[a] - view.list.front()) >= log_m) ++a;
    state.a_lo = std::min(state.a_lo, a);
    state.a_hi = std::min(state.a_hi, a);
    state.rest.floor = std::max(state.rest.floor, std::exp(log_m / c.power));
    return out;
}

// The stage's weights of the listed ids, relative to the largest, and their prefix sums.
std::vector<double> prefix_sums(const View& view, double power) {
    std::vector<double> sums(view.size() + 1, 0.0);
    for (std::size_t i = 0; i < view.size(); ++i) sums[i + 1] = sums[i] + std::exp(power * (view.list[i] - view.list.front()));
    return sums;
}

StageVerdict top_p_verdict(const StageContext& c, const PipelineStep& step, double p, std::int64_t min_keep,
                           const KeptState& input, KeptState& state) {
    const auto& view = c.view;
    StageVerdict out = verdict(Stage::TopP, TokenVerdict::CannotTell, "top_p = " + num(p), "");
    out.quantity = "mass before it";
    if (view.list.empty()) {
        out.reason = "no alternatives shown: the mass above it is unknown";
        return out;
    }
    const std::vector<double> sums = prefix_sums(view, c.power);
    const std::size_t m = view.size();
    const Interval rest = rest_power_sum(view.rest_shape(), input.rest, c.power);
    // The stage's total: the listed prefix it holds and, when it holds the whole list, the rest it keeps.
    const auto total = [&](std::size_t a, bool high) {
        double t = sums[a];
        if (a == m) t += high ? rest.hi : rest.lo;
        return t;
    };
    double below_lo = 0.0;  // the mass above the token: its bounds
    double below_hi = 0.0;
    double total_lo = 0.0;
    double total_hi = 0.0;
    double own = 0.0;
    if (view.index) {
        const double v = view.list[*view.index];
        for (std::size_t i = 0; i < m; ++i) {
            if (i == *view.index) continue;
            const double w = sums[i + 1] - sums[i];
            if (view.list[i] > v) below_lo += w;
            if (view.list[i] >= v) below_hi += w;
        }
        // Its place among ids of equal number is the engine's to choose: its first possible place.
        const auto first_place = static_cast<std::size_t>(c.token.rank_lo);
        if (input.a_hi < first_place) {
            out.verdict = TokenVerdict::NotReached;
            out.reason = "an earlier step kept fewer ids than its rank";
            return out;
        }
        const std::size_t at_least = std::max(input.a_lo, first_place);
        total_lo = total(std::min(at_least, m), false);
        total_hi = total(input.a_hi, true);
    } else {
        if (input.a_hi < m) {
            // Tied with the last id an earlier step kept, it may have been kept in that id's place.
            const bool may_tie = input.a_hi > 0 && view.list[input.a_hi - 1] == view.list.back() &&
                                 (!view.value || *view.value == view.list.back());
            out.verdict = may_tie ? TokenVerdict::CannotTell : TokenVerdict::NotReached;
            out.reason = may_tie ? "tied with the last id an earlier step kept: the tie rule decides"
                                 : "an earlier step kept fewer ids than are shown above it";
            return out;
        }
        // Every listed id above its number is above it; one equal to it may sit either side.
        const double at_most = view.value ? *view.value : view.list.back();
        for (std::size_t i = 0; i < m; ++i) {
            if (view.list[i] > at_most) below_lo += sums[i + 1] - sums[i];
        }
        // Below the listed ids, any of the rest but itself may sit above it.
        below_hi = kInf;
        own = view.value ? std::exp(c.power * (*view.value - view.list.front())) : 0.0;
        total_lo = sums[m] + std::max(rest.lo, own);
        total_hi = sums[m] + rest.hi;
    }
    // The final distribution hides what the pipeline cut: its total is only a floor.
    if (c.final_point) total_hi = kInf;
    const double before_lo = total_hi == kInf ? 0.0 : below_lo / total_hi;
    // Outside the list: at most all but itself, 1 - own / total, largest with the largest total.
    const double before_hi = below_hi == kInf ? (total_hi == kInf || own == 0.0 ? 1.0 : 1.0 - own / total_hi)
                                              : below_hi / total_lo;
    out.lo = before_lo;
    out.hi = std::min(1.0, before_hi);
    const std::string range = num(*out.lo) == num(*out.hi) ? num(*out.lo) : "between " + num(*out.lo) + " and " + num(*out.hi);
    if (below_hi == 0.0) {
        out.verdict = TokenVerdict::Kept;
        out.reason = "nothing above it: top-p keeps the first id";
    } else if (*out.hi < p - kVerdictTolerance) {
        out.verdict = TokenVerdict::Kept;
        out.reason = "mass before it " + range + " < " + num(p);
    } else if (*out.lo > p + kVerdictTolerance) {
        out.verdict = TokenVerdict::Cut;
        out.reason = "mass before it " + range + " >= " + num(p) + ": top_p excludes it";
    } else if (*out.lo >= p - kVerdictTolerance && *out.hi <= p + kVerdictTolerance) {
        out.reason = "mass before it " + range + " is at the boundary " + num(p) + ", where the engines' comparisons differ";
    } else if (c.final_point) {
        out.reason = "mass before it at least " + num(*out.lo) + " of what the final distribution shows; the mass the "
                                                                 "pipeline cut is not shown";
    } else {
        out.reason = "mass before it " + range + ": the ids outside the " + std::to_string(m) +
                     " shown could put it either side of " + num(p);
    }
    if (step.rule == Rule::TopPInclusiveCumsum && out.verdict == TokenVerdict::Cut && c.token.rank_lo <= min_keep) {
        out.verdict = c.token.rank_hi && *c.token.rank_hi <= min_keep ? TokenVerdict::Kept : TokenVerdict::CannotTell;
        out.reason += " (but min_keep = " + std::to_string(min_keep) + " keeps the first ranks)";
    }
    // What it keeps: the prefix up to the first id whose running mass reaches p,
    // earliest with the smallest total, latest with the largest.
    const double t_lo = total(input.a_lo, false);
    const double t_hi = c.final_point ? kInf : total(input.a_hi, true);
    const auto stop = [&](double t, std::size_t limit) {
        for (std::size_t j = 1; j <= limit; ++j) {
            if (sums[j] >= p * t) return std::optional<std::size_t>(j);
        }
        return std::optional<std::size_t>();
    };
    if (const auto j = stop(t_lo, input.a_lo)) state.a_lo = std::min(state.a_lo, *j);
    if (auto j = stop(t_hi, input.a_hi)) {
        // Ids tied with the last one kept may stay with it (a rule by value, an unstable sort).
        while (*j < m && view.list[*j] == view.list[*j - 1]) ++*j;
        state.a_hi = std::min(state.a_hi, *j);
        if (*j < m || view.list.back() != view.list[m - 1]) {
            state.rest.limit = 0.0;  // it stops within the list whatever the rest holds
        } else {
            state.rest.cut = true;
        }
    } else {
        state.rest.cut = true;
    }
    return out;
}

TokenVerdict overall(const std::vector<StageVerdict>& stages) {
    TokenVerdict out = TokenVerdict::Kept;
    for (const auto& stage : stages) {
        if (stage.verdict == TokenVerdict::Cut) return TokenVerdict::Cut;
        if (stage.verdict == TokenVerdict::CannotTell) out = TokenVerdict::CannotTell;
    }
    return out;
}

std::string summarize(const TokenExplanation& token) {
    std::string reasons;
    for (const auto& stage : token.stages) {
        if (stage.verdict != token.verdict) continue;
        reasons += (reasons.empty() ? "" : "; ") + std::string(stage_info(stage.stage).name) + ": " + stage.reason;
    }
    switch (token.verdict) {
        case TokenVerdict::Cut: return "excluded by the stated parameters: " + reasons;
        case TokenVerdict::CannotTell: return "cannot tell from the response: " + reasons;
        default: break;
    }
    std::string kept;
    for (const auto& stage : token.stages) {
        if (stage.verdict == TokenVerdict::Kept) kept += (kept.empty() ? "" : "; ") + std::string(stage_info(stage.stage).name) + ": " + stage.reason;
    }
    return kept.empty() ? "possible: no step of the pipeline is on to exclude it" : "possible: " + kept;
}

// The temperature a pipeline divides by (vLLM raises 0 < T < 0.01 to 0.01).
double effective_temperature(const Pipeline& pipeline, double t) {
    const PipelineStep* step = pipeline.find_step(Stage::Temperature);
    if (step && step->rule == Rule::TemperatureVllm && t > 0.0 && t < 0.01) return 0.01;
    return t;
}

bool greedy_for(const Pipeline& pipeline, double t) {
    const PipelineStep* greedy = pipeline.find_step(Stage::Greedy);
    if (greedy && greedy->enabled) return greedy->rule == Rule::GreedySglang ? t < 1e-6 : t == 0.0;
    const PipelineStep* temperature = pipeline.find_step(Stage::Temperature);
    return temperature && temperature->enabled && temperature->rule == Rule::TemperatureLlamaCpp && t <= 0.0;
}

// A top-N position (or a final full row), walked through the pipeline's steps with the bounds.
TokenExplanation explain_view(const View& view, const ExplainSettings& settings, TokenExplanation out) {
    const SamplingParams& params = settings.params;
    const Pipeline& pipeline = settings.pipeline;
    const LogprobPoint point = settings.mode->point;
    const bool shown_after_temperature = point == LogprobPoint::Scaled || point == LogprobPoint::Final;
    const double temperature = effective_temperature(pipeline, params.temperature);
    rank_bounds(view, out);
    out.alternatives = view.size();
    if (view.value && *view.value == -kInf) {
        std::string reason = point == LogprobPoint::Final
                                 ? "the final distribution shown gives it probability 0: it could not be drawn from it"
                                 : "the distribution shown gives it probability 0 (its number is -inf or a server's "
                                   "stand-in for it)";
        if (view.value_inferred) reason += "; not listed, below alternatives already at probability 0";
        out.stages.push_back(verdict(Stage::Softmax, TokenVerdict::Cut, std::string(settings.mode->mode), reason));
        out.verdict = TokenVerdict::Cut;
        out.summary = summarize(out);
        return out;
    }
    std::optional<std::string> changed;  // why the shown numbers are not what the steps from here see
    if (!settings.unmodelled.empty()) changed = settings.unmodelled.front();
    const std::size_t vocab = settings.vocab_size.value_or(static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()));
    const bool greedy = greedy_for(pipeline, temperature);
    // A greedy step skips every step after it; llama.cpp's T <= 0 acts last, after its truncations.
    const PipelineStep* greedy_step = pipeline.find_step(Stage::Greedy);
    const bool skips_truncation = greedy && greedy_step && greedy_step->enabled;
    const bool mirostat_on = mirostat_chain(pipeline, params);
    bool after_temperature = false;
    bool cut = false;
    KeptState state{view.size(), view.size(), {}};
    KeptState last_input = state;
    bool min_p_on = uses_min_p(params);
    for (const PipelineStep& step : pipeline.steps) {
        if (!step.enabled) continue;
        const Stage stage = step.stage;
        if (mirostat_on && !in_mirostat_chain(stage)) {
            if (stage == Stage::TopK || stage == Stage::TopP || stage == Stage::MinP) {
                out.stages.push_back(verdict(stage, TokenVerdict::Off, "", "skipped: with mirostat the chain is logit bias, "
                                                                      "temperature, mirostat"));
            }
            continue;
        }
        switch (stage) {
            case Stage::LogitBias:
                if (uses_logit_bias(params) && point == LogprobPoint::Raw && !changed) {
                    changed = "a logit bias changes the logits after the response's numbers were taken";
                }
                break;
            case Stage::RepetitionPenalty:
            case Stage::PresenceFrequency: {
                const bool on = stage == Stage::RepetitionPenalty ? uses_repetition_penalty(params) : uses_presence_frequency(params);
                if (on && point == LogprobPoint::Raw && !changed) {
                    changed = std::string(stage_info(stage).title) + " changes the logits after the response's numbers "
                                                                      "were taken (" + std::string(settings.mode->mode) + " is before it)";
                }
                break;
            }
            case Stage::Dry:
                if (uses_dry(params) && point == LogprobPoint::Raw && !changed) {
                    changed = "DRY changes the logits after the response's numbers were taken";
                }
                break;
            case Stage::Greedy:
                if (greedy) {
                    out.stages.push_back(greedy_verdict(stage, "temperature = " + num(params.temperature), view, out));
                    cut = cut || out.stages.back().verdict == TokenVerdict::Cut;
                }
                break;
            case Stage::Temperature:
                after_temperature = true;
                if (greedy && step.rule == Rule::TemperatureLlamaCpp) {
                    auto v = greedy_verdict(stage, "temperature = " + num(params.temperature), view, out);
                    v.reason += " (llama.cpp keeps only the largest at T <= 0)";
                    out.stages.push_back(std::move(v));
                } else if (uses_dynatemp(params) && !changed) {
                    changed = "dynamic temperature depends on the whole distribution";
                }
                break;
            case Stage::TopK:
            case Stage::TopP:
            case Stage::MinP: {
                const bool on = stage == Stage::TopK ? uses_top_k(params, vocab)
                                : stage == Stage::TopP ? uses_top_p(params) : uses_min_p(params);
                const std::string parameter = stage == Stage::TopK ? "top_k = " + std::to_string(params.top_k)
                                              : stage == Stage::TopP ? "top_p = " + num(params.top_p)
                                                                     : "min_p = " + num(params.min_p);
                if (!on) {
                    out.stages.push_back(verdict(stage, TokenVerdict::Off, parameter, "off"));
                    break;
                }
                if (skips_truncation) {
                    out.stages.push_back(verdict(stage, TokenVerdict::Off, parameter, "skipped: greedy"));
                    break;
                }
                if (cut && !step.joint) {
                    out.stages.push_back(verdict(stage, TokenVerdict::NotReached, parameter, "an earlier step cut it"));
                    break;
                }
                if (changed) {
                    out.stages.push_back(verdict(stage, TokenVerdict::CannotTell, parameter, *changed));
                    break;
                }
                StageContext context{view, out, 1.0, point == LogprobPoint::Final};
                const double step_power = after_temperature ? 1.0 / temperature : 1.0;
                const double shown_power = shown_after_temperature ? 1.0 / temperature : 1.0;
                context.power = step_power / shown_power;
                const bool joint = step.joint && !(pipeline.joint_only_without_min_p && min_p_on);
                const KeptState input = joint ? last_input : state;
                if (!joint) last_input = state;
                StageVerdict v;
                if (stage == Stage::TopK) {
                    v = top_k_verdict(context, step, params.top_k, state);
                } else if (stage == Stage::MinP) {
                    v = min_p_verdict(context, step, params.min_p, params.min_keep, state);
                } else {
                    v = top_p_verdict(context, step, params.top_p, params.min_keep, input, state);
                }
                cut = cut || v.verdict == TokenVerdict::Cut;
                out.stages.push_back(std::move(v));
                break;
            }
            case Stage::TypicalP:
            case Stage::TopNSigma:
            case Stage::Xtc:
            case Stage::Mirostat: {
                const bool on = stage == Stage::TypicalP ? uses_typical_p(params)
                                : stage == Stage::TopNSigma ? uses_top_n_sigma(params)
                                : stage == Stage::Xtc ? uses_xtc(params) : uses_mirostat(params);
                if (!on) break;
                out.stages.push_back(verdict(stage, cut ? TokenVerdict::NotReached : TokenVerdict::CannotTell, std::string(stage_info(stage).name),
                                             std::string(stage_info(stage).title) + " needs the whole distribution (or a random coin), which the response does not show"));
                if (!changed) changed = std::string(stage_info(stage).title) + " before it changed the kept set in a way the response does not show";
                break;
            }
            default: break;
        }
    }
    out.verdict = overall(out.stages);
    out.summary = summarize(out);
    return out;
}

// A row of the model's raw logits, replayed through the pipeline exactly.
TokenExplanation explain_row(const Response& response, std::size_t i, const ExplainSettings& settings, TokenExplanation out) {
    const std::vector<double> row = response.rows->row(i);
    const std::int64_t token = *response.positions[i].token.id;
    const double token_value = row[static_cast<std::size_t>(token)];
    out.exact = true;
    std::int64_t greater = 0;
    std::int64_t at_least = 0;
    for (const double x : row) {
        greater += x > token_value ? 1 : 0;
        at_least += x >= token_value ? 1 : 0;
    }
    out.rank_lo = greater + 1;
    out.rank_hi = at_least;
    out.alternatives = row.size();
    std::vector<std::int64_t> output_ids;
    for (std::size_t t = 0; t < i; ++t) output_ids.push_back(*response.positions[t].token.id);
    PipelineInput input{row, settings.params, settings.prompt_ids, output_ids};
    input.params.seed = 0;  // the draw is not the question
    const bool prompt_unknown = settings.prompt_ids.empty() && uses_repetition_penalty(settings.params);
    PipelineTrace trace;
    try {
        trace = trace_pipeline_once(settings.pipeline, input);
    } catch (const InputError& error) {
        out.stages.push_back(verdict(Stage::Widen, TokenVerdict::CannotTell, "", std::string("the pipeline refused the row: ") + error.what()));
        out.verdict = TokenVerdict::CannotTell;
        out.summary = summarize(out);
        return out;
    }
    bool cut = false;
    for (std::size_t s = 0; s < trace.trace.stages.size(); ++s) {
        const StageTrace& stage = trace.trace.stages[s];
        const StageDescriptor& info = stage_info(stage.stage);
        if (!(info.truncates || stage.stage == Stage::Greedy)) continue;
        if (!stage.active) {
            if (stage.stage == Stage::TopK || stage.stage == Stage::TopP || stage.stage == Stage::MinP) {
                out.stages.push_back(verdict(stage.stage, TokenVerdict::Off, std::string(info.name), trace.reports[s].note.empty() ? "off" : trace.reports[s].note));
            }
            continue;
        }
        if (cut) {
            out.stages.push_back(verdict(stage.stage, TokenVerdict::NotReached, std::string(info.name), "an earlier step cut it"));
            continue;
        }
        const bool kept = stage.stage == Stage::Greedy ? trace.trace.token == token : stage.keeps(static_cast<std::int32_t>(token));
        StageVerdict v = verdict(stage.stage, kept ? TokenVerdict::Kept : TokenVerdict::Cut, std::string(info.name),
                                 kept ? "kept on the whole row" : "cut on the whole row");
        if (stage.stage == Stage::Xtc || stage.stage == Stage::Mirostat) {
            v.verdict = TokenVerdict::CannotTell;
            v.reason = std::string(info.title) + " depends on a coin or a state the file does not hold";
        } else if (prompt_unknown) {
            v.verdict = TokenVerdict::CannotTell;
            v.reason = "the repetition penalty reads the prompt's ids, which the file does not hold";
        } else if (trace.reports[s].near_boundary) {
            v.reason += " (within 1e-6 of its threshold: float32 engines may decide otherwise)";
        }
        cut = cut || v.verdict == TokenVerdict::Cut;
        out.stages.push_back(std::move(v));
    }
    // A step that narrows without truncating (llama.cpp's T <= 0 keeps the largest) shows in the final set.
    const IdList& final_kept = trace.trace.final_kept();
    if (!cut && !std::binary_search(final_kept.begin(), final_kept.end(), static_cast<std::int32_t>(token))) {
        out.stages.push_back(verdict(Stage::Softmax, TokenVerdict::Cut, "final distribution",
                                     "not in the pipeline's final distribution on the whole row"));
    }
    out.verdict = overall(out.stages);
    out.summary = summarize(out);
    return out;
}

void add_entropy(const View& view, TokenExplanation& out) {
    if (!view.normalised) return;
    double known = 0.0;
    double mass = 0.0;
    for (const double v : view.list) {
        const double p = std::exp(v);
        known -= p > 0.0 ? p * v : 0.0;
        mass += p;
    }
    RestShape shape;
    shape.mass_lo = view.rest_lo;
    shape.mass_hi = view.rest_hi;
    shape.cap = view.list.empty() ? 1.0 : std::exp(view.list.back());
    shape.count = view.count;
    // A token below the list is one of the rest with its own known share.
    if (!view.index && view.value && std::isfinite(*view.value)) {
        const double p = std::exp(*view.value);
        known -= p * *view.value;
        shape.mass_lo = std::max(0.0, shape.mass_lo - p);
        shape.mass_hi = std::max(0.0, shape.mass_hi - p);
        if (!std::isinf(shape.count)) shape.count = std::max(0.0, shape.count - 1.0);
    }
    const Interval rest = rest_entropy(shape);
    out.rest_mass = std::max(0.0, 1.0 - mass);
    out.entropy_lo = known + rest.lo;
    if (!std::isinf(rest.hi)) out.entropy_hi = known + rest.hi;
}

}  // namespace

TokenExplanation explain_position(const Response& response, std::size_t i, const ExplainSettings& settings) {
    if (!settings.mode) throw InputError("logprobs_mode", "explaining a response needs its logprobs mode");
    const ResponsePosition& position = response.positions.at(i);
    TokenExplanation out;
    out.position = i;
    out.id = position.token.id;
    out.bytes = position.token.bytes;
    out.value = position.token.value;
    if (response.rows) {
        const std::vector<double> row = response.rows->row(i);
        const View view = full_view(row, *position.token.id);
        add_entropy(view, out);
        if (settings.mode->point == LogprobPoint::Raw) return explain_row(response, i, settings, out);
        out.exact = true;
        return explain_view(view, settings, out);
    }
    const bool normalised = response.normalised && settings.mode->kind != LogprobKind::Logit;
    const View view = make_view(response, position, normalised, settings.vocab_size);
    add_entropy(view, out);
    return explain_view(view, settings, out);
}

ResponseExplanation explain_response(const Response& response, const ExplainSettings& settings) {
    ResponseExplanation out;
    out.tokens.reserve(response.positions.size());
    for (std::size_t i = 0; i < response.positions.size(); ++i) {
        out.tokens.push_back(explain_position(response, i, settings));
        switch (out.tokens.back().verdict) {
            case TokenVerdict::Cut: ++out.excluded; break;
            case TokenVerdict::CannotTell: ++out.undecidable; break;
            default: ++out.kept; break;
        }
    }
    return out;
}

}  // namespace samplescope
