#include "ui/session/display_builder.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <tuple>

#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include "ui/common/cpu_state.h"

namespace samplescope::ui {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

// The second core: one thread kept for the process's lifetime, shared by every builder.
QThreadPool& helperPool() {
    static QThreadPool* pool = [] {
        auto* made = new QThreadPool;  // never destroyed: a worker may still use it while statics are torn down
        made->setMaxThreadCount(1);
        made->setExpiryTimeout(-1);
        return made;
    }();
    return *pool;
}

// Runs `work` on the helper thread while the caller runs `own`; returns when
// both are done and rethrows the first exception either threw.
template <class Own, class Work>
void alongside(Own&& own, Work&& work) {
    std::exception_ptr helper_error;
    QFuture<void> helper = QtConcurrent::run(&helperPool(), [&work, &helper_error] {
        clearUpperVectorState();  // the helper thread pays the AVX transition penalty otherwise (cpu_state.h)
        try {
            work();
        } catch (...) {
            helper_error = std::current_exception();
        }
    });
    std::exception_ptr own_error;
    try {
        own();
    } catch (...) {
        own_error = std::current_exception();
    }
    helper.waitForFinished();  // runs `work` here if the helper had not started it
    if (own_error) std::rethrow_exception(own_error);
    if (helper_error) std::rethrow_exception(helper_error);
}

// The same values, bit for bit (a pointer seen again is the same array: the builder holds it).
template <class T>
bool sameContent(const std::shared_ptr<const std::vector<T>>& a, const std::shared_ptr<const std::vector<T>>& b) {
    if (a == b) return true;
    if (!a || !b || a->size() != b->size()) return false;
    return a->empty() || std::memcmp(a->data(), b->data(), a->size() * sizeof(T)) == 0;
}

}  // namespace

std::shared_ptr<const SampleTrace> DisplayBuilder::share(SampleTrace trace) {
    if (previous_ && previous_->vocab_size == trace.vocab_size) {
        // Stages share arrays (every stage before truncation the same kept set): each new array is
        // compared once, and replaced wherever it appears.
        std::vector<std::pair<const void*, const void*>> became;  // a new array -> the array that stands for it
        const auto share_array = [&became](auto& now, const auto& earlier) {
            if (!now || !earlier || now == earlier) return;
            for (const auto& [array, by] : became) {
                if (array != now.get()) continue;
                if (by == earlier.get()) now = earlier;
                return;
            }
            const bool equal = sameContent(now, earlier);
            became.emplace_back(now.get(), equal ? static_cast<const void*>(earlier.get()) : now.get());
            if (equal) now = earlier;
        };
        for (auto& stage : trace.stages) {
            const StageTrace* earlier = previous_->find_stage(stage.stage);
            if (!earlier) continue;
            share_array(stage.logits, earlier->logits);
            share_array(stage.kept, earlier->kept);
            if (stage.logits != earlier->logits || stage.kept != earlier->kept) continue;
            if (stage.probs.computed_from_logits() && earlier->probs.computed_from_logits()) {
                stage.probs = earlier->probs;  // computed from the same two arrays: the same q
            } else if (!stage.probs.computed_from_logits() && !earlier->probs.computed_from_logits()) {
                std::shared_ptr<const Values> held = stage.probs.get();
                share_array(held, earlier->probs.get());
                if (held == earlier->probs.get()) stage.probs = StageProbs(held);
            }
        }
    }
    return std::make_shared<const SampleTrace>(std::move(trace));
}

