// The draw, the last stage of every pipeline: one uniform from the contract's
// stream and the inverse CDF, done by the runner (engine/core/inverse_cdf.h):
// no parameters, no rules, no unit.
#include "engine/core/stage.h"

namespace samplescope {

extern const StageDescriptor stage_draw_descriptor;
constinit const StageDescriptor stage_draw_descriptor{
    .stage = Stage::Draw,
    .name = "draw",
    .title = "Draw",
    .summary = "One uniform u; inverse CDF in ascending id order.",
    .contract = true,
};

}  // namespace samplescope
