// A stage unit: the code of one step of a pipeline. Each stage_<name>.cpp
// holds one stage: its descriptor (engine/core/stage.h: name, title, summary,
// parameters, gate, rules with their sources, plot mark) and the unit the
// descriptor points to, which changes the logits or the kept set and reports
// its thresholds. The build lists every stage_*.cpp (engine/CMakeLists.txt),
// so adding a stage adds no line anywhere else here. The runner
// (pipeline_runner.cpp) walks a pipeline's steps and calls each step's unit.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/base/input_error.h"  // format_number, which the descriptors' texts use
#include "engine/core/sampling_params.h"
#include "engine/core/stage.h"
#include "engine/stages/pipeline.h"

namespace samplescope {

class RowState;

struct StageUnit {
    // The parameters the step reads, its own and others' (min_keep): one left
    // away from its default by a pipeline whose steps never read it is
    // reported as ignored.
    std::span<const Param> reads;
    // Whether an enabled step of this unit reads its parameters at all in this
    // pipeline (a last-N penalty with a window of 0 reads nothing).
    bool (*listens)(const Pipeline& pipeline, const PipelineStep& step);
    // Runs an enabled step on the row: returns whether it was active (its gate
    // open), changes the row through RowState, and writes what it decided into
    // `report` and its thresholds into `shown` (the stage's trace entry).
    bool (*run)(RowState& row, const PipelineStep& step, StepReport& report, StageTrace& shown);
    // Where only some of the unit's rules read a parameter of `reads`
    // (min_keep is llama.cpp's alone): whether `rule` reads `param`. Null: every rule reads all of them.
    bool (*rule_reads)(Rule rule, Param param) = nullptr;
};

// `listens` for a unit whose enabled step always reads its parameters.
inline bool listens_always(const Pipeline&, const PipelineStep&) { return true; }

// The unit of a step stage (its descriptor's); throws std::logic_error for
// Widen, Softmax and Draw, which the runner does itself.
const StageUnit& stage_unit(Stage stage);

// The words an off stage's plot shows for a stage its parameters switch off:
// "Off: top_p = 1 (off at >= 1).\nEvery candidate passes." (`settings` such as
// "top_p = 1", `off_at` such as "off at >= 1"); a truncation says every
// candidate passes, any other stage that the distribution passes unchanged.
std::string off_because(const std::string& settings, std::string_view off_at, bool truncates);

}  // namespace samplescope
