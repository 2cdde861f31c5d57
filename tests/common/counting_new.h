// Allocation counting for tests that budget allocations (counts, never timings): linking
// counting_new.cc (CMake target turnpike_counting_new) replaces the executable's global
// operator new and delete, plain and nothrow forms, so that each allocation is paired with a
// matching deallocation (sanitizers check the pairing); aligned forms are left alone and not
// counted. Only the calling thread's allocations between Start and Stop are counted.
#pragma once

#include <cstddef>

namespace turnpike::testing {

// Resets this thread's count and starts counting.
void StartCountingAllocations();
// Stops counting; returns the count since Start.
size_t StopCountingAllocations();
// The count since Start, counting or not.
size_t CountedAllocations();

}  // namespace turnpike::testing
