// The turnpike executable's operator new: malloc, as the default one, plus a count per thread
// (observability/allocation_count.h). Only the replaceable allocation functions that allocate
// are defined; the matching operator delete forms are defined too, so every pair stays malloc
// and free. Sanitizer builds keep their runtime's operators (and count nothing).
//
// aligned_alloc is counted too: Asio takes a coroutine frame that its per-thread recycling
// cache cannot serve (a frame over 1,020 bytes, or none cached of its size) from
// std::aligned_alloc, not from operator new, and such a frame on a request path is a malloc
// per request like any other. Defined here, in the executable, it stands in for libc's.
#include <malloc.h>

#include <cstdlib>
#include <new>

#include "observability/allocation_count.h"

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)

namespace {

void* Allocate(std::size_t size) {
  turnpike::observability::NoteAllocation();
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

void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

#endif
