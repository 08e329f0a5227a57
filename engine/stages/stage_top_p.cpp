// The top-p unit: keep the shortest ranked prefix whose mass reaches p, with
// each stack's comparison at the boundary. Sources: kStageRules below.
#include <algorithm>

#include "engine/base/buffer_pool.h"
#include "engine/core/element_math.h"
#include "engine/core/gates.h"
#include "engine/stages/stage_unit.h"
#include "engine/stages/truncation.h"

namespace samplescope {

namespace {

constexpr std::size_t kPrefetchAhead = 16;

// The contract (step 7): walking in rank order, the id whose running mass
// first reaches p is the last kept. The ranking is extended lazily, so a
// peaked row never sorts its tail.
void contract(RowState& row, double p, StepReport& report, StageTrace& shown) {
    const IdList& kept = row.kept();
    const Values& probs = row.kept_probs();
    // Before any truncation the kept set is usually every id, at its own position.
    const bool whole_row = kept.size() == row.vocab;
    const auto prob_of_id = [&](std::int32_t id) {
        if (whole_row) return probs[static_cast<std::size_t>(id)];
        return probs[static_cast<std::size_t>(std::lower_bound(kept.begin(), kept.end(), id) - kept.begin())];
    };
    // Read once: the walk below keeps everything it touches per rank in locals.
    const Arithmetic arithmetic = row.arithmetic;
    const bool tracing = row.tracing;
    const std::size_t n = kept.size();
    double mass = 0.0;
    double before = 0.0;
    std::size_t rank = 0;
    bool reached = false;
    // Pooled: a broad row's walk is V-sized.
    std::shared_ptr<Values> walk_mass = pooled_doubles();
    // No q exceeds the largest, so at least p / (largest q) ranks are
    // walked: a broad row asks for that many at once, and goes straight to
    // the buckets instead of first scanning the row for a small block.
    const double at_least = std::min(p / row.largest_kept_prob(), static_cast<double>(n));
    const IdList* ranked = &row.ranked(std::max<std::size_t>(1, static_cast<std::size_t>(at_least)));
    while (rank < n && !reached) {
        if (rank >= ranked->size()) {
            // Still far from p after the ranks so far (a broad row): ask for a
            // large block at once rather than growing block by block.
            ranked = &row.ranked(mass < 0.5 * p ? std::max(rank + 1, n / 8) : rank + 1);
        }
        // The ranks at hand.
        const std::int32_t* ids = ranked->data();
        const std::size_t end = ranked->size();
        if (tracing) walk_mass->resize(end);
        double* masses = walk_mass->data();
        while (rank < end) {
            // On a broad row the walk reads q at ids scattered over the row:
            // ask for the one a few ranks ahead now, so the loads overlap.
            if (whole_row && rank + kPrefetchAhead < end) {
                prefetch(&probs[static_cast<std::size_t>(ids[rank + kPrefetchAhead])]);
            }
            before = mass;
            mass = in_arithmetic(arithmetic, mass + prob_of_id(ids[rank]));
            if (tracing) masses[rank] = mass;
            ++rank;
            if (top_p_reached(mass, p)) {
                reached = true;
                break;
            }
        }
    }
    report.near_boundary = near_threshold(before, p) || (rank < n && near_threshold(mass, p));
    shown.crossing_rank = rank;
    shown.crossing_id = (*ranked)[rank - 1];
    shown.crossing_mass = mass;
    std::shared_ptr<IdList> walk_ids = pooled_ids();
    if (tracing) {
        // The walk's ids are the ranked prefix.
        walk_ids->assign(ranked->begin(), ranked->begin() + static_cast<std::ptrdiff_t>(rank));
        walk_mass->resize(rank);
    }
    shown.walk_ids = std::move(walk_ids);
    shown.walk_mass = std::move(walk_mass);
    row.keep_ranked_prefix(rank);
}

TruncationOutcome stack_rule(Rule rule, const TruncationView& view) {
    TruncationOutcome out;
    const Ranked ranked = ranked_candidates(view);
    const std::size_t n = ranked.ids.size();
    const double p = view.params.top_p;
    // In F32 each stack's running sums as it keeps them: llama.cpp adds in
    // float32; torch's CPU cumsum adds in double and stores each prefix as
    // float32; comparisons then see float32 values.
    const auto r = [&view](double x) { return in_arithmetic(view.arithmetic, x); };
    switch (rule) {
        case Rule::TopPContract:
        case Rule::TopPInclusiveCumsum: {
            // Contract: as above. llama.cpp: cum_sum += p_i; the first i with
            // cum_sum >= p gives last_idx = i + 1 (all kept if none does).
            double mass = 0.0;
            std::size_t count = n;
            double before = 0.0;
            // llama.cpp also needs i + 1 >= min_keep (0 and 1 alike).
            const std::size_t min_keep =
                rule == Rule::TopPInclusiveCumsum ? static_cast<std::size_t>(view.params.min_keep) : 0;
            for (std::size_t i = 0; i < n; ++i) {
                before = mass;
                mass = r(mass + ranked.probs[i]);
                if (top_p_reached(mass, p) && i + 1 >= min_keep) {
                    count = i + 1;
                    break;
                }
            }
            out.near_boundary = near_threshold(before, p) || (count < n && near_threshold(mass, p));
            keep_prefix(ranked, count, out, true);
            if (rule == Rule::TopPInclusiveCumsum) out.tie_at_boundary = tie_across(view, ranked, count);
            break;
        }
        case Rule::TopPAscendingCumsum: {
            // vLLM / HF: sort ascending, cumsum, mask cumsum <= 1 - p, and the
            // last (largest) position is always kept. Ascending order is the
            // reverse of the rank order, so among equal values the lower id
            // sits later and survives.
            const double threshold = r(1.0 - p);
            double cumsum = 0.0;
            std::size_t dropped = 0;  // the masked positions form a prefix of the ascending order
            for (std::size_t j = 0; j < n; ++j) {
                const std::size_t i = n - 1 - j;
                cumsum += ranked.probs[i];
                const bool masked = r(cumsum) <= threshold && j + 1 < n;
                if (near_threshold(cumsum, threshold)) out.near_boundary = true;
                if (!masked) break;
                ++dropped;
            }
            keep_prefix(ranked, n - dropped, out, true);
            out.tie_at_boundary = tie_across(view, ranked, n - dropped);
            break;
        }
        case Rule::TopPAscendingCumsumStable: {
            // The same mask over a stable ascending sort: within a run of equal
            // logits the ids stay in ascending order (as in the rank order),
            // so the lower ids are masked first.
            const auto logit = [&](std::size_t i) { return view.logits[ranked.ids[i]]; };
            std::vector<std::size_t> ascending;  // positions in `ranked`, ascending by logit, stable
            ascending.reserve(n);
            for (std::size_t end = n; end > 0;) {
                std::size_t start = end - 1;
                while (start > 0 && logit(start - 1) == logit(end - 1)) --start;
                for (std::size_t i = start; i < end; ++i) ascending.push_back(i);
                end = start;
            }
            const double threshold = r(1.0 - p);
            double cumsum = 0.0;
            std::size_t dropped = 0;
            for (std::size_t j = 0; j < n; ++j) {
                cumsum += ranked.probs[ascending[j]];
                if (near_threshold(cumsum, threshold)) out.near_boundary = true;
                if (!(r(cumsum) <= threshold && j + 1 < n)) break;
                ++dropped;
            }
            std::size_t last = 0;  // the lowest-ranked kept position: the walk runs up to it
            IdList kept;
            for (std::size_t j = dropped; j < n; ++j) {
                kept.push_back(ranked.ids[ascending[j]]);
                last = std::max(last, ascending[j]);
            }
            std::sort(kept.begin(), kept.end());
            keep_prefix(ranked, last + 1, out, true);
            out.kept = std::move(kept);
            break;
        }
        case Rule::TopPExclusivePrefix:
        case Rule::TopPExclusivePrefixStrict: {
            // SGLang torch: probs_sum = cumsum of the descending sort; positions
            // with (probs_sum - probs_sort) > p are zeroed, elementwise.
            // FlashInfer's torch reference keeps (cumsum - q) < p instead.
            const bool strict = rule == Rule::TopPExclusivePrefixStrict;
            double probs_sum = 0.0;
            std::vector<bool> keep(n, false);
            for (std::size_t i = 0; i < n; ++i) {
                probs_sum += ranked.probs[i];
                const double prefix = r(r(probs_sum) - ranked.probs[i]);
                keep[i] = strict ? prefix < p : !(prefix > p);
                if (near_threshold(prefix, p)) out.near_boundary = true;
            }
            std::size_t last = 0;
            IdList kept;
            for (std::size_t i = 0; i < n; ++i) {
                if (keep[i]) {
                    kept.push_back(ranked.ids[i]);
                    last = i;
                }
                if (i + 1 < n && keep[i] != keep[i + 1] &&
                    view.logits[ranked.ids[i]] == view.logits[ranked.ids[i + 1]]) {
                    out.tie_at_boundary = true;
                }
            }
            std::sort(kept.begin(), kept.end());
            keep_prefix(ranked, last + 1, out, true);  // the walk up to the last kept position
            out.kept = std::move(kept);
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
                    above = r(above + run_mass);
                    run_mass = 0.0;
                }
                if (near_threshold(above, p)) out.near_boundary = true;
                if (!(above < p)) break;
                run_mass = r(run_mass + ranked.probs[i]);
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

// SGLang's torch path masks (cumsum - q) > p whatever p is, and FlashInfer's
// kernels search their pivot at p = 1 as at any p: nothing is dropped in exact
// arithmetic, but a float32 running sum can reach 1.0 and drop the tail. The
// model keeps p = 1 off; the float32 run applies the rule.
bool applies_at_one(const RowState& row, Rule rule) {
    return row.arithmetic == Arithmetic::F32 &&
           (rule == Rule::TopPExclusivePrefix || rule == Rule::TopPExclusivePrefixStrict ||
            rule == Rule::TopPMassAboveByValue);
}

bool gate(const SamplingParams& p, std::size_t) { return gate_top_p(p.top_p); }

bool top_p(RowState& row, const PipelineStep& step, StepReport& report, StageTrace& shown) {
    if (!gate(row.params, row.vocab) && !applies_at_one(row, step.rule)) return false;
    if (step.rule == Rule::TopPContract && !row.joint()) {
        contract(row, row.params.top_p, report, shown);
    } else {
        apply_outcome(row, stack_rule(step.rule, view_of(row)), report, shown);
    }
    return true;
}

constexpr Param kReads[] = {Param::TopP, Param::MinKeep};

// Only llama.cpp's rule has a min_keep.
bool rule_reads(Rule rule, Param param) { return param != Param::MinKeep || rule == Rule::TopPInclusiveCumsum; }

constexpr StageUnit kUnit{kReads, listens_always, top_p, rule_reads};

constexpr ParamInfo kStageParams[] = {
    {.param = Param::TopP, .key = "top_p", .label = "Top-p", .default_value = 1.0, .slider_min = 0.0,
     .slider_max = 1.0,
     .formula = "Keep the shortest ranked prefix whose probability mass reaches p (the crossing token stays). Off at 1.",
     .valid_range = "in [0, 1]", .real = &SamplingParams::top_p, .min = 0.0, .max = 1.0, .contract = true,
     .role = ParamRole::Switch, .on = gate},
};

constexpr RuleInfo kStageRules[] = {
    {Rule::TopPContract, Stage::TopP, "contract", "Running mass reaches p", "spec",
     "Walk by (logit desc, id asc); the id whose running mass first reaches p is the last kept.",
     "sampling contract section 2, step 7", false},
    {Rule::TopPAscendingCumsum, Stage::TopP, "ascending_cumsum", "Ascending cumsum <= 1 - p dropped",
     "vllm, hf", "Sort ascending, cumsum; drop cumsum <= 1 - p; the largest always stays.",
     "vllm-project/vllm vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p; huggingface/transformers "
     "src/transformers/generation/logits_process.py TopPLogitsWarper",
     true},
    {Rule::TopPAscendingCumsumStable, Stage::TopP, "ascending_cumsum_stable",
     "Ascending cumsum <= 1 - p dropped, stable sort", "vllm and hf on the CPU (variant)",
     "As ascending_cumsum, sorted stably as torch.sort is on the CPU: among equal logits the lower id sits "
     "first in the ascending order and is dropped first, so the higher ids stay.",
     "vllm-project/vllm vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p; huggingface/transformers "
     "src/transformers/generation/logits_process.py TopPLogitsWarper; torch.sort (stable on the CPU)",
     false},
    {Rule::TopPExclusivePrefix, Stage::TopP, "exclusive_prefix", "Exclusive prefix <= p kept", "sglang",
     "Sort descending, cumsum; drop (cumsum - p_i) > p: the id whose prefix equals p stays.",
     "sgl-project/sglang python/sglang/srt/layers/sampler.py top_k_top_p_min_p_sampling_from_probs_torch", true},
    {Rule::TopPExclusivePrefixStrict, Stage::TopP, "exclusive_prefix_strict", "Exclusive prefix < p kept",
     "FlashInfer's torch reference (variant)",
     "Sort descending, cumsum; keep (cumsum - p_i) < p: the id whose prefix equals p goes.",
     "flashinfer-ai/flashinfer flashinfer/trace/templates/sampling.py _top_p_renorm_probs_reference", true},
    {Rule::TopPInclusiveCumsum, Stage::TopP, "inclusive_cumsum", "Inclusive cumsum >= p stops", "llamacpp",
     "Sort descending; keep up to the first id whose inclusive cumsum is >= p.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_top_p_apply", true},
    {Rule::TopPMassAboveByValue, Stage::TopP, "mass_above", "Mass strictly above < p", "flashinfer-*",
     "Keep t when the mass of ids with p_j > p_t is < p: tied ids stay or go together.",
     "flashinfer-ai/flashinfer include/flashinfer/sampling.cuh TopPSamplingFromProbKernel", false},
};

}  // namespace

extern const StageDescriptor stage_top_p_descriptor;
constinit const StageDescriptor stage_top_p_descriptor{
    .stage = Stage::TopP,
    .name = "top_p",
    .title = "Top-p",
    .summary = "Keep the shortest ranked prefix whose mass reaches p, crossing token included.",
    .truncates = true,
    .contract = true,
    .mark = PlotMark::CumulativeMass,
    .params = kStageParams,
    .rules = kStageRules,
    .gate = gate,
    .off_reason = [](const SamplingParams& p, std::size_t) {
        return off_because("top_p = " + format_number(p.top_p), "off at >= 1", true);
    },
    .unit = &kUnit,
};

}  // namespace samplescope
