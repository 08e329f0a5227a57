// The pipeline flags shared by `trace`, `diff` and `histogram`:
// --pipeline NAME, --stages LIST (for custom), --penalty-last-n N, and
// --engine-defaults (start from the stack's own parameter defaults).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "app/request_options.h"
#include "engine/stages/pipeline.h"
#include "engine/json/trace_json.h"

namespace samplescope::cli {

struct PipelineOptions {
    std::string name;    // empty: spec
    std::string stages;  // for custom
    std::string penalty_last_n;  // as typed; empty: the pipeline's own (64)
};

// `suffix` distinguishes two pipelines of one command: "-a" gives --pipeline-a, --stages-a.
void add_pipeline_options(CLI::App& app, PipelineOptions& options, const std::string& suffix = "");

// Throws InputError for an unknown name, a bad stage list or a negative window.
Pipeline resolve_pipeline(const PipelineOptions& options);

// Every parameter flag the user left out takes the pipeline's own default
// (engine/pipelines/pipeline_presets.h engine_defaults); custom pipelines have none.
void apply_engine_defaults(const RequestOptions& given, const Pipeline& pipeline, ResolvedRequest& request);

}  // namespace samplescope::cli
