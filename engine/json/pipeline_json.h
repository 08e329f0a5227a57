// Pipelines, their traces, diffs and empirical samples as JSON. A pipeline's
// trace is the contract's trace JSON (engine/json/trace_json.h) with the stages in
// the pipeline's own order, each naming its rule and flags, plus the pipeline.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/stats/empirical_sampling.h"
#include "engine/stages/pipeline.h"
#include "engine/pipelines/pipeline_diff.h"
#include "engine/json/trace_json.h"

namespace samplescope {

nlohmann::ordered_json pipeline_to_json(const Pipeline& pipeline);
nlohmann::ordered_json pipeline_trace_to_json(const PipelineTrace& trace, const TraceJsonOptions& options = {});
// The object pipeline_trace_to_json writes for trace.trace.stages[index]: the
// contract's stage with its rule, flags and note.
nlohmann::ordered_json pipeline_stage_to_json(const PipelineTrace& trace, std::size_t index,
                                              const TraceJsonOptions& options = {});
nlohmann::ordered_json pipeline_diff_to_json(const PipelineDiff& diff, const std::vector<std::string>& labels = {});
nlohmann::ordered_json empirical_to_json(const EmpiricalResult& result, const std::vector<std::string>& labels = {});

}  // namespace samplescope
