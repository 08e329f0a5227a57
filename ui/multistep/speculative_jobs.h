// The Speculative tab's work, callable from any thread: rounds of speculative
// decoding (engine/generation/speculative.h) run on a copy of the tab's
// Speculation, each kept as a compact record for the display. A round's
// distributions are 2k + 1 rows of up to V ids (about 8 MB at k = 4 and
// V = 72,547), so a record keeps only what is drawn: the best few tokens of q
// and p at each position, the residual's or the bonus row's best and where
// they lie on the draw's [0, 1) line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QString>

#include "engine/generation/speculative.h"

namespace samplescope::ui {

// One token of a position's two distributions.
struct SpecBar {
    std::int32_t id = 0;
    std::string text;
    double q = 0.0;  // the draft's probability (the final draw's: its probability there)
    double p = 0.0;  // the target's
};

// Where an id's probability lies on the [0, 1) line the final draw walks (ids in ascending order).
struct SpecSegment {
    std::int32_t id = 0;
    std::string text;
    double start = 0.0;
    double width = 0.0;
};

struct SpecPositionRecord {
    std::int32_t token = 0;
    std::string text;
    double q = 0.0;
    double p = 0.0;
    double acceptance = 0.0;  // min(1, p / q)
    double overlap = 0.0;     // sum min(p, q): this position's expected acceptance
    std::optional<double> u;  // the test's uniform (drawn anyway by some presets past the chain's end)
    std::optional<double> draft_u;
    bool tested = false;
    bool accepted = false;
    bool greedy = false;      // decided without a uniform
    std::size_t q_kept = 0;
    std::size_t p_kept = 0;
    std::vector<SpecBar> bars;  // the best of q and of p, by max(p, q) desc
};

struct SpecFinalRecord {
    bool bonus = false;
    std::size_t position = 0;
    std::int32_t token = 0;
    std::string text;
    std::optional<double> u;
    bool fell_back = false;
    bool empty_residual = false;
    std::size_t kept = 0;            // ids it was drawn from
    std::vector<SpecBar> bars;       // the best of them, probability in `q`
    std::vector<SpecSegment> segments;  // the best of them and the drawn one, on the draw's line
};

enum class SpecSource { Accepted, Residual, Bonus };

struct SpecEmittedRecord {
    std::int32_t id = 0;
    std::string text;
    SpecSource source = SpecSource::Accepted;
    std::size_t position = 0;
    double p = 0.0;  // the target's probability of it at its position
};

struct SpecRoundRecord {
    std::size_t index = 0;
    std::size_t k = 0;
    std::vector<SpecPositionRecord> positions;
    SpecFinalRecord final;
    std::vector<SpecEmittedRecord> emitted;
    bool ended = false;
    std::uint64_t draws_before = 0;
    std::uint64_t draws_after = 0;
    std::optional<double> unused_bonus_u;  // vLLM: the bonus token's uniform, drawn first, not used
    SpeculativeStats stats;                // the run's counts after this round
};

// Bars kept per position and per final draw.
inline constexpr std::size_t kSpecBarsShown = 6;

SpecRoundRecord recordRound(const SpeculativeRound& round, const Speculation& speculation);

struct SpeculationOutcome {
    std::shared_ptr<Speculation> speculation;  // after the rounds that ran
    std::vector<SpecRoundRecord> rounds;       // they stand even when a later one is refused
    QString error;                             // one line, when a round was refused
};

// Runs up to `rounds` rounds on a copy of `from`, stopping at the end of the text.
SpeculationOutcome runSpeculationRounds(const Speculation& from, int rounds);

}  // namespace samplescope::ui
