#include "kernels/tools/batch_generate.h"

#include <cmath>
#include <limits>
#include <string>

#include "engine/core/generator.h"
#include "engine/base/input_error.h"

namespace samplescope::batch {

std::string_view workload_name(Workload workload) {
    switch (workload) {
        case Workload::Mixed: return "mixed";
        case Workload::EveryStage: return "every-stage";
        case Workload::TopPOnly: return "top-p";
        case Workload::Greedy: return "greedy";
    }
    return "mixed";
}

Workload parse_workload(std::string_view text) {
    for (const auto w : {Workload::Mixed, Workload::EveryStage, Workload::TopPOnly, Workload::Greedy}) {
        if (workload_name(w) == text) return w;
    }
    throw InputError("workload", "workload must be mixed, every-stage, top-p or greedy, got \"" + std::string(text) + "\"");
}

namespace {

// A plain PCG32 (not a request stream: these are inputs, not draws).
class Synth {
public:
    explicit Synth(std::uint64_t seed) : rng_(seed, 0x53594E5448ULL) {}
    double uniform() { return rng_.uniform_f64(); }
    std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(uniform() * n); }
    // Box-Muller, so the values do not depend on a standard library's normal_distribution.
    double normal() {
        const double u = 1.0 - uniform();
        const double v = uniform();
        return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
    }

private:
    Pcg32 rng_;
};

void fill_history(RowRequest& row, Synth& synth, std::size_t vocab, std::size_t prompt, std::size_t output) {
    // Ids drawn from a small pool so they repeat, as real histories do.
    const auto pool = static_cast<std::uint32_t>(std::max<std::size_t>(1, std::min<std::size_t>(vocab, prompt / 2 + 8)));
    for (std::size_t i = 0; i < prompt; ++i) row.prompt_ids.push_back(synth.below(pool) * 7 % vocab);
    for (std::size_t i = 0; i < output; ++i) row.output_ids.push_back(synth.below(pool) * 13 % vocab);
}

void mixed_row(RowRequest& row, float* logits, Synth& synth, std::size_t vocab, std::size_t index) {
    SamplingParams& p = row.params;
    const std::uint32_t kind = static_cast<std::uint32_t>(index % 12);
    switch (kind) {
        case 0: p.temperature = 0.0; break;  // greedy
        case 1: p.temperature = 0.3 + 1.5 * synth.uniform(); break;
        case 2: p.top_k = 1 + synth.below(static_cast<std::uint32_t>(vocab)); break;
        case 3: p.top_k = static_cast<std::int64_t>(vocab + synth.below(3)); break;  // k >= V
        case 4: p.top_p = synth.uniform(); break;
        case 5: p.top_p = 0.0; break;
        case 6: p.top_p = 1.0; p.min_p = synth.uniform() * 0.5; break;
        case 7:
            p.repetition_penalty = 0.8 + 0.8 * synth.uniform();
            p.presence_penalty = synth.uniform() - 0.5;
            p.frequency_penalty = synth.uniform() - 0.5;
            fill_history(row, synth, vocab, 6, 6);
            break;
        case 8:
            p.temperature = 0.5 + synth.uniform();
            p.top_k = 1 + synth.below(static_cast<std::uint32_t>(vocab));
            p.top_p = 0.5 + 0.5 * synth.uniform();
            p.min_p = 0.1 * synth.uniform();
            p.repetition_penalty = 1.2;
            fill_history(row, synth, vocab, 4, 4);
            break;
        case 9: p.temperature = 0.0; p.repetition_penalty = 1.5; fill_history(row, synth, vocab, 3, 3); break;
        case 10: p.top_k = 3; p.top_p = 0.8; break;
        default: p.temperature = 2.0; p.min_p = 0.2; p.top_p = 0.95; break;
    }
    p.seed = static_cast<std::uint64_t>(synth.uniform() * 9007199254740992.0) * 2048 + index;
    row.skip_draws = synth.below(4);
    // Some rows carry -inf ids and exact ties (copies of their top logits).
    if (synth.below(4) == 0) {
        for (std::size_t i = 0; i < vocab; ++i) {
            if (synth.below(5) == 0) logits[i] = -std::numeric_limits<float>::infinity();
        }
        logits[synth.below(static_cast<std::uint32_t>(vocab))] = 2.5f;
    }
    if (synth.below(4) == 0) {
        const float tied = 4.0f;
        for (int t = 0; t < 3; ++t) logits[synth.below(static_cast<std::uint32_t>(vocab))] = tied;
    }
}

}  // namespace

SyntheticBatch generate_batch(std::size_t rows, std::size_t vocab, Workload workload, std::uint64_t seed) {
    SyntheticBatch batch;
    batch.rows = rows;
    batch.vocab = vocab;
    batch.logits.resize(rows * vocab);
    batch.requests.resize(rows);
    Synth synth(seed);
    for (std::size_t r = 0; r < rows; ++r) {
        float* logits = batch.logits.data() + r * vocab;
        // Logits of a language model's shape: a broad body and a few strong candidates.
        for (std::size_t i = 0; i < vocab; ++i) logits[i] = static_cast<float>(2.0 * synth.normal());
        for (int peak = 0; peak < 4; ++peak) logits[synth.below(static_cast<std::uint32_t>(vocab))] += 8.0f;
        RowRequest& row = batch.requests[r];
        row.params.seed = seed * 1000003ULL + r;
        switch (workload) {
            case Workload::Mixed: mixed_row(row, logits, synth, vocab, r); break;
            case Workload::EveryStage:
                row.params.repetition_penalty = 1.1;
                row.params.presence_penalty = 0.5;
                row.params.frequency_penalty = 0.3;
                row.params.temperature = 0.7;
                row.params.top_k = 50;
                row.params.top_p = 0.9;
                row.params.min_p = 0.05;
                for (int i = 0; i < 800; ++i) row.prompt_ids.push_back(synth.below(static_cast<std::uint32_t>(vocab)));
                for (int i = 0; i < 200; ++i) row.output_ids.push_back(synth.below(static_cast<std::uint32_t>(vocab)));
                break;
            case Workload::TopPOnly: row.params.top_p = 0.9; break;
            case Workload::Greedy: row.params.temperature = 0.0; break;
        }
    }
    return batch;
}

}  // namespace samplescope::batch
