// Heap allocations counted per process: every call of C++ `operator new` (any form, coroutine
// frames included) and of aligned_alloc (where Asio's recycling of handlers misses) on any
// thread, so that an allocation added to the request path shows up in a test (see
// tests/integration/allocations.test.mjs) and in /metrics as turnpike_allocations_total.
//
// The counting `operator new` (and aligned_alloc) lives in the turnpike executable
// (app/count_allocations.cc), not in a library, so unit tests and benchmarks keep their own
// allocators. It is left out of sanitizer builds, whose runtime owns `operator new`;
// counting_allocations() says which. Plain mallocs and callocs (the embedded engine's, OpenSSL's,
// libc's) are not counted.
//
// Cost: a thread-local pointer and a relaxed increment per allocation. Each thread gets one
// slot on its first allocation (taken with malloc, never freed, so totals stay monotonic when
// threads end). Reading sums the slots; a read concurrent with allocations is a recent value.
#pragma once

#include <atomic>
#include <cstdint>

namespace turnpike::observability {

struct AllocationSlot {
  std::atomic<uint64_t> count{0};
  AllocationSlot* next = nullptr;
};

// Registers the calling thread's slot (from malloc, pushed on a lock-free list).
AllocationSlot* NewAllocationSlot();

inline thread_local AllocationSlot* tls_allocation_slot = nullptr;

// Called by the counting operator new: one allocation on this thread.
inline void NoteAllocation() {
  AllocationSlot* slot = tls_allocation_slot;
  if (slot == nullptr) slot = tls_allocation_slot = NewAllocationSlot();
  slot->count.store(slot->count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// Set once, before main, by the executable that installs the counting operator new.
void MarkCountingAllocations();
bool counting_allocations();

// All threads' allocations so far.
uint64_t AllocationCount();

}  // namespace turnpike::observability
