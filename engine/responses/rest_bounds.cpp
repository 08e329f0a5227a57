#include "engine/responses/rest_bounds.h"

#include <algorithm>
#include <cmath>

namespace samplescope {

namespace {

// x ln x with 0 ln 0 = 0.
double x_log_x(double x) { return x > 0.0 ? x * std::log(x) : 0.0; }

// The largest sum of w^power for a mass spread over ids of weight in
// [floor, cap], at most n of them. Convex powers (>= 1) are largest with the
// mass packed into ids at the cap; concave ones with it spread over as many
// ids as the floor allows (k ids of mass/k each: k^(1 - power) mass^power grows with k).
double largest(double mass, double cap, double floor, double n, double power) {
    if (mass <= 0.0 || cap <= 0.0 || n <= 0.0 || floor > cap) return 0.0;
    if (power >= 1.0) {
        // Each w^power = w * w^(power - 1) <= w * cap^(power - 1), and at most n ids reach the cap.
        const double by_count = std::isinf(n) ? kUnbounded : n * std::pow(cap, power);
        if (std::isinf(mass)) return by_count;
        if (floor > 0.0 && mass < floor) return 0.0;
        return std::min(by_count, mass * std::pow(cap, power - 1.0));
    }
    if (floor > 0.0) {
        if (mass < floor) return 0.0;
        n = std::min(n, mass / floor);
    }
    if (std::isinf(n)) return kUnbounded;
    const double each = std::isinf(mass) ? cap : std::min(cap, mass / n);
    return n * std::pow(each, power);
}

}  // namespace

Interval rest_power_sum(const RestShape& shape, const RestFilter& filter, double power) {
    const double n = std::min(filter.ties_beyond_limit ? kUnbounded : filter.limit, shape.count);
    Interval out;
    out.hi = largest(shape.mass_hi, shape.cap, filter.floor, n, power);
    if (filter.cut || filter.floor > 0.0 || out.hi == 0.0 || shape.mass_lo <= 0.0) return out;
    if (filter.limit < shape.count) {
        // The largest `limit` ids of `count` hold at least limit / count of the mass.
        if (std::isinf(shape.count)) return out;
        const double each = shape.mass_lo / shape.count;
        out.lo = power >= 1.0 ? filter.limit * std::pow(each, power) : filter.limit * each;
        return out;
    }
    if (power == 1.0) {
        out.lo = shape.mass_lo;
    } else if (power > 1.0) {
        // Spread evenly over every id (Jensen); nothing when their number is unbounded.
        out.lo = std::isinf(shape.count) ? 0.0 : shape.count * std::pow(shape.mass_lo / shape.count, power);
    } else {
        // Packed at the cap: a concave sum is smallest on the fewest ids.
        const double full = std::floor(shape.mass_lo / shape.cap);
        out.lo = full * std::pow(shape.cap, power) + std::pow(shape.mass_lo - full * shape.cap, power);
    }
    out.lo = std::min(out.lo, out.hi);
    return out;
}

Interval rest_entropy(const RestShape& shape) {
    Interval out;
    if (shape.mass_hi <= 0.0 || shape.cap <= 0.0) return out;
    // Fewest ids: packed at the cap (-x ln x is concave, so its sum is smallest there).
    const auto packed = [&shape](double mass) {
        const double full = std::floor(mass / shape.cap);
        return -(full * x_log_x(shape.cap) + x_log_x(mass - full * shape.cap));
    };
    out.lo = std::min(packed(shape.mass_lo), packed(shape.mass_hi));
    // Most ids: spread evenly, mass ln(count / mass).
    const auto spread = [&shape](double mass) { return mass > 0.0 ? mass * std::log(shape.count / mass) : 0.0; };
    out.hi = std::isinf(shape.count) ? kUnbounded : std::max(spread(shape.mass_lo), spread(shape.mass_hi));
    out.lo = std::max(0.0, out.lo);
    return out;
}

}  // namespace samplescope
