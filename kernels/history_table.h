// A row's token history for the penalties, held in an open-addressing table
// sized by the history (twice the next power of two of its length), never by
// the vocabulary: vLLM's native path builds a [B, V] count tensor for this
// (262 MB per call at B = 256, V = 128k). One slot per distinct id: whether it
// is in the prompt or output (repetition penalty), how often it was generated
// (presence and frequency), and, once filled, its penalised logit.
#pragma once

#include <cstdint>

#include "engine/core/element_math.h"
#include "engine/base/portable.h"
#include "kernels/row_params.h"

namespace samplescope::batch {

inline constexpr std::int32_t kEmptySlot = -1;

struct HistoryTable {
    std::int32_t* ids = nullptr;            // kEmptySlot where unused
    std::uint32_t* in_context = nullptr;    // 1 when the id is in prompt or output
    std::uint32_t* output_count = nullptr;  // times generated
    double* penalised = nullptr;            // the penalised logit, after fill
    std::uint32_t capacity = 0;             // a power of two (0: no history)
};

SS_HD inline std::uint32_t history_capacity(std::uint64_t history_length) {
    if (history_length == 0) return 0;
    std::uint32_t capacity = 2;
    while (capacity < 2 * history_length) capacity <<= 1;
    return capacity;
}

SS_HD inline std::uint32_t history_slot(std::int32_t id, std::uint32_t capacity) {
    std::uint32_t h = static_cast<std::uint32_t>(id) * 0x9E3779B1u;
    h ^= h >> 15;
    return h & (capacity - 1);
}

// The slot holding id, or -1. The table is at most half full, so a miss stops
// at an empty slot after a short probe.
SS_HD inline std::int64_t history_find(const HistoryTable& table, std::int32_t id) {
    if (table.capacity == 0) return -1;
    std::uint32_t slot = history_slot(id, table.capacity);
    for (std::uint32_t probe = 0; probe < table.capacity; ++probe) {
        const std::int32_t held = table.ids[slot];
        if (held == id) return slot;
        if (held == kEmptySlot) return -1;
        slot = (slot + 1) & (table.capacity - 1);
    }
    return -1;
}

// Sequential insert (host twin, exact kernels); the CUDA fast kernel inserts
// with atomics into the same layout.
SS_HD inline std::uint32_t history_insert(HistoryTable& table, std::int32_t id) {
    std::uint32_t slot = history_slot(id, table.capacity);
    while (table.ids[slot] != kEmptySlot && table.ids[slot] != id) slot = (slot + 1) & (table.capacity - 1);
    if (table.ids[slot] == kEmptySlot) {
        table.ids[slot] = id;
        table.in_context[slot] = 0;
        table.output_count[slot] = 0;
    }
    return slot;
}

SS_HD inline void history_clear(HistoryTable& table) {
    for (std::uint32_t i = 0; i < table.capacity; ++i) table.ids[i] = kEmptySlot;
}

SS_HD inline void history_add(HistoryTable& table, const std::int32_t* prompt, std::int64_t prompt_length,
                              const std::int32_t* output, std::int64_t output_length) {
    for (std::int64_t i = 0; i < prompt_length; ++i) table.in_context[history_insert(table, prompt[i])] = 1;
    for (std::int64_t i = 0; i < output_length; ++i) {
        const std::uint32_t slot = history_insert(table, output[i]);
        table.in_context[slot] = 1;
        table.output_count[slot] += 1;
    }
}

// The reference's steps 2 and 3 for one id: the repetition penalty if the id is
// in the context, then presence and frequency if it was generated.
SS_HD inline double penalise(double logit, bool in_context, std::uint32_t output_count, const RowParams& p) {
    if (p.uses_repetition() && in_context) logit = apply_repetition_penalty(logit, p.repetition_penalty);
    if (p.uses_presence_frequency() && output_count > 0) {
        logit = apply_presence_frequency(logit, static_cast<double>(output_count), p.frequency_penalty,
                                         p.presence_penalty);
    }
    return logit;
}

SS_HD inline void history_fill_penalised(HistoryTable& table, const float* row, const RowParams& p) {
    for (std::uint32_t i = 0; i < table.capacity; ++i) {
        const std::int32_t id = table.ids[i];
        if (id != kEmptySlot) {
            table.penalised[i] = penalise(static_cast<double>(row[id]), table.in_context[i] != 0,
                                          table.output_count[i], p);
        }
    }
}

}  // namespace samplescope::batch
