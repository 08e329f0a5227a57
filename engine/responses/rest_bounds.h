// What the top N of a response leave unknown, bounded. The ids outside the
// list ("the rest") hold a known or bounded mass, each no more than the
// lowest listed id, but how that mass is spread over them is not shown. A
// truncation stage's verdict needs sums of the rest's weights raised to a
// power (temperature: q ~ p^(1/T)); these are bounded here by the extreme
// spreads: all the mass in as few ids as the cap allows, or spread evenly
// over as many ids as there can be (docs/responses.md derives each bound).
#pragma once

#include <limits>

namespace samplescope {

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

struct Interval {
    double lo = 0.0;
    double hi = 0.0;  // kUnbounded when nothing bounds it
};

// The rest, in weights relative to the largest listed id (weight 1): its
// total mass in [mass_lo, mass_hi] (mass_hi unbounded for logits, whose
// normaliser is unknown), each id at most `cap` (the lowest listed weight),
// at most `count` ids (unbounded when V is unknown).
struct RestShape {
    double mass_lo = 0.0;
    double mass_hi = 0.0;
    double cap = 0.0;
    double count = kUnbounded;
};

// Which rest ids a stage's input still holds: those of weight >= `floor`
// (min-p before it), at most the largest `limit` (top-k before it), and
// `cut` when a top-p before it stopped somewhere inside the rest.
struct RestFilter {
    double floor = 0.0;
    double limit = kUnbounded;
    bool cut = false;
    // A top-k by value keeps every id tied with the k-th: `limit` at least,
    // more when the rest ties with it, so only the lower bound holds to it.
    bool ties_beyond_limit = false;
};

// Bounds on the sum of w^power over the rest ids the filter keeps, w the
// weights of `shape` (power 1/T where temperature applies between the
// response's numbers and the stage, 1 where it does not).
Interval rest_power_sum(const RestShape& shape, const RestFilter& filter, double power);

// Bounds on -sum p ln p over the rest, `shape` in absolute probabilities.
Interval rest_entropy(const RestShape& shape);

}  // namespace samplescope
