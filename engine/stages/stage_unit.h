// A stage unit: everything one step of a pipeline is, in one place. Its stage
// (name, title and summary in engine/core/stage.h), the parameters it reads
// (engine/core/sampling_params.h), its rule variants (kRules in pipeline.h),
// its gate, and the code that changes the logits or the kept set and reports
// its thresholds. The runner (pipeline_runner.cpp) walks a pipeline's steps
// and calls each step's unit; stage_units.cpp is the only place that maps a
// stage to its unit, and every stage_*.cpp file holds one unit.
#pragma once

#include <span>

#include "engine/core/sampling_params.h"
#include "engine/core/stage.h"
#include "engine/stages/pipeline.h"

namespace samplescope {

class RowState;

struct StageUnit {
    Stage stage;
    // The parameters the step reads: one left away from its default by a
    // pipeline whose steps never read it is reported as ignored.
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

// The unit of a step stage; throws std::logic_error for Widen, Softmax and Draw.
const StageUnit& stage_unit(Stage stage);
// Every unit, in the contract's stage order.
std::span<const StageUnit> stage_units();

// The units, one per file (stage_*.cpp).
extern const StageUnit kLogitBiasUnit;
extern const StageUnit kRepetitionPenaltyUnit;
extern const StageUnit kPresenceFrequencyUnit;
extern const StageUnit kGreedyUnit;
extern const StageUnit kTemperatureUnit;
extern const StageUnit kTopKUnit;
extern const StageUnit kTopPUnit;
extern const StageUnit kMinPUnit;
extern const StageUnit kTypicalPUnit;
extern const StageUnit kTopNSigmaUnit;
extern const StageUnit kDryUnit;
extern const StageUnit kXtcUnit;
extern const StageUnit kMirostatUnit;

}  // namespace samplescope
