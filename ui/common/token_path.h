// One token followed through a trace: its number at each stage that changed
// it (logit, penalties, temperature with its q), whether each truncation kept
// it and at which rank, its final q and whether it was drawn. What the window
// shows under the answer line for the selected token. Qt-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/trace.h"

namespace samplescope::ui {

struct TokenPathStep {
    Stage stage = Stage::Widen;
    std::string text;   // "logit 9.73", "/ T 0.8 = 12.16 (q 0.273)", "top-k: kept, rank 3 of 40"
    bool dropped = false;  // this stage dropped the token (the path ends here)
};

// The steps in the trace's own order; stages that were off or did not touch the
// token are left out. Empty for an id outside [0, V).
std::vector<TokenPathStep> tokenPath(const SampleTrace& trace, std::int32_t id);

// The steps joined with " -> ".
std::string tokenPathText(const std::vector<TokenPathStep>& steps);

}  // namespace samplescope::ui
