#include "ui/verify/verify_plot_data.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace samplescope {

VerifyPlotData verifyPlotData(const PipelineTrace& exact, const std::vector<std::int64_t>& samples) {
    const IdList& kept = verified_ids(exact);
    const Values& q = verified_probs(exact);
    const std::vector<IdCount> counts = count_samples(samples);
    std::map<std::int64_t, std::uint64_t> count_of;
    for (const IdCount& c : counts) count_of[c.id] = c.count;
    const double n = samples.empty() ? 1.0 : static_cast<double>(samples.size());

    std::vector<bool> in_tail(q.size(), false);
    for (const std::size_t i : tail_region(q)) in_tail[i] = true;
    // Descending q, ties by id: the reverse of the ascending order's positions
    // would break ties by descending id, so sort afresh.
    std::vector<std::size_t> order(q.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&q](std::size_t a, std::size_t b) { return q[a] > q[b]; });

    VerifyPlotData data;
    data.kept = kept.size();
    data.tail_first = kept.size();
    for (std::size_t r = 0; r < order.size(); ++r) {
        const std::size_t i = order[r];
        const auto found = count_of.find(kept[i]);
        const bool positive = q[i] > 0.0;
        data.ids.push_back(kept[i]);
        data.q.push_back(q[i]);
        data.observed.push_back(found == count_of.end() ? 0.0 : static_cast<double>(found->second) / n);
        data.violation.push_back(!positive && found != count_of.end());
        data.tail.push_back(in_tail[i]);
        if (in_tail[i]) data.tail_first = std::min(data.tail_first, r);
        if (found != count_of.end()) count_of.erase(found);
    }
    for (const auto& [id, count] : count_of) {
        data.ids.push_back(id);
        data.q.push_back(0.0);
        data.observed.push_back(static_cast<double>(count) / n);
        data.violation.push_back(true);
        data.tail.push_back(false);
    }
    return data;
}

}  // namespace samplescope
