#include "governance/counter_table.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

namespace turnpike::governance {
namespace {

constexpr uint32_t kFree = 0;
constexpr uint32_t kClaiming = 1;
constexpr uint32_t kLive = 2;
constexpr size_t kTableBytes = kCounterTableSlots * sizeof(CounterSlot);

static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared words must be lock-free");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared words must be lock-free");

uint64_t Hash(ScopeKind kind, std::string_view id) {
  uint64_t h = 1469598103934665603ull ^ static_cast<uint64_t>(kind);
  for (char c : id) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

bool Matches(const CounterSlot& slot, ScopeKind kind, std::string_view id) {
  return slot.kind == static_cast<uint8_t>(kind) && slot.id_length == id.size() &&
         std::memcmp(slot.id, id.data(), id.size()) == 0;
}

Error Failed(const std::string& what) {
  return Error{ErrorCode::kInternal, "counter table: " + what + ": " + std::strerror(errno), ""};
}

}  // namespace

Result<std::unique_ptr<CounterTable>> CounterTable::Open(int fd) {
  if (fd < 0) {
    fd = ::memfd_create("turnpike-counters", MFD_CLOEXEC);
    if (fd < 0) return Failed("memfd_create");
    if (::ftruncate(fd, static_cast<off_t>(kTableBytes)) != 0) {
      ::close(fd);
      return Failed("ftruncate");
    }
  } else {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != kTableBytes) {
      ::close(fd);
      return Error{ErrorCode::kInternal, "counter table: inherited descriptor has the wrong size",
                   ""};
    }
  }
  void* map = ::mmap(nullptr, kTableBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    ::close(fd);
    return Failed("mmap");
  }
  return std::unique_ptr<CounterTable>(new CounterTable(fd, static_cast<CounterSlot*>(map)));
}

CounterTable::CounterTable(int fd, CounterSlot* slots) : fd_(fd), slots_(slots) {}

CounterTable::~CounterTable() {
  ::munmap(slots_, kTableBytes);
  ::close(fd_);
}

CounterTable::Found CounterTable::Find(ScopeKind kind, std::string_view id) {
  if (id.size() <= kCounterIdBytes) {
    const size_t start = Hash(kind, id) % kCounterTableSlots;
    for (size_t i = 0; i < kCounterTableSlots; ++i) {
      CounterSlot& slot = slots_[(start + i) % kCounterTableSlots];
      uint32_t state = slot.state.load(std::memory_order_acquire);
      if (state == kFree) {
        if (slot.state.compare_exchange_strong(state, kClaiming, std::memory_order_acq_rel)) {
          slot.kind = static_cast<uint8_t>(kind);
          slot.id_length = static_cast<uint8_t>(id.size());
          std::memcpy(slot.id, id.data(), id.size());
          slot.state.store(kLive, std::memory_order_release);
          return {&slot, false};
        }
      }
      // Another thread or process is writing this slot's key: it is live in a moment.
      while (state == kClaiming) {
        std::this_thread::yield();
        state = slot.state.load(std::memory_order_acquire);
      }
      if (Matches(slot, kind, id)) return {&slot, true};
    }
  }
  if (!full_logged_.exchange(true)) {
    std::fprintf(stderr,
                 "turnpike: counter table: no slot for a scope (id over %zu bytes, or %zu scopes): "
                 "such scopes are counted per process across a restart\n",
                 kCounterIdBytes, kCounterTableSlots);
  }
  return {};
}

}  // namespace turnpike::governance
