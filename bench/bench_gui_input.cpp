// The desktop window's latency from real input events: the real MainWindow on
// the xcb platform (under an Xvfb this program starts when DISPLAY is unset),
// the realistic example (V = 128,256, every stage on), a parameter slider with
// the keyboard focus, and Right/Left arrow keys sent through the X server with
// XTest on a second X connection, exactly as a keyboard's would arrive.
//
// Each key press is timed from the moment it is sent (just before
// XTestFakeKeyEvent and XFlush) to the moment the window has finished
// repainting for the resulting trace. "Finished repainting" is the end of the
// last UpdateRequest the window handles after it emitted traceDisplayed for a
// request made after the key, before the window goes quiet for 30 ms. Qt
// paints every dirty widget and flushes the backing store to the X server
// inside that one event (QWidgetRepaintManager), so its end is when the new
// pixels have been handed to the server; the bench delivers the event itself
// from an application event filter and reads the clock when it returns. This
// paints only what the window really repaints (not a forced full repaint, as
// bench_gui does) and counts a layout pass that repaints again later. Plots
// that repaint synchronously inside replot() are drawn before traceDisplayed,
// so a trace with nothing left to repaint is done when it is displayed.
//
// The next key is sent only after that quiet period, so each is measured alone.
// A drag run then sends 50 keys back to back, without waiting, and reports how
// many traces were drawn and when the last repaint ended. Prints the
// distribution and where the time went; never fails on timing (exit 0).
//
//   bench_gui_input [keys per slider and direction (15)] [generate]
//
// `generate` runs the same keys on the Generate tab instead: Debian's n-gram
// model (V = 72,547) writing from the tab's default prompt, the realistic
// example's parameters (every stage on), the tab's own plots on show.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QApplication>
#include <QSlider>
#include <QTimer>
#include <QThread>
#include <QWindow>

#include "engine/base/memory_budget.h"
#include "engine/core/sampling_params.h"
#include "ui/common/cpu_state.h"
#include "ui/common/examples.h"
#include "ui/common/plot_data.h"
#include "ui/common/thread_clock.h"
#include "ui/window/main_window.h"
#include "x_keyboard.h"

using namespace samplescope;
using Clock = std::chrono::steady_clock;
using Key = bench::XKeyboard::Key;

namespace {

double msBetween(Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double, std::milli>(to - from).count(); }

// Runs the event loop, sleeping while there is nothing to do (as a user's
// idle window does), until `done` or the timeout. processEvents with a time
// limit drops WaitForMoreEvents and would spin a core that the worker needs;
// so this blocks for the next event, and a 5 ms timer wakes it to look again.
template <typename Done>
bool pumpUntil(Done done, double timeout_ms) {
    QTimer tick;
    tick.start(5);
    const auto start = Clock::now();
    while (!done()) {
        if (msBetween(start, Clock::now()) >= timeout_ms) return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
    }
    return true;
}

// ---- the X server ---------------------------------------------------------

// An Xvfb started by this program (and stopped only by it).
struct Xvfb {
    pid_t pid = -1;
    std::string display;
};

// Starts `Xvfb -displayfd` (it picks a free display number itself and writes
// it to the pipe). The child gets SIGTERM if this program dies first.
Xvfb startXvfb() {
    Xvfb server;
    int fds[2];
    if (pipe(fds) != 0) return server;
    const pid_t pid = fork();
    if (pid < 0) return server;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        close(fds[0]);
        const std::string fd = std::to_string(fds[1]);
        execlp("Xvfb", "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", "1600x1000x24", "-nolisten", "tcp",
               static_cast<char*>(nullptr));
        _exit(127);
    }
    close(fds[1]);
    std::string number;
    char c = 0;
    while (read(fds[0], &c, 1) == 1 && c != '\n') number += c;
    close(fds[0]);
    server.pid = pid;
    if (number.empty()) {
        int status = 0;
        waitpid(pid, &status, 0);
        server.pid = -1;
        return server;
    }
    server.display = ":" + number;
    return server;
}

void stopXvfb(Xvfb& server) {
    if (server.pid <= 0) return;
    kill(server.pid, SIGTERM);
    int status = 0;
    waitpid(server.pid, &status, 0);
    server.pid = -1;
}

