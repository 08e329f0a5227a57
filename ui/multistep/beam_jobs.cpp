#include "ui/multistep/beam_jobs.h"

#include <new>

#include "engine/base/input_error.h"
#include "engine/core/element_math.h"
#include "engine/core/row_checks.h"
#include "engine/core/row_math.h"
#include "ui/common/cpu_state.h"

namespace samplescope::ui {

std::vector<double> modelLogprobs(const LanguageModel& model, std::span<const PromptWord> prompt,
                                  std::span<const std::int64_t> tokens) {
    std::vector<std::int64_t> context;
    for (const auto& word : prompt) context.push_back(word.id);
    std::vector<double> row;
    std::vector<double> out;
    for (const auto token : tokens) {
        model.next_logits({context, prompt.size()}, row);
        check_logits(row);
        const auto sums = row_softmax_sums(row.data(), static_cast<std::int64_t>(row.size()));
        out.push_back(log_softmax_at(row[static_cast<std::size_t>(token)], sums.max_logit, sums.partition));
        context.push_back(token);
    }
    return out;
}

BeamOutcome runBeamJob(BeamJob job) {
    BeamOutcome out;
    clearUpperVectorState();
    if (job.search) {
        try {
            while (!job.search->done()) out.steps.push_back(job.search->step());
            out.result = job.search->result();
        } catch (const InputError& error) {
            out.error = QString::fromUtf8(error.what());
        } catch (const std::bad_alloc&) {
            out.error = QStringLiteral("out of memory during the beam search");
        }
    }
    if (job.sample) {
        SampledText sample;
        GenerationOutcome written = runGeneration(*job.sample);
        sample.error = written.error;
        sample.steps = std::move(written.steps);
        std::vector<std::int64_t> tokens;
        for (const auto& step : sample.steps) tokens.push_back(step.token.id);
        try {
            sample.model_logprobs = modelLogprobs(*job.sample->model, job.sample->prompt, tokens);
        } catch (const InputError& error) {
            sample.error = QString::fromUtf8(error.what());
            sample.steps.clear();
        }
        out.sample = std::move(sample);
    }
    return out;
}

}  // namespace samplescope::ui
