#include "ui/common/cpu_state.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

namespace samplescope::ui {

namespace {

__attribute__((target("avx"))) void zeroUpper() { _mm256_zeroupper(); }

}  // namespace

void clearUpperVectorState() {
    static const bool has_avx = __builtin_cpu_supports("avx");
    if (has_avx) zeroUpper();
}

}  // namespace samplescope::ui

#else

namespace samplescope::ui {

void clearUpperVectorState() {}

}  // namespace samplescope::ui

#endif