// ---- figures --------------------------------------------------------------

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0.0;
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return percentile(values, 50.0);
}

double shareBelow(const std::vector<double>& values, double limit) {
    if (values.empty()) return 0.0;
    const auto count = std::count_if(values.begin(), values.end(), [limit](double v) { return v < limit; });
    return 100.0 * static_cast<double>(count) / static_cast<double>(values.size());
}

void printDistribution(const char* name, std::vector<double> values) {
    std::sort(values.begin(), values.end());
    std::printf("  %-34s min %6.1f  median %6.1f  p90 %6.1f  p95 %6.1f  p99 %6.1f  max %6.1f ms\n", name,
                values.empty() ? 0.0 : values.front(), percentile(values, 50), percentile(values, 90), percentile(values, 95),
                percentile(values, 99), values.empty() ? 0.0 : values.back());
}

double loadAverage() {
    double load = 0.0;
    if (FILE* file = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(file, "%lf", &load) != 1) load = 0.0;
        std::fclose(file);
    }
    return load;
}

std::string cpuModel() {
    std::string model = "unknown CPU";
    if (FILE* file = std::fopen("/proc/cpuinfo", "r")) {
        char line[512];
        while (std::fgets(line, sizeof line, file)) {
            if (std::strncmp(line, "model name", 10) == 0) {
                const char* colon = std::strchr(line, ':');
                if (colon) model = std::string(colon + 2, std::strcspn(colon + 2, "\n"));
                break;
            }
        }
        std::fclose(file);
    }
    return model;
}

// ---- watching the window --------------------------------------------------

// Sees the key arrive at the slider and delivers the window's UpdateRequest
// itself so it can read the clock when the paint and flush are done.
class Watcher : public QObject {
public:
    explicit Watcher(QWidget* window) : window_(window) {}

    bool eventFilter(QObject* target, QEvent* event) override {
        if (event->type() == QEvent::KeyPress && target == QApplication::focusWidget()) {
            if (key_arrived_ == Clock::time_point{}) key_arrived_ = Clock::now();
            ++keys_;
        }
        if (event->type() == QEvent::Paint && profile_paint_ && target->isWidgetType()) {
            const double start = ui::threadCpuMs();
            const bool handled = target->event(event);
            PaintCost& cost = paint_by_class_[QString::fromLatin1(target->metaObject()->className())];
            cost.ms += ui::threadCpuMs() - start;
            ++cost.count;
            return handled;
        }
        if (event->type() == QEvent::UpdateRequest && (target == window_ || target == window_->windowHandle())) {
            const auto start = Clock::now();
            const double cpu_start = ui::threadCpuMs();
            const bool handled = target->event(event);
            last_paint_end_ = Clock::now();
            paint_ms_ += msBetween(start, last_paint_end_);
            paint_cpu_ms_ += ui::threadCpuMs() - cpu_start;
            ++paints_;
            if (displayed_) {
                ++paints_after_display_;
                if (first_paint_after_display_ == Clock::time_point{}) first_paint_after_display_ = last_paint_end_;
            }
            return handled;
        }
        return false;
    }

    void onDisplayed(std::uint64_t generation) {
        if (generation <= after_generation_) return;
        ++displays_;
        displayed_at_ = Clock::now();
        displayed_ = true;
        paint_ms_ = paint_cpu_ms_ = 0.0;  // the paints of this trace, from here on
        first_paint_after_display_ = {};
        paints_after_display_ = 0;
    }

    // Forget everything; count only traces of requests newer than `generation`.
    void reset(std::uint64_t generation) {
        after_generation_ = generation;
        key_arrived_ = displayed_at_ = first_paint_after_display_ = last_paint_end_ = {};
        displayed_ = false;
        keys_ = displays_ = paints_ = paints_after_display_ = 0;
        paint_ms_ = paint_cpu_ms_ = 0.0;
    }

    // When the trace on show was done: the end of its last repaint, or its
    // display when nothing was left to repaint after it (QCustomPlot repaints
    // a plot inside replot() when its phImmediateRefresh hint is set, as it is
    // by default, so a trace that changed only plots is drawn within onTrace).
    Clock::time_point doneAt() const { return paints_after_display_ > 0 ? last_paint_end_ : displayed_at_; }

