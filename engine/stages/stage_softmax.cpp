// The final softmax over the kept set, which the runner records after the last
// step (engine/pipelines/pipeline_runner.cpp): no parameters, no rules, no unit.
#include "engine/core/stage.h"

namespace samplescope {

extern const StageDescriptor stage_softmax_descriptor;
constinit const StageDescriptor stage_softmax_descriptor{
    .stage = Stage::Softmax,
    .name = "softmax",
    .title = "Final distribution",
    .summary = "Softmax over the kept set.",
    .contract = true,
};

}  // namespace samplescope