void DisplayBuilder::build(TraceView& view, const std::vector<std::optional<PlotMode>>& plot_modes) {
    const SampleTrace& trace = *view.trace;
    struct Job {
        Stage stage = Stage::Widen;
        bool curve = false;
        bool reuse = false;     // the inputs' logits and kept sets equal those of the data made last
        bool fallback = false;  // ... but not their q: made again after the parallel part
        StageRanking ranking;
        StagePlotData data;
    };
    std::vector<Job> jobs;
    // The main view shows the contract's stages (its trace holds no other).
    for (const auto& info : kStages) {
        if (!info.contract) continue;
        Job job;
        job.stage = info.stage;
        const StageTrace& before = trace.stage(inputStage(trace, info.stage));
        const auto index = static_cast<std::size_t>(info.stage);
        const std::optional<PlotMode> chosen = index < plot_modes.size() ? plot_modes[index] : std::nullopt;
        job.curve = info.stage != Stage::Draw &&
                    (chosen ? *chosen == PlotMode::Vocabulary : vocabularyByDefault(info.stage, before.kept->size(), view.top_n));
        jobs.push_back(std::move(job));
    }
    // The tasks of the second part: the stages (curves first, the largest), then the statistics.
    std::vector<std::size_t> order(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return jobs[a].curve > jobs[b].curve; });
    std::atomic<std::size_t> next_task{0};
    const auto make_data = [&] {
        for (std::size_t task = next_task.fetch_add(1); task <= jobs.size(); task = next_task.fetch_add(1)) {
            if (task == jobs.size()) {
                // The statistics before truncation: kept while temperature's q is the same array
                // (an unchanged stage takes the previous trace's q).
                const auto& hot = trace.stage(Stage::Temperature).probs.get();
                if (hot != stats_probs_) {
                    stats_before_ = distribution_stats(*hot);
                    stats_probs_ = hot;
                }
                view.stats = makeTruncationStats(trace, stats_before_);
                continue;
            }
            Job& job = jobs[order[task]];
            const StageTrace& now = trace.stage(job.stage);
            const StageTrace& before = trace.stage(inputStage(trace, job.stage));
            if (job.reuse) {
                // Equal when the logits and kept sets are, unless the engine held values it computed another way.
                const auto& made = *made_[static_cast<std::size_t>(job.stage)];
                if (sameContent(made.before_probs, before.probs.get()) && sameContent(made.now_probs, now.probs.get())) {
                    job.data = made.data;
                    job.ranking.order = made.order;
                } else {
                    job.fallback = true;
                }
            } else {
                job.data = makeStagePlotData(trace, job.stage, view.top_n, job.ranking, job.curve);
            }
        }
    };

    // This thread ranks the candidates of the stages that changed while the helper makes every
    // stage's q (a trace leaves a row-sized q to its reader, and the views read them all; an
    // unchanged stage takes the previous trace's); then both make the plot data.
    const auto start = Clock::now();
    std::atomic<bool> ranked{false};
    // A curve reads its stage's whole rank order, a bar plot only the top N.
    const auto rank = [&](Job& job) {
        job.ranking = job.curve ? rankStage(trace, job.stage, orders_, true) : rankTop(trace, job.stage, view.top_n, orders_);
    };
    // A stage's q: the previous trace's when its inputs are equal, else computed (StageProbs locks:
    // a q both threads reach is computed once).
    const auto prepare_probs = [this](const StageTrace& stage) {
        if (stage.probs.ready()) return;
        for (const auto& [earlier_stage, earlier] : previous_probs_) {
            if (earlier_stage == stage.stage && stage.probs.adopt(earlier)) return;
        }
        (void)stage.probs.get();
    };
    // The stages share arrays (every stage before truncation the same kept set, top-k temperature's
    // logits): each pair of arrays is compared once.
    std::vector<std::tuple<const void*, const void*, bool>> compared;
    const auto same = [&compared](const auto& made_array, const auto& new_array) {
        for (const auto& [a, b, equal] : compared) {
            if (a == made_array.get() && b == new_array.get()) return equal;
        }
        const bool equal = sameContent(made_array, new_array);
        compared.emplace_back(made_array.get(), new_array.get(), equal);
        return equal;
    };
    alongside(
        [&] {
            try {
                for (auto& job : jobs) {
                    const StageTrace& now = trace.stage(job.stage);
                    const StageTrace& before = trace.stage(inputStage(trace, job.stage));
                    const auto& made = made_[static_cast<std::size_t>(job.stage)];
                    job.reuse = made && made->active == now.active && made->top_n == view.top_n && made->curve == job.curve &&
                                same(made->before_kept, before.kept) && same(made->now_kept, now.kept) &&
                                same(made->now_logits, now.logits);
                }
                // The curves' whole orders first (each derived from an order held, such as the same
                // stage's in the last trace), then the bars' top N, from those orders where a bar
                // stage shares their arrays.
                for (auto& job : jobs) {
                    if (!job.reuse && job.curve) rank(job);
                }
                for (auto& job : jobs) {
                    if (!job.reuse && !job.curve) rank(job);
                }
            } catch (...) {
                next_task = jobs.size() + 1;  // the helper makes nothing from a half-made ranking
                ranked = true;
                ranked.notify_all();
                throw;
            }
            view.parts.rank_ms = msSince(start);
            ranked = true;
            ranked.notify_all();
            // Then the q the helper has not reached, from the last stage back, so the two threads
            // meet in the middle instead of the plot data waiting on one thread's softmaxes.
            for (auto stage = trace.stages.rbegin(); stage != trace.stages.rend(); ++stage) prepare_probs(*stage);
            make_data();
        },
        [&] {
            for (const auto& stage : trace.stages) prepare_probs(stage);
            ranked.wait(false);
            make_data();
        });
    view.stages.clear();
    view.parts.reused_stages = 0;
    for (auto& job : jobs) {
        if (job.fallback) {
            job.reuse = false;
            rank(job);
            job.data = makeStagePlotData(trace, job.stage, view.top_n, job.ranking, job.curve);
        } else if (job.reuse) {
            ++view.parts.reused_stages;
            // The drawn token is this trace's own.
            if (job.curve) job.data.curve.chosen = chosenPoint(trace, job.stage, *job.ranking.order, job.data.curve);
        }
        const StageTrace& now = trace.stage(job.stage);
        const StageTrace& before = trace.stage(inputStage(trace, job.stage));
        made_[static_cast<std::size_t>(job.stage)] =
            Made{before.kept, now.kept, now.logits, before.probs.get(), now.probs.get(), now.active, view.top_n, job.curve,
                 job.ranking.order, job.data};
        view.stages.push_back(std::move(job.data));
    }
    previous_probs_.clear();
    for (const auto& stage : trace.stages) previous_probs_.emplace_back(stage.stage, stage.probs);
    previous_ = view.trace;
    view.parts.display_ms = msSince(start) - view.parts.rank_ms;
}

}  // namespace samplescope::ui
