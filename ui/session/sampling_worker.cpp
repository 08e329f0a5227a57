#include "ui/session/sampling_worker.h"

#include <chrono>
#include <new>

#include <QtConcurrent/QtConcurrentRun>

#include "engine/base/input_error.h"
#include "ui/common/cpu_state.h"
#include "ui/common/thread_clock.h"

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
        view->trace = std::make_shared<const SampleTrace>(job.request.step(*job.logits));
        // Every stage's q here, off the GUI thread (a trace leaves a row-sized q to its reader).
        for (const auto& stage : view->trace->stages) (void)stage.probs.get();
        view->raw_logits = job.logits;
        view->labels = job.labels;
        view->top_n = job.top_n;
        view->stages.reserve(kStageCount);
        // The rank orders outlive the job: an unchanged row is not sorted again (one worker thread).
        thread_local RankOrders orders;
        // The main view shows the contract's stages (its trace holds no other).
        for (const auto& info : kStages) {
            if (!info.contract) continue;
            StagePlotData data = makeStagePlotData(*view->trace, info.stage, job.top_n);
            const auto index = static_cast<std::size_t>(info.stage);
            const std::optional<PlotMode> chosen = index < job.plot_modes.size() ? job.plot_modes[index] : std::nullopt;
            const bool whole = chosen ? *chosen == PlotMode::Vocabulary
                                      : vocabularyByDefault(info.stage, data.candidates, job.top_n);
            if (info.stage == Stage::Draw) {
                // The draw plot has no curve.
            } else if (whole) {
                data.curve = makeVocabCurve(*view->trace, info.stage, orders);
            } else {
                // Ranked all the same: the next stage's order derives from this one's instead of a sort of the row.
                const StageTrace& before = view->trace->stage(inputStage(*view->trace, info.stage));
                (void)orders.ranked(before.kept, view->trace->stage(info.stage).logits);
            }
            view->stages.push_back(std::move(data));
        }
        view->stats = makeTruncationStats(*view->trace);
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
