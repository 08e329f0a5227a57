// Widening, the first stage of every pipeline: the runner widens each logit
// to f64 and records it (engine/pipelines/pipeline_runner.cpp); it has no
// parameters, no rules and no unit.
#include "engine/core/stage.h"

namespace samplescope {

extern const StageDescriptor stage_widen_descriptor;
constinit const StageDescriptor stage_widen_descriptor{
    .stage = Stage::Widen,
    .name = "widen",
    .title = "Raw logits",
    .summary = "Each logit widened to f64; -inf ids can never be kept.",
    .contract = true,
};

}  // namespace samplescope
