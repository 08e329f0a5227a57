#include "engine/core/row_checks.h"

#include <cfloat>
#include <cmath>
#include <limits>

#include "engine/core/row_math.h"

namespace samplescope {

InputError refused_logit_error(std::int64_t id, double x, const std::string& where) {
    return InputError("logits", where + "logit of id " + std::to_string(id) + " is " + format_number(x) +
                                    " (only finite values and -inf are allowed)");
}

void check_logits(std::span<const double> logits) {
    if (logits.empty()) throw InputError("logits", "logits are empty (V = 0): nothing can be sampled");
    // Most rows are finite throughout: one cheap pass says so. Otherwise one
    // branch-free pass, and the first refused id is looked up only when there is one.
    if (all_finite(logits.data(), static_cast<std::int64_t>(logits.size()))) return;
    bool refused = false;
    bool any_finite = false;
    for (const double x : logits) {
        refused |= logit_refused(x);
        any_finite |= std::isfinite(x);
    }
    if (refused) {
        for (std::size_t i = 0; i < logits.size(); ++i) {
            if (logit_refused(logits[i])) throw refused_logit_error(static_cast<std::int64_t>(i), logits[i]);
        }
    }
    if (!any_finite) throw InputError("logits", "every logit is -inf: nothing can be sampled");
}

InputError penalty_overflow_error(const std::string& penalty, std::int64_t id, double x, const std::string& where) {
    return InputError(penalty, where + penalty + " makes the logit of id " + std::to_string(id) + " " +
                                   format_number(x) +
                                   "; use a penalty closer to its off value (1 for repetition, 0 for presence and frequency)");
}

InputError penalty_emptied_error(const std::string& penalty, const std::string& where, const std::string& said) {
    return InputError(penalty, where + (said.empty() ? penalty : said) + " pushes every logit to -inf: nothing can be sampled");
}

InputError temperature_overflow_error(double temperature, std::int64_t id, double largest, const std::string& where) {
    std::string message = where + "temperature " + format_number(temperature) +
                          " is too small for these logits: l / T overflows at id " + std::to_string(id);
    if (largest >= 0.0) message += " (T must be at least " + format_number(largest / DBL_MAX) + ")";
    return InputError("temperature", message);
}

}  // namespace samplescope
