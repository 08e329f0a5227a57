// Clears the upper halves of the AVX registers on x86-64 (vzeroupper).
//
// Why: once some library in the process leaves them dirty, every SSE
// instruction pays an AVX-SSE transition penalty; on the x86-64 machine these
// figures come from, std::exp ran 20-30 times slower after QApplication
// started (see docs/gui.md). New threads inherit the dirty state. The worker
// calls this before each engine step; it changes no value, only the speed.
#pragma once

namespace samplescope::ui {

void clearUpperVectorState();

}  // namespace samplescope::ui
