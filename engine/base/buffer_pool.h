// Recycles the large arrays a trace is made of (V logits, V probabilities, V
// ids per stage). Why: glibc serves each same-sized block over its mmap
// threshold with fresh pages and unmaps it on free, so a full trace at
// V = 128,256 spent as long in page faults as in arithmetic. A pooled array's
// pages stay mapped; the pool keeps a bounded number of them.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace samplescope {

// An empty vector (capacity possibly retained from an earlier use). When the
// last shared_ptr to it goes, it returns to the pool instead of being freed.
std::shared_ptr<std::vector<double>> pooled_doubles();
std::shared_ptr<std::vector<std::int32_t>> pooled_ids();
// `size` doubles whose values are unspecified (a recycled array's old ones):
// for a caller that writes every element, without zero-filling them first.
std::shared_ptr<std::vector<double>> pooled_doubles(std::size_t size);

}  // namespace samplescope
