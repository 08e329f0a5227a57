// The only place that maps a stage to its unit (tests/test_pipelines.cpp walks
// it: every stage of every preset resolves, and to exactly one unit).
#include <array>
#include <stdexcept>

#include "engine/stages/stage_unit.h"

namespace samplescope {

namespace {

const std::array<const StageUnit*, 13> kUnits{
    &kLogitBiasUnit, &kRepetitionPenaltyUnit, &kPresenceFrequencyUnit, &kDryUnit, &kGreedyUnit,
    &kTemperatureUnit, &kTopNSigmaUnit, &kTopKUnit, &kTypicalPUnit, &kTopPUnit,
    &kMinPUnit, &kXtcUnit, &kMirostatUnit};

}  // namespace

const StageUnit& stage_unit(Stage stage) {
    for (const auto* unit : kUnits) {
        if (unit->stage == stage) return *unit;
    }
    throw std::logic_error("no stage unit for stage " + std::string(stage_info(stage).name));
}

std::span<const StageUnit> stage_units() {
    static const std::array<StageUnit, kUnits.size()> units = [] {
        std::array<StageUnit, kUnits.size()> copy{};
        for (std::size_t i = 0; i < kUnits.size(); ++i) copy[i] = *kUnits[i];
        return copy;
    }();
    return units;
}

}  // namespace samplescope
