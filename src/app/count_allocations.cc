// The turnpike executable's operator new: malloc, as the default one, plus a count per thread
// (observability/allocation_count.h), with a per-thread cache of small blocks in front of malloc
// (common/small_blocks.h: coroutine frames are its reason). Only the replaceable allocation
// functions that allocate are defined; the matching operator delete forms are defined too, so
// every block is a malloc block. Every operator new counts, whether the cache or malloc serves
// it. Sanitizer builds keep their runtime's operators (and count nothing).
//
// aligned_alloc is counted too: what still takes memory from std::aligned_alloc (Asio's
// recycling of handlers and operations, when it misses) is a malloc on the path like any other.
// Defined here, in the executable, it stands in for libc's.
#include <malloc.h>

#include <cstdlib>
#include <new>

#include "common/small_blocks.h"
#include "observability/allocation_count.h"

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)

namespace {

thread_local turnpike::SmallBlocks tls_blocks{};
thread_local bool tls_close_armed = false;

// Made on a thread's first kept block, so that its destructor returns them when the thread ends.
struct CloseAtExit {
  ~CloseAtExit() { tls_blocks.Close(); }
};

void Release(void* p) {
  if (p == nullptr) return;
  if (tls_blocks.Keep(p)) {
    if (!tls_close_armed) {
      static thread_local CloseAtExit close_at_exit;
      (void)&close_at_exit;  // constructs it, and registers its destructor, once per thread
      tls_close_armed = true;
    }
    return;
  }
  std::free(p);
}

void* Allocate(std::size_t size) {
  turnpike::observability::NoteAllocation();
  if (size <= turnpike::SmallBlocks::kMaxSize) {
    if (void* p = tls_blocks.Take(size)) return p;
    size = turnpike::SmallBlocks::MallocSize(size);
  }
  for (;;) {
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* AllocateAligned(std::size_t size, std::align_val_t align) {
  turnpike::observability::NoteAllocation();
  for (;;) {
    // memalign, not aligned_alloc: that one counts its own calls (below).
    if (void* p = memalign(static_cast<std::size_t>(align), size == 0 ? 1 : size)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

[[maybe_unused]] const bool kMarked = [] {
  turnpike::observability::MarkCountingAllocations();
  return true;
}();

}  // namespace

extern "C" void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  turnpike::observability::NoteAllocation();
  return memalign(alignment, size);
}

void* operator new(std::size_t size) { return Allocate(size); }
void* operator new[](std::size_t size) { return Allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return Allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return Allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t align) {
  return AllocateAligned(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return AllocateAligned(size, align);
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  try {
    return AllocateAligned(size, align);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  try {
    return AllocateAligned(size, align);
  } catch (...) {
    return nullptr;
  }
}

void operator delete(void* p) noexcept { Release(p); }
void operator delete[](void* p) noexcept { Release(p); }
void operator delete(void* p, std::size_t) noexcept { Release(p); }
void operator delete[](void* p, std::size_t) noexcept { Release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { Release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Release(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

#endif
