#include "engine/responses/response_row.h"

#include <cmath>

#include "engine/base/input_error.h"

namespace samplescope {

namespace {

// The steps the shown numbers already went through are switched off, so the
// row is not processed twice: penalties before a penalised point, temperature
// before a scaled one, and everything before the final distribution.
SamplingParams row_params(const SamplingParams& request, LogprobPoint point) {
    SamplingParams params = request;
    if (point != LogprobPoint::Raw) {
        params.repetition_penalty = 1.0;
        params.presence_penalty = 0.0;
        params.frequency_penalty = 0.0;
        params.logit_bias.clear();
        params.dry_multiplier = 0.0;
    }
    if (point == LogprobPoint::Scaled || point == LogprobPoint::Final) {
        params.temperature = 1.0;
        params.dynatemp_range = 0.0;
    }
    if (point == LogprobPoint::Final) {
        params.top_k = 0;
        params.top_p = 1.0;
        params.min_p = 0.0;
        params.typical_p = 1.0;
        params.top_n_sigma = -1.0;
        params.xtc_probability = 0.0;
        params.mirostat = 0;
    }
    return params;
}

const char* point_words(LogprobPoint point) {
    switch (point) {
        case LogprobPoint::Raw: return "the model's distribution";
        case LogprobPoint::Penalised: return "the distribution after the penalties (they are off here)";
        case LogprobPoint::Scaled: return "the distribution after penalties and temperature (both off here)";
        case LogprobPoint::Final: return "the engine's final distribution (every step off here)";
    }
    return "";
}

}  // namespace

ResponseRow response_row(const Response& response, std::size_t index, const ExplainSettings& settings) {
    const ResponsePosition& position = response.positions.at(index);
    const LogprobPoint point = settings.mode ? settings.mode->point : LogprobPoint::Raw;
    ResponseRow row;
    row.params = row_params(settings.params, point);
    row.params.seed = settings.params.seed;
    if (response.rows) {
        row.logits = response.rows->row(index);
        row.labels.assign(row.logits.size(), std::string());
        row.ids.resize(row.logits.size());
        for (std::size_t i = 0; i < row.ids.size(); ++i) row.ids[i] = static_cast<std::int64_t>(i);
        row.token = static_cast<std::size_t>(*position.token.id);
        row.note = "position " + std::to_string(index) + ": the whole row of " + std::string(settings.mode->mode) +
                   ", " + point_words(point);
        return row;
    }
    for (std::size_t i = 0; i < position.top.size(); ++i) {
        if (position.token_in_top == i) row.token = row.logits.size();
        row.logits.push_back(*position.top[i].value);
        row.labels.push_back(position.top[i].bytes);
        row.ids.push_back(position.top[i].id.value_or(-1));
    }
    if (!position.token_in_top && position.token.value) {
        row.token = row.logits.size();
        row.logits.push_back(*position.token.value);
        row.labels.push_back(position.token.bytes);
        row.ids.push_back(position.token.id.value_or(-1));
    }
    if (row.logits.empty()) {
        throw InputError("response", response.source + ": " + position.where +
                                         " shows no number for the token and no alternatives: there is no row to open");
    }
    const bool normalised = response.normalised && settings.mode && settings.mode->kind != LogprobKind::Logit;
    if (normalised) {
        double listed = 0.0;
        for (const double v : row.logits) listed += std::exp(v);
        const double rest = 1.0 - listed;
        if (rest > 1e-12) {
            row.rest = row.logits.size();
            row.logits.push_back(std::log(rest));
            row.labels.emplace_back(kRestLabel);
            row.ids.push_back(-1);
        }
    }
    row.approximate = true;
    row.note = "position " + std::to_string(index) + ": the " + std::to_string(row.logits.size() - (row.rest ? 1 : 0)) +
               " ids shown" + (row.rest ? " and one \"rest\" token holding every other id's mass" : "") + ", of " +
               point_words(point) + (normalised ? "" : "; logits, whose other ids' mass is unknown");
    return row;
}

}  // namespace samplescope
