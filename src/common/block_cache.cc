#include "common/block_cache.h"

#include <new>

namespace turnpike {
namespace {

// Set when the thread's slots are gone (its thread_local destructors ran): a block freed after
// that, by a later destructor on the exiting thread, is deleted at once.
thread_local bool tls_slots_gone = false;

struct Slots {
  void* block[BlockCache::kSlots] = {};
  size_t size[BlockCache::kSlots] = {};

  ~Slots() {
    for (void* kept : block) ::operator delete(kept);
    tls_slots_gone = true;
  }
};

thread_local Slots tls_slots;

}  // namespace

void* BlockCache::Allocate(size_t size) {
  if (!tls_slots_gone) {
    Slots& slots = tls_slots;
    for (size_t i = 0; i < kSlots; ++i) {
      if (slots.block[i] != nullptr && slots.size[i] >= size) {
        void* block = slots.block[i];
        slots.block[i] = nullptr;
        return block;
      }
    }
  }
  return ::operator new(size);
}

void BlockCache::Free(void* block, size_t size) noexcept {
  if (block == nullptr) return;
  if (!tls_slots_gone) {
    Slots& slots = tls_slots;
    for (size_t i = 0; i < kSlots; ++i) {
      if (slots.block[i] == nullptr) {
        slots.block[i] = block;
        slots.size[i] = size;
        return;
      }
    }
  }
  ::operator delete(block);
}

}  // namespace turnpike
