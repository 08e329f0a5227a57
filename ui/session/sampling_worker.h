// Runs the engine off the GUI thread. Requests are coalesced: while one runs,
// only the newest waiting request is kept, so a dragged slider never queues
// work. A finished trace is shown even when a newer request waits (a frame of
// the drag); a refusal is reported only for the newest request.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QThreadPool>

#include "engine/pipelines/request.h"
#include "ui/common/trace_view.h"

namespace samplescope::ui {

struct SamplingJob {
    std::shared_ptr<const std::vector<double>> logits;
    std::shared_ptr<const TokenLabels> labels;
    Request request;  // a copy of the session's request: its next step is previewed
    std::size_t top_n = 40;
    // Each stage's chosen plot view, indexed by Stage (nothing or absent: its
    // default): a whole-vocabulary curve is made only for a plot that shows it.
    std::vector<std::optional<PlotMode>> plot_modes;
    std::uint64_t generation = 0;
};

struct SamplingOutcome {
    std::uint64_t generation = 0;
    std::shared_ptr<const TraceView> view;  // null on error
    QString error_field;
    QString error_message;
};

// The whole computation of one job; callable from any thread.
SamplingOutcome runSamplingJob(SamplingJob job);

class SamplingWorker : public QObject {
    Q_OBJECT
public:
    explicit SamplingWorker(QObject* parent = nullptr);
    ~SamplingWorker() override;

    // Queues the job (replacing any job still waiting) and returns its generation.
    std::uint64_t submit(SamplingJob job);
    bool idle() const { return !running_ && !waiting_; }
    std::uint64_t latestGeneration() const { return latest_; }
    std::uint64_t droppedCount() const { return dropped_; }

signals:
    void traceReady(std::shared_ptr<const samplescope::ui::TraceView> view);
    void traceFailed(std::uint64_t generation, const QString& field, const QString& message);

private:
    void startWaiting();
    void onFinished();

    QThreadPool pool_;
    QFutureWatcher<SamplingOutcome> watcher_;
    std::optional<SamplingJob> waiting_;
    bool running_ = false;
    std::uint64_t latest_ = 0;
    std::uint64_t dropped_ = 0;
};

}  // namespace samplescope::ui
