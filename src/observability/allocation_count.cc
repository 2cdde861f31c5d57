#include "observability/allocation_count.h"

#include <cstdlib>
#include <new>

namespace turnpike::observability {
namespace {

std::atomic<AllocationSlot*> g_slots{nullptr};
std::atomic<bool> g_counting{false};

}  // namespace

AllocationSlot* NewAllocationSlot() {
  // malloc, not new: this runs inside operator new.
  void* memory = std::malloc(sizeof(AllocationSlot));
  if (memory == nullptr) std::abort();
  auto* slot = new (memory) AllocationSlot;
  AllocationSlot* head = g_slots.load(std::memory_order_relaxed);
  do {
    slot->next = head;
  } while (!g_slots.compare_exchange_weak(head, slot, std::memory_order_release,
                                          std::memory_order_relaxed));
  return slot;
}

void MarkCountingAllocations() { g_counting.store(true, std::memory_order_relaxed); }

bool counting_allocations() { return g_counting.load(std::memory_order_relaxed); }

uint64_t AllocationCount() {
  uint64_t total = 0;
  for (const AllocationSlot* slot = g_slots.load(std::memory_order_acquire); slot != nullptr;
       slot = slot->next) {
    total += slot->count.load(std::memory_order_relaxed);
  }
  return total;
}

}  // namespace turnpike::observability
