// The memory budget of one run: what a command may allocate in all (its input,
// traces, steps, batches, draws and output), checked before it allocates. The
// default is half of the smaller of physical memory and the process's address
// space limit (`ulimit -v`); --max-memory sets another.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace samplescope {

// Physical memory in bytes, 0 when unknown.
std::uint64_t physical_memory_bytes();

// Half of min(physical memory, RLIMIT_AS, RLIMIT_DATA); 8 GiB when none is known.
std::uint64_t default_memory_budget();

// "4G", "512M", "64K" (powers of 1024) or plain bytes; an integer >= 1 MiB.
// Empty text gives default_memory_budget(). Throws InputError("max-memory").
std::uint64_t parse_memory_budget(std::string_view text);

// Saturating arithmetic for estimates (an estimate past 2^64-1 is 2^64-1).
std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b);
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b);

// Throws InputError("max-memory") when `needed` bytes pass `budget`:
// "WHAT needs about N MiB, more than the memory budget of M MiB (--max-memory)".
void check_memory(std::uint64_t needed, std::uint64_t budget, const std::string& what);

}  // namespace samplescope
