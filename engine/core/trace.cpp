#include "engine/core/trace.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace samplescope {

double StageTrace::prob_of(std::int32_t id) const {
    if (!kept) return 0.0;
    const auto it = std::lower_bound(kept->begin(), kept->end(), id);
    if (it == kept->end() || *it != id) return 0.0;
    return (*probs)[static_cast<std::size_t>(it - kept->begin())];
}

bool StageTrace::keeps(std::int32_t id) const { return kept && std::binary_search(kept->begin(), kept->end(), id); }

const StageTrace& SampleTrace::stage(Stage s) const {
    if (const auto* found = find_stage(s)) return *found;
    throw std::out_of_range("this trace has no stage \"" + std::string(stage_info(s).name) + "\"");
}

}  // namespace samplescope
