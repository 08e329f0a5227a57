// Random rows and parameters for the contract's property tests: coarse values
// (so ties are common), a few -inf ids, every stage on or off at random, short
// histories and a few skipped draws. One generator for every test that
// compares two implementations of the contract on random rows.
#pragma once

#include <cmath>
#include <cstdint>
#include <exception>
#include <random>
#include <vector>

#include "engine/core/sampling_params.h"
#include "engine/core/stage.h"

namespace samplescope::testing {

struct RandomCase {
    std::vector<double> logits;
    SamplingParams params;
    std::vector<std::int64_t> prompt;
    std::vector<std::int64_t> output;
    std::uint64_t skip = 0;
};

inline RandomCase random_case(std::mt19937_64& random, std::size_t max_vocab) {
    RandomCase c;
    const std::size_t vocab = 1 + random() % max_vocab;
    c.logits.resize(vocab);
    for (auto& x : c.logits) {
        const auto kind = random() % 10;
        x = kind == 0 ? -INFINITY : std::round(std::uniform_real_distribution<double>(-6, 6)(random) * 2) / 2;
        if (kind == 1) x = std::uniform_real_distribution<double>(-6, 6)(random);
        if (kind == 2 || kind == 3) x = std::normal_distribution<double>(0, 3)(random);
    }
    c.logits[random() % vocab] = 0.25;  // at least one finite logit
    const auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
    SamplingParams& p = c.params;
    p.seed = random();
    p.temperature = pick(8) == 0 ? 0.0 : std::uniform_real_distribution<double>(0.05, 3)(random);
    if (pick(2)) p.top_k = pick(static_cast<int>(vocab) + 2);
    if (pick(2)) p.top_p = pick(6) == 0 ? 0.0 : std::uniform_real_distribution<double>(0, 1)(random);
    if (pick(2)) p.min_p = std::uniform_real_distribution<double>(0, 1)(random);
    if (pick(3) == 0) p.repetition_penalty = std::uniform_real_distribution<double>(0.5, 2)(random);
    if (pick(3) == 0) p.presence_penalty = std::uniform_real_distribution<double>(-1, 1)(random);
    if (pick(3) == 0) p.frequency_penalty = std::uniform_real_distribution<double>(-1, 1)(random);
    c.prompt.resize(static_cast<std::size_t>(pick(5)));
    c.output.resize(static_cast<std::size_t>(pick(5)));
    for (auto& id : c.prompt) id = static_cast<std::int64_t>(random() % vocab);
    for (auto& id : c.output) id = static_cast<std::int64_t>(random() % vocab);
    c.skip = static_cast<std::uint64_t>(pick(4));
    return c;
}

// Every parameter of the table at random, each row read from the table
// (so a stage added later is covered too): half the time its default, else
// one of its slider's ends or middle, 0, 1 or a value between, whichever its row
// accepts; and each list parameter set a quarter of the time. Switches end up
// on, off and set-but-blocked (k >= V, an XTC threshold above 0.5, DRY's
// window 0) in about every combination.
inline SamplingParams random_params(std::mt19937_64& random) {
    SamplingParams p;
    for (const auto& info : kParams) {
        if (random() % 2 == 0) continue;
        const double lo = info.slider_min;
        const double hi = info.slider_max;
        const double choices[] = {lo, hi, 0.0, 1.0, (lo + hi) / 2.0, std::uniform_real_distribution<double>(lo, hi)(random)};
        double value = choices[random() % 6];
        if (info.integer()) value = std::round(value);
        if (!param_error(info.param, value)) set_param(p, info.param, value);
    }
    if (random() % 4 == 0) p.logit_bias = {{static_cast<std::int64_t>(random() % 3), 1.0}};
    if (random() % 4 == 0) p.dry_sequence_breakers = {{static_cast<std::int64_t>(random() % 3)}};
    p.seed = random();
    return p;
}

// Switches `stage` on by its own Switch rows and lists, each at the first of a
// few values its row accepts and calls on (other parameters as they are);
// false when none does. Read from the descriptor, so it serves a stage added later.
inline bool switch_stage_on(SamplingParams& params, Stage stage, std::size_t vocab) {
    const StageDescriptor& info = stage_info(stage);
    for (const auto& row : info.params) {
        if (row.role != ParamRole::Switch) continue;
        for (const double value : {row.slider_max, row.slider_min, 1.0, 0.5, 2.0}) {
            if (param_error(row.param, value)) continue;
            SamplingParams tried = params;
            set_param(tried, row.param, value);
            if (row.on(tried, vocab)) {
                params = tried;
                break;
            }
        }
    }
    for (const auto& list : info.lists) {
        if (list.role != ParamRole::Switch || list.on(params, vocab)) continue;
        for (const char* text : {"0:1", "0"}) {
            try {
                list.parse(params, text);
                break;
            } catch (const std::exception&) {
            }
        }
    }
    return !info.gate || info.gate(params, vocab);
}

}  // namespace samplescope::testing