    // Runs the event loop until a trace newer than the reset's generation was
    // displayed, and then nothing was painted for `quiet_ms`.
    bool waitUntilQuiet(double quiet_ms, double timeout_ms) {
        return pumpUntil([&] { return displayed_ && msBetween(doneAt(), Clock::now()) >= quiet_ms; }, timeout_ms);
    }

    struct PaintCost {
        double ms = 0.0;
        int count = 0;
    };
    QWidget* window_;
    bool profile_paint_ = false;  // time each widget's paint event, by class
    std::map<QString, PaintCost> paint_by_class_;
    std::uint64_t after_generation_ = 0;
    bool displayed_ = false;
    Clock::time_point key_arrived_, displayed_at_, first_paint_after_display_, last_paint_end_;
    int keys_ = 0, displays_ = 0, paints_ = 0, paints_after_display_ = 0;
    double paint_ms_ = 0.0, paint_cpu_ms_ = 0.0;
};

struct Sample {
    const char* slider = "";   // the parameter whose slider got the key
    double total = 0.0;        // key sent -> last repaint done
    double delivery = 0.0;     // key sent -> key event at the slider
    double to_display = 0.0;   // key sent -> traceDisplayed
    double worker = 0.0;       // engine step + display data (worker thread, wall)
    double worker_cpu = 0.0;
    double worker_step = 0.0;     // its parts (TraceView::WorkerParts)
    double worker_share = 0.0;
    double worker_rank = 0.0;
    double worker_display = 0.0;
    double reused_stages = 0.0;
    double handoff = 0.0;      // the rest before onTrace: queued submit, thread start, result signal
    double on_trace = 0.0;     // MainWindow::onTrace (GUI thread, wall): plots, table, statistics
    double on_trace_cpu = 0.0;
    double paint = 0.0;        // inside the repaints after traceDisplayed (GUI thread, wall)
    double paint_cpu = 0.0;
    double paint_wait = 0.0;   // traceDisplayed -> last repaint done, less the painting itself
    int repaints = 0;
};

