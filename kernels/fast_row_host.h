// Fast mode on the host twin: one row at a time, the same selection passes as
// the CUDA kernel (kernels/fast_select.h), in plain loops.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/history_table.h"
#include "kernels/row_params.h"

namespace samplescope::batch {

class FastRowSampler {
public:
    // `table` holds the row's history with penalised logits filled in.
    void sample(const float* row, std::int64_t vocab, const RowParams& p, const HistoryTable& table,
                std::uint8_t* mask, std::int32_t draws, RowResult* results);

private:
    struct Selection {
        std::uint64_t threshold;   // kept: rank key >= threshold
        bool materialised;         // keys_ holds exactly the kept set, ranked
    };
    Selection select(std::uint64_t lower, bool by_mass, double target);
    // Top-p over a kept set already held in keys_, in rank order.
    Selection walk_materialised(double target);
    float weight(std::uint64_t key, bool by_mass) const;
    void collect(std::uint64_t lo, std::uint64_t hi);

    const float* row_ = nullptr;
    std::int64_t vocab_ = 0;
    float max_logit_ = 0.0f;
    float inverse_temperature_ = 1.0f;
    std::vector<float> penalised_;
    std::vector<std::uint64_t> keys_;
    std::vector<std::uint32_t> counts_;
    std::vector<double> masses_;
};

}  // namespace samplescope::batch
