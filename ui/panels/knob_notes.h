// Why a parameter cannot change anything in the state a trace shows: a short
// reason per contract parameter, or nothing. Read from the trace only (each
// stage's kept set, thresholds and q); no Qt, so it is tested on hand-made rows.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "engine/core/sampling_params.h"
#include "engine/core/trace.h"

namespace samplescope::ui {

struct KnobNotes {
    SamplingParams params;  // the parameters the trace ran with (its seed included)
    std::array<std::optional<std::string>, kParamCount> reasons;

    const std::optional<std::string>& reason(Param param) const { return reasons[static_cast<std::size_t>(param)]; }
};

// For the contract's trace: a reason for each knob that no value of its own
// could make matter now (T = 0 skips truncation; top-k = 1 leaves one token at
// any T; k at or above the candidates; top-p or min-p that keeps every token
// reaching it, or sees only one; a penalty that changed no logit; a row with
// one candidate). llama.cpp's extra parameters get none.
KnobNotes knob_notes(const SampleTrace& trace);

}  // namespace samplescope::ui
