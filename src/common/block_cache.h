// BlockCache: a per-thread cache of the large blocks that a request's state lives in.
//
// Coroutine frames of up to 1 KiB come from a per-thread cache (common/small_blocks.h, in the
// executable's operator new); a bigger frame is a malloc and a free on every call. A door's
// request state (its context and its model call, several KiB) therefore lives off the frame, in
// one block from this cache: a struct derived from CachedBlock is allocated here by `new` (and
// std::make_unique), so a warm worker takes and returns the same few blocks without touching
// malloc.
//
// Each thread keeps up to kSlots freed blocks. Allocate takes the first kept block that is large
// enough, else calls operator new (so a block the cache could not serve is counted like any
// other allocation: observability/allocation_count.h); Free keeps the block in an empty slot,
// else deletes it. Memory held: at most kSlots blocks per thread, released at the thread's end.
//
// Thread safety: each thread has its own slots, touched by no other thread; a block may be
// freed on another thread than the one that allocated it (it then joins that thread's slots).
#pragma once

#include <cstddef>

namespace turnpike {

class BlockCache {
 public:
  static constexpr size_t kSlots = 8;

  // A block of at least `size` bytes, aligned for any object (operator new's alignment).
  static void* Allocate(size_t size);
  // Returns a block of Allocate, of at least `size` usable bytes.
  static void Free(void* block, size_t size) noexcept;
};

// Derive a large state struct from this so that `new` takes its block from the calling thread's
// BlockCache (and `delete` returns it there).
struct CachedBlock {
  static void* operator new(size_t size) { return BlockCache::Allocate(size); }
  static void operator delete(void* block, size_t size) noexcept { BlockCache::Free(block, size); }
};

}  // namespace turnpike
