// The CPU reference (engine/pipelines/sampler.h) run over a batch, row by row: what the
// batch engine is compared against, and the `reference` backend of the CLI.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/trace.h"
#include "kernels/batch_engine.h"

namespace samplescope::batch {

// The row widened to f64, as the reference reads it.
std::vector<double> widen_row(const BatchInput& input, std::size_t row);

// The reference's full trace of one row. Throws InputError naming the row.
SampleTrace trace_reference_row(const BatchInput& input, std::size_t row);

// Every row through sample_step(), `draws` uniforms per row from the row's
// stream (the kept set is the same for each). Throws InputError naming the row.
BatchOutput run_reference(const BatchInput& input, std::int32_t draws = 1);

}  // namespace samplescope::batch
