#include "engine/base/memory_budget.h"

#include <algorithm>
#include <limits>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"

namespace samplescope {

namespace {

constexpr std::uint64_t kMiB = 1ULL << 20;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

std::string mib(std::uint64_t bytes) {
    return std::to_string(bytes / kMiB + (bytes % kMiB ? 1 : 0)) + " MiB";
}

#if defined(__unix__) || defined(__APPLE__)
std::uint64_t soft_limit(int resource) {
    rlimit limit{};
    if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
    return static_cast<std::uint64_t>(limit.rlim_cur);
}
#endif

}  // namespace

std::uint64_t physical_memory_bytes() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_size > 0) {
        return saturating_mul(static_cast<std::uint64_t>(pages), static_cast<std::uint64_t>(page_size));
    }
#endif
    return 0;
}

std::uint64_t default_memory_budget() {
    std::uint64_t smallest = physical_memory_bytes();
    const auto take = [&smallest](std::uint64_t limit) {
        if (limit != 0) smallest = smallest == 0 ? limit : std::min(smallest, limit);
    };
#if defined(__unix__) || defined(__APPLE__)
    take(soft_limit(RLIMIT_AS));
    take(soft_limit(RLIMIT_DATA));
#endif
    return smallest == 0 ? 8ULL << 30 : smallest / 2;
}

std::uint64_t parse_memory_budget(std::string_view text) {
    if (text.empty()) return default_memory_budget();
    std::uint64_t unit = 1;
    std::string_view digits = text;
    switch (digits.back()) {
        case 'K': case 'k': unit = 1ULL << 10; break;
        case 'M': case 'm': unit = 1ULL << 20; break;
        case 'G': case 'g': unit = 1ULL << 30; break;
        case 'T': case 't': unit = 1ULL << 40; break;
        default: break;
    }
    if (unit != 1) digits.remove_suffix(1);
    const auto parsed = parse_integer_text(digits);
    if (!parsed || parsed->negative || parsed->magnitude > kMax / unit || parsed->magnitude * unit < kMiB) {
        throw InputError("max-memory", "--max-memory must be a size of at least 1M (bytes, or with K, M, G or T), got \"" +
                                           std::string(text) + "\"");
    }
    return parsed->magnitude * unit;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return a > kMax - b ? kMax : a + b; }

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
    if (a == 0 || b == 0) return 0;
    return a > kMax / b ? kMax : a * b;
}

void check_memory(std::uint64_t needed, std::uint64_t budget, const std::string& what) {
    if (needed <= budget) return;
    throw InputError("max-memory", what + " needs about " + mib(needed) + ", more than the memory budget of " +
                                       mib(budget) + " (--max-memory)");
}

}  // namespace samplescope
