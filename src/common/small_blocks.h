// SmallBlocks: one thread's cache of small heap blocks in front of malloc, which the turnpike
// executable's operator new uses (app/count_allocations.cc).
//
// Blocks of up to kMaxSize bytes are kept in kClasses classes of kGrain bytes, at most
// kKeepPerClass per class (so at most about 2.1 MiB a thread). A request that misses takes its
// class's full size from malloc (MallocSize), and a block is kept in the class its usable size
// fills (malloc_usable_size), so a kept block always holds its class's size, whatever size the
// delete that returned it named. Every block is a malloc block: one the cache does not keep goes
// back to free, and free may release any of them.
//
// Why: Asio keeps two freed coroutine frames a thread. That serves one connection's requests,
// whose frames come and go in order, but not many connections' interleaved ones; its misses cost
// a free and an aligned_alloc each. The build turns that recycling off
// (BOOST_ASIO_DISABLE_AWAITABLE_FRAME_RECYCLING), so frames come here. Measured in
// docs/BENCHMARKS.md ("Coroutine frames from a per-thread cache").
//
// Thread safety: none; each thread has its own instance. A block freed on another thread than
// the one that took it joins the freeing thread's cache.
#pragma once

#include <malloc.h>

#include <cstddef>
#include <cstdlib>

namespace turnpike {

// Constant-initialisable and trivially destructible, so that a thread_local instance is reached
// without a TLS guard; its owner calls Close() when the thread ends.
struct SmallBlocks {
  static constexpr std::size_t kGrain = 64;
  static constexpr std::size_t kClasses = 16;
  static constexpr std::size_t kMaxSize = kGrain * kClasses;
  static constexpr unsigned kKeepPerClass = 256;

  // The class of a request of `size` bytes (1 .. kClasses; size <= kMaxSize).
  static constexpr std::size_t ClassOf(std::size_t size) {
    return size == 0 ? 1 : (size + kGrain - 1) / kGrain;
  }
  // What malloc is asked for when a request of `size` bytes (<= kMaxSize) misses.
  static constexpr std::size_t MallocSize(std::size_t size) { return ClassOf(size) * kGrain; }

  // A kept block of at least `size` bytes (size <= kMaxSize), or nullptr.
  void* Take(std::size_t size) noexcept {
    const std::size_t c = ClassOf(size);
    FreeBlock* b = head[c];
    if (b == nullptr) return nullptr;
    head[c] = b->next;
    --kept[c];
    return b;
  }

  // Keeps malloc block `p` (not null); false when it is not kept (its usable size outside the
  // classes, its class full, or the cache closed): the caller frees it.
  bool Keep(void* p) noexcept {
    const std::size_t c = malloc_usable_size(p) / kGrain;
    if (c < 1 || c > kClasses || kept[c] >= kKeepPerClass || closed) return false;
    auto* b = static_cast<FreeBlock*>(p);
    b->next = head[c];
    head[c] = b;
    ++kept[c];
    return true;
  }

  // Frees every kept block; none is kept from now on.
  void Close() noexcept {
    closed = true;
    for (std::size_t c = 1; c <= kClasses; ++c) {
      while (FreeBlock* b = head[c]) {
        head[c] = b->next;
        std::free(b);
      }
      kept[c] = 0;
    }
  }

  struct FreeBlock {
    FreeBlock* next;
  };
  FreeBlock* head[kClasses + 1];
  unsigned kept[kClasses + 1];
  bool closed;
};

}  // namespace turnpike
