// A bump arena for one HTTP message's header fields at a time, and the allocator that Beast's
// basic_fields takes to use it: a parsed header (its field nodes, its target or reason string)
// costs no heap allocation while it fits in the arena.
//
//   struct Connection { net::HeaderArena arena; ... };
//   conn.arena.Reset();  // the previous message is destroyed
//   net::RequestParser parser(conn.arena);  // its message's fields use the arena
//
// Memory: kBytes inline; a block that does not fit goes to operator new and back to operator
// delete when Beast frees it. Freeing an arena block does nothing: its space comes back at the
// next Reset, which the owner calls only when no message using the arena is alive (checked:
// Reset with live blocks aborts in debug builds). A default-constructed allocator has no
// arena and is the plain heap.
//
// Thread safety: none; an arena belongs to one connection on one worker.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

namespace turnpike::net {

class HeaderArena {
 public:
  static constexpr size_t kBytes = 2048;

  HeaderArena() = default;
  HeaderArena(const HeaderArena&) = delete;
  HeaderArena& operator=(const HeaderArena&) = delete;

  void* Allocate(size_t bytes, size_t align) {
    const size_t start = (used_ + align - 1) & ~(align - 1);
    if (align <= alignof(std::max_align_t) && start + bytes <= kBytes) {
      used_ = start + bytes;
      ++live_;
      return storage_ + start;
    }
    return ::operator new(bytes, std::align_val_t(align));
  }

  void Deallocate(void* p, size_t align) {
    if (Owns(p)) {
      --live_;
      return;
    }
    ::operator delete(p, std::align_val_t(align));
  }

  // Makes the whole arena free again; no block from it may be in use.
  void Reset() {
    assert(live_ == 0);
    used_ = 0;
  }

  size_t used() const { return used_; }

 private:
  bool Owns(const void* p) const {
    const auto* byte = static_cast<const std::byte*>(p);
    return byte >= storage_ && byte < storage_ + kBytes;
  }

  alignas(std::max_align_t) std::byte storage_[kBytes];
  size_t used_ = 0;
  size_t live_ = 0;  // blocks handed out and not yet freed (for Reset's check)
};

template <typename T>
class ArenaAllocator {
 public:
  using value_type = T;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  ArenaAllocator() = default;
  explicit ArenaAllocator(HeaderArena* arena) : arena_(arena) {}
  template <typename U>
  ArenaAllocator(const ArenaAllocator<U>& other) : arena_(other.arena()) {}  // NOLINT: rebind

  T* allocate(size_t n) {
    if (arena_ == nullptr) return static_cast<T*>(::operator new(n * sizeof(T), AlignOfT()));
    return static_cast<T*>(arena_->Allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, size_t n) {
    if (arena_ == nullptr) {
      ::operator delete(p, n * sizeof(T), AlignOfT());
      return;
    }
    arena_->Deallocate(p, alignof(T));
  }

  HeaderArena* arena() const { return arena_; }

  template <typename U>
  bool operator==(const ArenaAllocator<U>& other) const {
    return arena_ == other.arena();
  }

 private:
  static constexpr std::align_val_t AlignOfT() { return std::align_val_t(alignof(T)); }

  HeaderArena* arena_ = nullptr;
};

}  // namespace turnpike::net
