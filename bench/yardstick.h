// The yardstick every benchmark here reports against, measured in the same
// run on the same row: one f64 exp pass over the row (the maximum, then sum
// exp(l - M) in ascending id order), the floor of any exact sampler, since the
// logprob needs that sum over every id. A ratio to it survives a machine whose
// speed drifts (a shared one) where milliseconds do not.
#pragma once

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace samplescope::bench {

// M, then sum exp(l - M) in ascending id order, in f64.
inline double exp_pass_once(const std::vector<double>& logits) {
    double m = -HUGE_VAL;
    for (const double l : logits) m = l > m ? l : m;
    double z = 0.0;
    for (const double l : logits) z += std::exp(l - m);
    return z;
}

inline double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Runs `body` as the benchmark and, between its iterations (outside the timed
// part), the yardstick on `row`; the counter "x_exp" is the body's CPU time
// over the yardstick's, both summed over the same stretch of the run.
template <class Body>
void with_yardstick(benchmark::State& state, const std::vector<double>& row, Body body) {
    double body_seconds = 0.0;
    double yardstick_seconds = 0.0;
    for (auto _ : state) {
        state.PauseTiming();
        const double t0 = thread_cpu_seconds();
        benchmark::DoNotOptimize(exp_pass_once(row));
        yardstick_seconds += thread_cpu_seconds() - t0;
        state.ResumeTiming();
        const double t1 = thread_cpu_seconds();
        body();
        body_seconds += thread_cpu_seconds() - t1;
    }
    if (yardstick_seconds > 0.0) state.counters["x_exp"] = body_seconds / yardstick_seconds;
}

// Prints every benchmark as usual and keeps its CPU time per iteration and
// its interleaved ratio to the yardstick, for the table printed after the run.
class RatioReporter : public benchmark::ConsoleReporter {
public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const auto& run : runs) {
            if (run.iterations == 0) continue;
            cpu_ms[run.benchmark_name()] = run.GetAdjustedCPUTime();
            const auto ratio = run.counters.find("x_exp");
            if (ratio != run.counters.end()) x_exp[run.benchmark_name()] = ratio->second.value;
        }
    }

    // One line per case: its CPU time and its ratio to the yardstick.
    void print_table() const {
        std::cout << "\n== ratio to one f64 exp pass over the same row (CPU time; the yardstick run between the\n"
                     "   case's own iterations, so both see the machine in the same state)\n";
        for (const auto& [name, ms] : cpu_ms) {
            const auto ratio = x_exp.find(name);
            if (ratio != x_exp.end()) std::printf("%-40s %8.3f ms  %6.2fx\n", name.c_str(), ms, ratio->second);
        }
    }

    double ratio(const std::string& name) const {
        const auto it = x_exp.find(name);
        return it == x_exp.end() ? 0.0 : it->second;
    }

    std::map<std::string, double> cpu_ms;
    std::map<std::string, double> x_exp;
};

}  // namespace samplescope::bench
