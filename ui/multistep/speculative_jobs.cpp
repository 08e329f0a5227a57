#include "ui/multistep/speculative_jobs.h"

#include <algorithm>
#include <new>
#include <numeric>

#include "engine/base/input_error.h"

namespace samplescope::ui {

namespace {

// The best `n` entries of a row by (probability desc, id asc), as the CLI's kept lists order them.
std::vector<std::size_t> best(const Values& probs, const IdList& ids, std::size_t n) {
    std::vector<std::size_t> order(ids.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    n = std::min(n, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                      [&](std::size_t a, std::size_t b) { return probs[a] > probs[b] || (probs[a] == probs[b] && ids[a] < ids[b]); });
    order.resize(n);
    return order;
}

bool larger(const SpecBar& a, const SpecBar& b) {
    const double x = std::max(a.p, a.q);
    const double y = std::max(b.p, b.q);
    return x > y || (x == y && a.id < b.id);
}

// The proposed token and the best of q and of p, by their larger probability.
std::vector<SpecBar> positionBars(const SpecRow& q, const SpecRow& p, std::int32_t token, const LanguageModel& model) {
    std::vector<SpecBar> bars;
    const auto add = [&](std::int32_t id) {
        if (id == token || std::any_of(bars.begin(), bars.end(), [&](const SpecBar& bar) { return bar.id == id; })) return;
        bars.push_back({id, model.token_text(id), row_prob(q, id), row_prob(p, id)});
    };
    for (const auto i : best(q.probs, q.ids, kSpecBarsShown)) add(q.ids[i]);
    for (const auto i : best(p.probs, p.ids, kSpecBarsShown)) add(p.ids[i]);
    std::sort(bars.begin(), bars.end(), larger);
    if (bars.size() > kSpecBarsShown - 1) bars.resize(kSpecBarsShown - 1);
    bars.push_back({token, model.token_text(token), row_prob(q, token), row_prob(p, token)});
    std::sort(bars.begin(), bars.end(), larger);
    return bars;
}

SpecFinalRecord finalRecord(const SpecFinal& f, const LanguageModel& model) {
    SpecFinalRecord out;
    out.bonus = f.bonus;
    out.position = f.position;
    out.token = f.token;
    out.text = model.token_text(f.token);
    out.u = f.u;
    out.fell_back = f.fell_back;
    out.empty_residual = f.empty_residual;
    out.kept = f.ids.size();
    double total = 0.0;
    for (const double m : f.probs) total += m;
    if (total <= 0.0) total = 1.0;
    const auto top = best(f.probs, f.ids, kSpecBarsShown);
    for (const auto i : top) out.bars.push_back({f.ids[i], model.token_text(f.ids[i]), f.probs[i] / total, 0.0});
    // The draw walks the ids in the order given (ascending): each shown id's place on that line.
    std::vector<bool> shown(f.ids.size(), false);
    for (const auto i : best(f.probs, f.ids, 12)) shown[i] = true;
    double start = 0.0;
    for (std::size_t i = 0; i < f.ids.size(); ++i) {
        const double width = f.probs[i] / total;
        if (shown[i] || f.ids[i] == f.token) out.segments.push_back({f.ids[i], model.token_text(f.ids[i]), start, width});
        start += width;
    }
    return out;
}

}  // namespace

SpecRoundRecord recordRound(const SpeculativeRound& round, const Speculation& speculation) {
    const LanguageModel& model = speculation.target();
    const SpecVerification& v = round.verification;
    SpecRoundRecord out;
    out.index = round.index;
    out.k = round.k;
    out.draws_before = round.draws_before;
    out.draws_after = round.draws_after;
    out.ended = round.ended;
    out.stats = speculation.stats();
    if (v.bonus_u && !v.final.bonus) out.unused_bonus_u = v.bonus_u;
    for (std::size_t i = 0; i < v.positions.size(); ++i) {
        const SpecPosition& at = v.positions[i];
        SpecPositionRecord r;
        r.token = at.token;
        r.text = model.token_text(at.token);
        r.q = at.q;
        r.p = at.p;
        r.acceptance = at.acceptance;
        r.overlap = at.overlap;
        r.u = at.u;
        r.draft_u = round.draft_u[i];
        r.tested = at.tested;
        r.accepted = at.accepted;
        r.greedy = at.tested && !at.u;
        r.q_kept = round.rows.draft[i].ids.size();
        r.p_kept = round.rows.target[i].ids.size();
        r.bars = positionBars(round.rows.draft[i], round.rows.target[i], at.token, model);
        out.positions.push_back(std::move(r));
    }
    out.final = finalRecord(v.final, model);
    for (std::size_t i = 0; i < round.emitted.size(); ++i) {
        SpecEmittedRecord e;
        e.id = round.emitted[i];
        e.text = model.token_text(e.id);
        e.position = i;
        const bool last = i == v.emitted.size() - 1;
        e.source = !last ? SpecSource::Accepted : v.final.bonus ? SpecSource::Bonus : SpecSource::Residual;
        e.p = row_prob(round.rows.target[i], e.id);
        out.emitted.push_back(std::move(e));
    }
    return out;
}

SpeculationOutcome runSpeculationRounds(const Speculation& from, int rounds) {
    SpeculationOutcome out;
    out.speculation = std::make_shared<Speculation>(from);
    try {
        for (int i = 0; i < rounds && !out.speculation->ended() && !out.speculation->exhausted(); ++i) {
            const SpeculativeRound round = out.speculation->round();
            out.rounds.push_back(recordRound(round, *out.speculation));
        }
    } catch (const InputError& error) {
        out.error = QString::fromUtf8(error.what());
    } catch (const std::bad_alloc&) {
        out.error = QStringLiteral("out of memory while running the rounds");
    }
    return out;
}

}  // namespace samplescope::ui