int run(int argc, char** argv, const std::string& display_note) {
    QApplication app(argc, argv);
    ui::MainWindow window(ui::MainWindowOptions{false});
    window.resize(1600, 1000);
    window.show();
    window.activateWindow();
    window.loadExample(ui::realisticExample());
    window.waitUntilDrawn();
    const bool generate_mode = argc > 2 && std::strcmp(argv[2], "generate") == 0;
    auto* generate = window.generateView();
    if (generate_mode) {
        ui::ModelLoad loaded = ui::loadModel({}, default_memory_budget());
        if (!loaded.model) {
            std::fprintf(stderr, "bench_gui_input: %s\n", qPrintable(loaded.error));
            return 2;
        }
        generate->setModel(std::move(loaded));
        window.showView(generate);
        generate->start(ui::GenerateView::defaultPrompt(), 6);
        window.waitUntilDrawn();
        std::printf("bench_gui_input: the Generate tab, text \"%s\"\n", qPrintable(generate->lineText()));
    }

    bench::XKeyboard keyboard;
    if (!keyboard.usable()) {
        std::fprintf(stderr, "bench_gui_input: the X server at DISPLAY=%s has no XTest extension\n", qgetenv("DISPLAY").constData());
        return 2;
    }
    Watcher watcher(&window);
    app.installEventFilter(&watcher);
    QObject::connect(&window, &ui::MainWindow::traceDisplayed, &window, [&watcher](std::uint64_t g) { watcher.onDisplayed(g); });

    const auto& trace = *window.currentView()->trace;
    int active = 0;
    std::string inactive;
    for (const auto& stage : trace.stages) {
        active += stage.active ? 1 : 0;
        if (!stage.active) inactive += (inactive.empty() ? " (off: " : ", ") + std::string(stage_info(stage.stage).name);
    }
    if (!inactive.empty()) inactive += ")";
    const double load_before = loadAverage();
    std::printf("bench_gui_input: %s, platform %s, %s, %d CPUs, load average %.2f\n", display_note.c_str(),
                qPrintable(QGuiApplication::platformName()), cpuModel().c_str(), QThread::idealThreadCount(), load_before);
    std::printf("bench_gui_input: V = %zu, %d of %zu stages active%s, top N = %zu, window %dx%d\n", trace.vocab_size, active,
                trace.stages.size(), inactive.c_str(), window.activePipelineView()->topN(), window.width(), window.height());

    // The yardstick, in this process and on this thread: one worker job (engine
    // step at V = 128,256 plus the display data), and the engine step alone.
    std::vector<double> job_ms, step_ms;
    for (int i = 0; i < 11; ++i) {
        ui::clearUpperVectorState();
        auto start = Clock::now();
        const auto outcome = ui::runSamplingJob(ui::SamplingJob{window.session().logits(), window.session().labels(),
                                                                window.session().request(), window.activePipelineView()->topN(),
                                                                window.activePipelineView()->plotModes(), 0});
        job_ms.push_back(msBetween(start, Clock::now()));
        Request request = window.session().request();
        start = Clock::now();
        const SampleTrace step = request.step(*window.session().logits());
        (void)step;
        (void)outcome;
        step_ms.push_back(msBetween(start, Clock::now()));
    }
    // The engine step is the yardstick: the same work at every call (a repeated
    // job is cheap, its stages' data kept from the call before).
    const double yardstick = median(step_ms);
    std::printf("yardstick (GUI thread, no events): engine step alone median %.1f ms; the same worker job again median %.1f ms\n",
                yardstick, median(job_ms));
    // What an idle pause costs on this machine: a temperature key's worker job (0.80 and 0.81 in turn) back to
    // back, and each after 30 ms asleep, as every key below comes after a quiet period: meanwhile the rows it
    // reads leave the caches.
    {
        const auto temperature_job = [&window](int i) {
            Request request = window.session().request();
            SamplingParams params = request.params();
            params.temperature = i % 2 ? 0.81 : 0.80;
            request.set_params(params);
            ui::clearUpperVectorState();
            const auto start = Clock::now();
            (void)ui::runSamplingJob(ui::SamplingJob{window.session().logits(), window.session().labels(), request,
                                                     window.activePipelineView()->topN(), window.activePipelineView()->plotModes(), 0});
            return msBetween(start, Clock::now());
        };
        std::vector<double> back_to_back, after_pause;
        for (int i = 0; i < 26; ++i) {
            const double ms = temperature_job(i);
            if (i >= 2) back_to_back.push_back(ms);
        }
        for (int i = 0; i < 24; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
            after_pause.push_back(temperature_job(i));
        }
        std::printf("  a temperature key's worker job: median %.1f ms back to back, %.1f ms each after 30 ms idle\n",
                    median(back_to_back), median(after_pause));
    }

    // Where onTrace's CPU goes, part by part, on this thread and without events:
    // two requests that differ (top-p 0.90 and 0.89) alternate, so no view skips
    // its work as unchanged. (The worker's parts come with each key's trace.)
    {
        const int rounds = 10;
        std::vector<double> pipeline_ms, table_ms, statistics_ms, result_ms;
        std::shared_ptr<const ui::TraceView> views[2];
        // The window's request with one parameter set to each of two values, traced as the worker traces it.
        const auto make_views = [&window, &views](double SamplingParams::*field, double first, double second) {
            for (int i = 0; i < 2; ++i) {
                Request request = window.session().request();
                SamplingParams params = request.params();
                params.*field = i % 2 ? second : first;
                request.set_params(params);
                views[i] = ui::runSamplingJob(ui::SamplingJob{window.session().logits(), window.session().labels(), request,
                                                               window.activePipelineView()->topN(), window.activePipelineView()->plotModes(),
                                                               window.worker().latestGeneration()})
                               .view;
            }
        };
        make_views(&SamplingParams::top_p, 0.90, 0.89);
        for (int i = 0; i < 2 * rounds; ++i) {
            const auto& view = views[i % 2];
            double t = ui::threadCpuMs();
            window.activePipelineView()->showView(view, -1);
            double next = ui::threadCpuMs();
            pipeline_ms.push_back((next - t));
            t = next;
            window.tokenTable()->setView(view);
            next = ui::threadCpuMs();
            table_ms.push_back((next - t));
            t = next;
            window.statisticsPanel()->showView(view);
            next = ui::threadCpuMs();
            statistics_ms.push_back((next - t));
            t = next;
            window.resultBar()->showView(view);
            result_ms.push_back((ui::threadCpuMs() - t));
            window.repaint();
        }
        // A temperature change redraws every stage after it: the pipeline view's heaviest common case.
        std::vector<double> every_stage_ms;
        make_views(&SamplingParams::temperature, 0.80, 0.81);
        for (int i = 0; i < 2 * rounds; ++i) {
            const double t = ui::threadCpuMs();
            window.activePipelineView()->showView(views[i % 2], -1);
            every_stage_ms.push_back(ui::threadCpuMs() - t);
            window.repaint();
        }
        std::printf("parts, CPU time (median of %d, GUI thread, no events):\n", 2 * rounds);
        std::printf("  onTrace: PipelineView::showView %.1f ms, TokenTablePanel::setView %.1f ms, "
                    "StatisticsPanel::showView %.1f ms, ResultBar::showView %.1f ms\n", median(pipeline_ms), median(table_ms),
                    median(statistics_ms), median(result_ms));
        std::printf("  PipelineView::showView when every stage changes (temperature 0.80 <-> 0.81): %.2f ms\n",
                    median(every_stage_ms));
        // The window's own state again.
        if (generate_mode) {
            generate->showNextStep();
        } else {
            window.loadExample(ui::realisticExample());
        }
        window.waitUntilDrawn();
        window.repaint();
    }

    // Per-key latency: several sliders, each moved away from its default (so its stage stays on) and back.
    const int per_direction = argc > 1 ? std::max(1, std::atoi(argv[1])) : 15;
    const char* keys[] = {"top_p", "temperature", "min_p", "top_k", "repetition_penalty", "presence_penalty", "frequency_penalty"};
    std::vector<Sample> samples;
    watcher.profile_paint_ = true;
    int lost = 0, fewer_stages = 0, focus_failures = 0;
    std::string lost_detail, unchanged_detail;
    for (const char* key : keys) {
        auto* slider = window.findChild<QSlider*>(QStringLiteral("slider_%1").arg(QLatin1String(key)));
        const auto info = param_from_key(key);
        if (!slider || !info) continue;
        slider->setFocus(Qt::OtherFocusReason);
        QCoreApplication::processEvents();
        if (QApplication::focusWidget() != slider || !window.windowHandle()->isActive()) ++focus_failures;
        const double value = param_value(window.session().params(), *info);
        const bool up_first = value > param_info(*info).default_value;
        for (int direction = 0; direction < 2; ++direction) {
            const Key sym = (direction == 0) == up_first ? Key::Right : Key::Left;
            for (int i = 0; i < per_direction; ++i) {
                watcher.reset(window.worker().latestGeneration());
                const int before = slider->value();
                const auto sent = keyboard.tap(sym);
                const bool quiet = watcher.waitUntilQuiet(30.0, 3000.0);
                if (!quiet || slider->value() == before) {
                    ++lost;
                    lost_detail += std::string(" ") + key + (slider->value() == before ? ":unmoved@" : ":no-trace@") +
                                   std::to_string(before) + ":keys" + std::to_string(watcher.keys_) + ":shown" +
                                   std::to_string(watcher.displays_) + ":paints" + std::to_string(watcher.paints_) + "/" +
                                   std::to_string(watcher.paints_after_display_);
                    window.waitUntilDrawn();
                    continue;
                }
                const auto& view = *window.currentView();
                int now_active = 0;
                for (const auto& stage : view.trace->stages) now_active += stage.active ? 1 : 0;
                if (now_active < active) ++fewer_stages;
                Sample s;
                s.slider = key;
                s.total = msBetween(sent, watcher.doneAt());
                s.delivery = msBetween(sent, watcher.key_arrived_);
                s.to_display = msBetween(sent, watcher.displayed_at_);
                s.worker = view.compute_ms;
                s.worker_cpu = view.compute_cpu_ms;
                s.worker_step = view.parts.step_ms;
                s.worker_share = view.parts.share_ms;
                s.worker_rank = view.parts.rank_ms;
                s.worker_display = view.parts.display_ms;
                s.reused_stages = static_cast<double>(view.parts.reused_stages);
                s.on_trace = window.lastDisplayMs();
                s.on_trace_cpu = window.lastDisplayCpuMs();
                s.handoff = s.to_display - s.on_trace - s.worker - s.delivery;
                s.paint = watcher.paint_ms_;
                s.paint_cpu = watcher.paint_cpu_ms_;
                s.paint_wait = msBetween(watcher.displayed_at_, watcher.doneAt()) - s.paint;
                s.repaints = watcher.paints_after_display_;
                if (s.repaints == 0) unchanged_detail += std::string(" ") + key + "@" + std::to_string(before);
                samples.push_back(s);
            }
        }
    }
    const auto column = [&samples](double Sample::*field) {
        std::vector<double> values;
        for (const auto& s : samples) values.push_back(s.*field);
        return values;
    };
    const std::vector<double> totals = column(&Sample::total);
    std::printf("key press -> completed repaint: %zu keys over %zu sliders, each alone (%d lost, %d left a stage off, %d focus failures)\n",
                samples.size(), std::size(keys), lost, fewer_stages, focus_failures);
    if (!lost_detail.empty()) std::printf("  lost:%s\n", lost_detail.c_str());
    printDistribution("total (sent -> repaint done)", totals);
    std::printf("  under 16 ms: %.1f %%   under 33 ms: %.1f %%   median / engine step: %.1f\n", shareBelow(totals, 16.0),
                shareBelow(totals, 33.0), median(totals) / yardstick);
    std::printf("  median by slider, ms:");
    for (const char* key : keys) {
        std::vector<double> mine, work, step, share, rank, display, redraw;
        for (const auto& s : samples) {
            if (s.slider == key) {
                mine.push_back(s.total);
                work.push_back(s.worker);
                step.push_back(s.worker_step);
                share.push_back(s.worker_share);
                rank.push_back(s.worker_rank);
                display.push_back(s.worker_display);
                redraw.push_back(s.on_trace);
            }
        }
        if (!mine.empty()) {
            std::printf("\n    %-20s %5.1f  (worker %4.1f: step %4.1f, sharing %4.1f, ranking %4.1f, plot data %4.1f; onTrace %4.1f)",
                        key, median(mine), median(work), median(step), median(share), median(rank), median(display), median(redraw));
        }
    }
    std::printf("\n");
    std::printf("where the time goes (each row its own distribution):\n");
    printDistribution("X server + Qt delivery of the key", column(&Sample::delivery));
    printDistribution("queued submit, thread start, result", column(&Sample::handoff));
    printDistribution("worker: engine + display data", column(&Sample::worker));
    printDistribution("worker CPU time (its own thread)", column(&Sample::worker_cpu));
    printDistribution("  engine step", column(&Sample::worker_step));
    printDistribution("  arrays shared with last trace", column(&Sample::worker_share));
    printDistribution("  ranking | every stage's q", column(&Sample::worker_rank));
    printDistribution("  plot data, statistics (2 cores)", column(&Sample::worker_display));
    printDistribution("  stages that kept their data", column(&Sample::reused_stages));
    printDistribution("GUI: MainWindow::onTrace", column(&Sample::on_trace));
    printDistribution("GUI: onTrace CPU time", column(&Sample::on_trace_cpu));
    printDistribution("GUI: waiting for the repaint", column(&Sample::paint_wait));
    printDistribution("GUI: repaint + flush", column(&Sample::paint));
    printDistribution("GUI: repaint CPU time", column(&Sample::paint_cpu));
    std::vector<double> repaints;
    for (const auto& s : samples) repaints.push_back(s.repaints);
    std::sort(repaints.begin(), repaints.end());
    std::printf("  repaints per trace: median %.0f, max %.0f; %zu traces left nothing to repaint after traceDisplayed (done then)\n",
                percentile(repaints, 50), repaints.empty() ? 0.0 : repaints.back(),
                static_cast<std::size_t>(std::count(repaints.begin(), repaints.end(), 0.0)));
    if (!unchanged_detail.empty()) std::printf("  nothing to repaint after it (slider@position before the key):%s\n", unchanged_detail.c_str());

    watcher.profile_paint_ = false;
    std::vector<std::pair<QString, Watcher::PaintCost>> costs(watcher.paint_by_class_.begin(), watcher.paint_by_class_.end());
    std::sort(costs.begin(), costs.end(), [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
    std::printf("  paint events by widget class, CPU time per key (mean over the keys above):\n   ");
    const double key_count = std::max<double>(1.0, static_cast<double>(samples.size()));
    for (std::size_t i = 0; i < std::min<std::size_t>(costs.size(), 8); ++i) {
        std::printf(" %s %.2f ms (%.1fx)%s", qPrintable(costs[i].first), costs[i].second.ms / key_count,
                    costs[i].second.count / key_count, i + 1 < std::min<std::size_t>(costs.size(), 8) ? ";" : "\n");
    }

    // A drag: 50 keys on top-p, none waiting for the window. First back to back
    // (they arrive within a few ms, faster than any hand), then one every 8 ms
    // from a thread of their own (125 a second, faster than a 60 Hz display).
    auto* top_p = window.findChild<QSlider*>(QStringLiteral("slider_top_p"));
    const auto drag = [&](Key key, int interval_ms) {
        top_p->setFocus(Qt::OtherFocusReason);
        QCoreApplication::processEvents();
        const int drag_keys = 50;
        const int start_value = top_p->value();
        const int target = start_value + (key == Key::Right ? drag_keys : -drag_keys);
        const auto dropped_before = window.worker().droppedCount();
        watcher.reset(window.worker().latestGeneration());
        Clock::time_point first_sent, last_sent;
        std::thread typist;
        if (interval_ms == 0) {
            for (int i = 0; i < drag_keys; ++i) {
                last_sent = keyboard.tap(key);
                if (i == 0) first_sent = last_sent;
            }
        } else {
            typist = std::thread([&, key, interval_ms] {
                bench::XKeyboard own;  // an X connection for this thread alone
                for (int i = 0; i < drag_keys; ++i) {
                    last_sent = own.tap(key);
                    if (i == 0) first_sent = last_sent;
                    std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
                }
            });
        }
        // Until every key has arrived and the last one's trace is painted.
        const bool complete = pumpUntil(
            [&] {
                return top_p->value() == target && window.isDrawn() && watcher.displayed_ &&
                       msBetween(watcher.doneAt(), Clock::now()) >= 100.0;
            },
            20000.0);
        if (typist.joinable()) typist.join();
        std::printf("drag, %s: %d top-p keys sent in %.1f ms; %d arrived, slider moved %d steps; %s\n",
                    interval_ms ? "one key every 8 ms" : "back to back", drag_keys, msBetween(first_sent, last_sent), watcher.keys_,
                    std::abs(top_p->value() - start_value), complete ? "complete" : "NOT complete within 20 s");
        std::printf("  traces drawn %d, stale requests skipped %llu, repaints %d; first key sent -> last repaint done %.1f ms;\n"
                    "  last key sent -> last repaint done %.1f ms (%.2f x the per-key median)\n",
                    watcher.displays_, static_cast<unsigned long long>(window.worker().droppedCount() - dropped_before),
                    watcher.paints_, msBetween(first_sent, watcher.doneAt()), msBetween(last_sent, watcher.doneAt()),
                    msBetween(last_sent, watcher.doneAt()) / median(totals));
    };
    if (top_p) {
        drag(Key::Left, 0);
        drag(Key::Right, 8);
    }
    std::printf("bench_gui_input: load average %.2f before, %.2f after\n", load_before, loadAverage());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Xvfb server;
    std::string note;
    if (qEnvironmentVariableIsEmpty("DISPLAY")) {
        server = startXvfb();
        if (server.pid <= 0) {
            std::fprintf(stderr, "bench_gui_input: DISPLAY is unset and Xvfb could not be started (is the xvfb package installed?)\n");
            return 2;
        }
        qputenv("DISPLAY", QByteArray::fromStdString(server.display));
        note = "own Xvfb on " + server.display;
    } else {
        note = "DISPLAY=" + qgetenv("DISPLAY").toStdString();
    }
    // Key events from the X server reach only a window on it.
    if (!qgetenv("QT_QPA_PLATFORM").startsWith("xcb")) qputenv("QT_QPA_PLATFORM", "xcb");
    const int rc = run(argc, argv, note);  // the window and its X connection are gone before the server stops
    stopXvfb(server);
    return rc;
}
