#include "ui/session/sampling_worker.h"

#include <chrono>
#include <new>

#include <QtConcurrent/QtConcurrentRun>

#include "engine/base/input_error.h"
#include "ui/common/cpu_state.h"
#include "ui/common/thread_clock.h"
#include "ui/session/display_builder.h"

namespace samplescope::ui {

SamplingOutcome runSamplingJob(SamplingJob job) {
    SamplingOutcome outcome;
    outcome.generation = job.generation;
    try {
        clearUpperVectorState();
        const auto start = std::chrono::steady_clock::now();
        const double cpu_start = threadCpuMs();
        auto view = std::make_shared<TraceView>();
        view->generation = job.generation;
        // Kept between jobs: a key after the penalties (temperature, truncation) leaves the
        // penalised row as it was, and its logprob's sums with it.
        thread_local LogprobMemo logprob_memo;
        SampleTrace trace = job.request.step(*job.logits, &logprob_memo);
        const auto stepped = std::chrono::steady_clock::now();
        view->parts.step_ms = std::chrono::duration<double, std::milli>(stepped - start).count();
        // Outlives the job: a stage whose inputs did not change keeps its arrays and data, an unchanged row is
        // not sorted again.
        thread_local DisplayBuilder builder;
        view->trace = builder.share(std::move(trace));
        view->parts.share_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - stepped).count();
        view->raw_logits = job.logits;
        view->labels = job.labels;
        view->top_n = job.top_n;
        builder.build(*view, job.plot_modes);
        view->compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        view->compute_cpu_ms = threadCpuMs() - cpu_start;
        outcome.view = std::move(view);
    } catch (const InputError& error) {
        outcome.error_field = QString::fromStdString(error.field());
        outcome.error_message = QString::fromStdString(error.what());
    } catch (const std::bad_alloc&) {
        outcome.error_field = QStringLiteral("memory");
        outcome.error_message = QStringLiteral("out of memory: this row needs more memory than the machine can give");
    } catch (const std::exception& error) {
        outcome.error_field = QStringLiteral("engine");
        outcome.error_message = QString::fromStdString(error.what());
    }
    return outcome;
}

SamplingWorker::SamplingWorker(QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(1);
    connect(&watcher_, &QFutureWatcher<SamplingOutcome>::finished, this, &SamplingWorker::onFinished);
}

SamplingWorker::~SamplingWorker() {
    waiting_.reset();
    watcher_.waitForFinished();
}

std::uint64_t SamplingWorker::submit(SamplingJob job) {
    job.generation = ++latest_;
    if (waiting_) ++dropped_;
    waiting_ = std::move(job);
    if (!running_) startWaiting();
    return latest_;
}

void SamplingWorker::startWaiting() {
    running_ = true;
    SamplingJob job = std::move(*waiting_);
    waiting_.reset();
    watcher_.setFuture(QtConcurrent::run(&pool_, [job = std::move(job)]() mutable { return runSamplingJob(std::move(job)); }));
}

void SamplingWorker::onFinished() {
    running_ = false;
    const SamplingOutcome outcome = watcher_.result();
    if (waiting_) startWaiting();
    if (outcome.view) {
        // Also when a newer request exists: jobs finish in order, so this is
        // newer than what is on screen, and a drag then shows a frame per
        // engine step instead of none until the slider stops.
        emit traceReady(outcome.view);
    } else if (outcome.generation != latest_) {
        ++dropped_;  // a refusal of a request that is no longer wanted
    } else {
        emit traceFailed(outcome.generation, outcome.error_field, outcome.error_message);
    }
}

}  // namespace samplescope::ui
