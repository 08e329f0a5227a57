// One step of a pipeline on a small row, and the checks of its final q: what
// the sampler tests (test_samplers, test_samplers_llamacpp) share.
#pragma once

#include <QtTest>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"

namespace samplescope::testing {

// A fresh request's step (seed 0 unless the params give one); `coin` and `mu`
// stand in for XTC's coin and mirostat's state when given.
inline PipelineTrace run(const Pipeline& pipeline, const std::vector<double>& logits, SamplingParams params,
                         const std::vector<std::int64_t>& prompt = {}, const std::vector<std::int64_t>& output = {},
                         std::optional<double> coin = std::nullopt, std::optional<double> mu = std::nullopt) {
    if (!params.seed) params.seed = 0;
    PipelineInput input{logits, params, prompt, output};
    input.xtc_coin = coin;
    input.mirostat_mu = mu;
    return trace_pipeline_once(pipeline, input);
}

// The same through a custom pipeline of `stages`.
inline PipelineTrace run(const std::string& stages, const std::vector<double>& logits, const SamplingParams& params,
                         const std::vector<std::int64_t>& prompt = {}, const std::vector<std::int64_t>& output = {},
                         std::optional<double> coin = std::nullopt, std::optional<double> mu = std::nullopt) {
    return run(custom_pipeline(stages), logits, params, prompt, output, coin, mu);
}

// Logits whose softmax is `probs` (log q, as llama.cpp's sampler_tester builds them).
inline std::vector<double> logits_of(const std::vector<double>& probs) {
    std::vector<double> logits;
    for (const double p : probs) logits.push_back(std::log(p));
    return logits;
}

// The final distribution, in ascending id order, with 0 for dropped ids.
inline std::vector<double> final_q(const PipelineTrace& t) {
    std::vector<double> q(t.trace.vocab_size, 0.0);
    const auto& kept = t.trace.final_kept();
    const auto& probs = t.trace.final_probs();
    for (std::size_t i = 0; i < kept.size(); ++i) q[static_cast<std::size_t>(kept[i])] = probs[i];
    return q;
}

inline void expect_q(const PipelineTrace& t, const std::vector<double>& expected, double tolerance) {
    const auto q = final_q(t);
    QCOMPARE(q.size(), expected.size());
    for (std::size_t i = 0; i < q.size(); ++i) {
        QVERIFY2(std::fabs(q[i] - expected[i]) < tolerance,
                 qPrintable(QStringLiteral("id %1: %2, expected %3").arg(i).arg(q[i], 0, 'g', 12).arg(expected[i])));
    }
}

}  // namespace samplescope::testing
