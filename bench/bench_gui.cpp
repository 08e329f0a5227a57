// Drives the real window offscreen at V = 128,256 with every stage active and
// times each slider change until the window is fully drawn: the engine step off
// the GUI thread, every plot, the table, the statistics, then a synchronous
// repaint of the whole window. Prints median and worst; never fails on timing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <QApplication>
#include <QThread>

#include "engine/core/sampling_params.h"
#include "ui/common/examples.h"
#include "ui/window/main_window.h"

using namespace samplescope;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

struct Summary {
    double median = 0.0;
    double worst = 0.0;
};

Summary summarise(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return {values[values.size() / 2], values.back()};
}

// Slider positions that keep the parameter's stage switched on.
std::vector<int> sweep_positions(const ui::ParameterControl& control, int count) {
    const ParamInfo& info = control.info();
    std::vector<int> positions;
    const int top = control.slider()->maximum();
    for (int i = 0; i < count; ++i) {
        const int position = static_cast<int>(top * (0.1 + 0.85 * i / (count - 1)));
        const double value = info.slider_min + position * (info.integer() ? 1.0 : 0.01);
        if (value == info.default_value || (info.param == Param::Temperature && value == 0.0)) continue;
        positions.push_back(position);
    }
    return positions;
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    ui::MainWindow window(ui::MainWindowOptions{false});
    window.resize(1600, 1000);
    window.show();
    window.loadExample(ui::realisticExample());
    window.waitUntilDrawn();
    const auto& trace = *window.currentView()->trace;
    int active = 0;
    for (const auto& stage : trace.stages) active += stage.active ? 1 : 0;
    double load = 0.0;
    if (FILE* loadavg = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(loadavg, "%lf", &load) != 1) load = 0.0;
        std::fclose(loadavg);
    }
    std::printf("bench_gui: load average %.2f on %d CPUs\n", load, QThread::idealThreadCount());
    std::printf("bench_gui: V = %zu, %d of %zu stages active, top N = %zu\n", trace.vocab_size, active, trace.stages.size(),
                window.pipelineView()->topN());

    std::vector<double> drawn, painted, worker, display, cpu;
    for (const auto& info : kParams) {
        auto* control = window.parameterPanel()->control(info.param);
        const int original = control->slider()->value();
        for (const int position : sweep_positions(*control, 8)) {
            const auto start = Clock::now();
            control->slider()->setValue(position);
            window.waitUntilDrawn();
            drawn.push_back(ms_since(start));
            window.repaint();  // paint every widget now, not at the next event-loop turn
            painted.push_back(ms_since(start));
            worker.push_back(window.currentView()->compute_ms);
            display.push_back(window.lastDisplayMs());
            cpu.push_back(window.currentView()->compute_cpu_ms + window.lastDisplayCpuMs());
        }
        control->slider()->setValue(original);
        window.waitUntilDrawn();
    }
    const Summary d = summarise(drawn), p = summarise(painted), w = summarise(worker), g = summarise(display), c = summarise(cpu);
    std::printf("slider sweep: %zu changes over %zu sliders\n", drawn.size(), kParams.size());
    std::printf("  engine step + display data (worker thread): median %.1f ms, worst %.1f ms\n", w.median, w.worst);
    std::printf("  updating plots, table, statistics (GUI thread): median %.1f ms, worst %.1f ms\n", g.median, g.worst);
    std::printf("  CPU time of both (load-independent):           median %.1f ms, worst %.1f ms\n", c.median, c.worst);
    std::printf("  change -> every view updated:              median %.1f ms, worst %.1f ms\n", d.median, d.worst);
    std::printf("  change -> window repainted (full draw):     median %.1f ms, worst %.1f ms\n", p.median, p.worst);

    // A drag: many slider events back to back. The newest request wins; stale results are dropped.
    auto* top_p = window.parameterPanel()->control(Param::TopP)->slider();
    const auto dropped_before = window.worker().droppedCount();
    const auto start = Clock::now();
    for (int position = 50; position <= 98; ++position) {
        top_p->setValue(position);
        QCoreApplication::processEvents();
    }
    window.waitUntilDrawn();
    window.repaint();
    std::printf("drag: 49 top-p events in a burst, last one drawn after %.1f ms; %llu stale requests skipped\n",
                ms_since(start), static_cast<unsigned long long>(window.worker().droppedCount() - dropped_before));
    return 0;
}
