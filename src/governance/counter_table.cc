#include "governance/counter_table.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace turnpike::governance {

// The mapping's first page. `magic` is written last at creation, so a table is either whole or
// refused.
struct CounterTable::Header {
  uint64_t magic;
  pthread_mutex_t claim_mu;         // robust, process-shared: held while a slot is claimed
  std::atomic<uint64_t> occupied;   // slots not free (changed under claim_mu)
  std::atomic<uint64_t> swept_at;   // `occupied` after the last sweep (under claim_mu)
  std::atomic<uint64_t> reclaimed;  // idle slots given to another scope
  std::atomic<uint64_t> freed;      // idle slots made free by sweeps
};

namespace {

constexpr uint64_t kMagic = 0x7470'6374'7200'0002;  // this layout's mark, version 2 in its low bits
constexpr size_t kHeaderBytes = 4096;
constexpr size_t kTableBytes = kHeaderBytes + kCounterTableSlots * sizeof(CounterSlot);
constexpr size_t kNone = static_cast<size_t>(-1);
// Past this many slots not free, a new scope reuses an idle slot on its path before a free
// one, and the table is swept whenever it has grown by kSweepEvery since the last sweep.
constexpr size_t kCrowded = kCounterTableSlots / 4 * 3;
constexpr size_t kSweepEvery = kCounterTableSlots / 16;

// A slot's word.
constexpr uint32_t kFree = 0;
constexpr uint32_t kClaiming = 1;
constexpr uint32_t kLive = 2;
constexpr uint32_t kStateMask = 3;
constexpr uint32_t kHolder = 1u << 2;
constexpr uint32_t kMaxHolders = (1u << 14) - 1;
constexpr uint32_t kGenerationMask = 0xFFFF'0000u;
constexpr uint32_t kGeneration = 1u << 16;
// The kind of a slot a dead claimer left half-written: no scope has it.
constexpr uint8_t kNoKind = 0xFF;

static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared words must be lock-free");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared words must be lock-free");

constexpr uint32_t State(uint32_t word) { return word & kStateMask; }
constexpr uint32_t Holders(uint32_t word) { return (word >> 2) & kMaxHolders; }

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

// One more hold on `slot`, whose key matched while its word was `word` (live). False when the
// slot changed hands meanwhile (its generation or state moved) or is held by too many.
bool TryHold(CounterSlot& slot, uint32_t word) {
  const uint32_t generation = word & kGenerationMask;
  while (State(word) == kLive && (word & kGenerationMask) == generation &&
         Holders(word) < kMaxHolders) {
    if (slot.word.compare_exchange_weak(word, word + kHolder, std::memory_order_acq_rel,
                                        std::memory_order_acquire)) {
      return true;
    }
  }
  return false;
}

// The claim mutex. A previous owner that died holding it leaves it to be made consistent; what
// it left half-done (a slot in the claiming state) the claim loop repairs.
class ClaimLock {
 public:
  explicit ClaimLock(pthread_mutex_t* mu) : mu_(mu) {
    if (::pthread_mutex_lock(mu_) == EOWNERDEAD) {
      ::pthread_mutex_consistent(mu_);
    }
  }
  ~ClaimLock() { ::pthread_mutex_unlock(mu_); }
  ClaimLock(const ClaimLock&) = delete;
  ClaimLock& operator=(const ClaimLock&) = delete;

 private:
  pthread_mutex_t* const mu_;
};

Error Failed(const std::string& what) {
  return Error{ErrorCode::kInternal, "counter table: " + what + ": " + std::strerror(errno), ""};
}

}  // namespace

Result<std::unique_ptr<CounterTable>> CounterTable::Open(int fd) {
  const bool made = fd < 0;
  if (made) {
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
      return Error{ErrorCode::kInternal,
                   "counter table: the inherited table has another size (another layout)", ""};
    }
  }
  void* map = ::mmap(nullptr, kTableBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    ::close(fd);
    return Failed("mmap");
  }
  auto* header = static_cast<Header*>(map);
  if (made) {
    pthread_mutexattr_t attr;
    ::pthread_mutexattr_init(&attr);
    ::pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    ::pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    const int rc = ::pthread_mutex_init(&header->claim_mu, &attr);
    ::pthread_mutexattr_destroy(&attr);
    if (rc != 0) {
      ::munmap(map, kTableBytes);
      ::close(fd);
      errno = rc;
      return Failed("pthread_mutex_init");
    }
    std::atomic_ref<uint64_t>(header->magic).store(kMagic, std::memory_order_release);
  } else if (std::atomic_ref<uint64_t>(header->magic).load(std::memory_order_acquire) != kMagic) {
    ::munmap(map, kTableBytes);
    ::close(fd);
    return Error{ErrorCode::kInternal, "counter table: the inherited table has another layout", ""};
  }
  return std::unique_ptr<CounterTable>(new CounterTable(fd, map));
}

CounterTable::CounterTable(int fd, void* map)
    : fd_(fd),
      header_(static_cast<Header*>(map)),
      slots_(reinterpret_cast<CounterSlot*>(static_cast<char*>(map) + kHeaderBytes)) {
  static_assert(sizeof(Header) <= kHeaderBytes);
}

CounterTable::~CounterTable() {
  ::munmap(header_, kTableBytes);
  ::close(fd_);
}

size_t CounterTable::occupied() const {
  return static_cast<size_t>(header_->occupied.load(std::memory_order_relaxed));
}

uint64_t CounterTable::reclaimed() const {
  return header_->reclaimed.load(std::memory_order_relaxed);
}

uint64_t CounterTable::freed() const { return header_->freed.load(std::memory_order_relaxed); }

void CounterTable::Sweep() {
  // An idle slot whose next slot is free lies on no live scope's probe path (a path crossing it
  // would have to cross the free slot too), so it can be free again; then so can the one
  // before it. Under the claim mutex no slot is claimed meanwhile; a Find that holds an idle
  // slot first makes the CAS fail, which ends that run.
  for (size_t f = 0; f < kCounterTableSlots; ++f) {
    if (State(slots_[f].word.load(std::memory_order_acquire)) != kFree) continue;
    for (size_t back = 1; back < kCounterTableSlots; ++back) {
      CounterSlot& slot = slots_[(f + kCounterTableSlots - back) % kCounterTableSlots];
      uint32_t word = slot.word.load(std::memory_order_acquire);
      if (State(word) != kLive || Holders(word) != 0) break;
      const uint32_t freed = (word & kGenerationMask) + kGeneration;  // state bits: free
      if (!slot.word.compare_exchange_strong(word, freed, std::memory_order_acq_rel)) break;
      header_->occupied.fetch_sub(1, std::memory_order_relaxed);
      header_->freed.fetch_add(1, std::memory_order_relaxed);
    }
  }
  header_->swept_at.store(header_->occupied.load(std::memory_order_relaxed),
                          std::memory_order_relaxed);
}

CounterTable::Found CounterTable::Find(ScopeKind kind, std::string_view id) {
  if (id.size() > kCounterIdBytes) return Full();
  const size_t start = Hash(kind, id) % kCounterTableSlots;
  for (size_t i = 0; i < kCounterTableSlots; ++i) {
    CounterSlot& slot = slots_[(start + i) % kCounterTableSlots];
    const uint32_t word = slot.word.load(std::memory_order_acquire);
    // Free: the end of the scope's path. Claiming: another claim runs (or its claimer died);
    // both are settled under the claim mutex.
    if (State(word) != kLive) break;
    if (Matches(slot, kind, id) && TryHold(slot, word)) return {&slot, true};
  }
  return Claim(kind, id, start);
}

CounterTable::Found CounterTable::Claim(ScopeKind kind, std::string_view id, size_t start) {
  ClaimLock lock(&header_->claim_mu);
  // Again after a lost race with a Find that held the idle slot chosen.
  for (;;) {
    size_t free_at = kNone;
    size_t idle_at = kNone;
    for (size_t i = 0; i < kCounterTableSlots; ++i) {
      const size_t at = (start + i) % kCounterTableSlots;
      CounterSlot& slot = slots_[at];
      uint32_t word = slot.word.load(std::memory_order_acquire);
      if (State(word) == kClaiming) {
        // Claims run under the mutex this thread holds: a claimer died mid-claim. Its slot
        // becomes an idle one that matches no scope.
        slot.kind = kNoKind;
        slot.id_length = 0;
        word = ((word & kGenerationMask) + kGeneration) | kLive;
        slot.word.store(word, std::memory_order_release);
      }
      if (State(word) == kFree) {
        free_at = at;
        break;
      }
      if (Matches(slot, kind, id)) {
        if (TryHold(slot, word)) return {&slot, true};
        return Full();  // held by too many (only the holders can change under the mutex)
      }
      if (Holders(word) == 0 && idle_at == kNone) idle_at = at;
    }
    const size_t occupied_now = occupied();
    const bool crowded = occupied_now >= kCrowded;
    if (crowded && idle_at == kNone &&
        occupied_now >= header_->swept_at.load(std::memory_order_relaxed) + kSweepEvery) {
      Sweep();
      continue;  // slots on the path may be free now
    }
    const size_t at = (free_at == kNone || (crowded && idle_at != kNone)) ? idle_at : free_at;
    if (at == kNone) return Full();
    CounterSlot& slot = slots_[at];
    uint32_t word = slot.word.load(std::memory_order_acquire);
    const bool reuse = State(word) == kLive;
    if (reuse && Holders(word) != 0) continue;
    const uint32_t generation = (word & kGenerationMask) + (reuse ? kGeneration : 0);
    if (!slot.word.compare_exchange_strong(word, generation | kClaiming,
                                           std::memory_order_acq_rel)) {
      continue;
    }
    slot.kind = static_cast<uint8_t>(kind);
    slot.id_length = static_cast<uint8_t>(id.size());
    std::memcpy(slot.id, id.data(), id.size());
    slot.committed.store(0, std::memory_order_relaxed);
    slot.spent.store(0, std::memory_order_relaxed);
    slot.requests_tat.store(0, std::memory_order_relaxed);
    slot.tokens_tat.store(0, std::memory_order_relaxed);
    slot.word.store(generation | kHolder | kLive, std::memory_order_release);
    (reuse ? header_->reclaimed : header_->occupied).fetch_add(1, std::memory_order_relaxed);
    return {&slot, false};
  }
}

void CounterTable::Release(CounterSlot& slot) {
  uint32_t word = slot.word.load(std::memory_order_relaxed);
  while (Holders(word) > 0 &&
         !slot.word.compare_exchange_weak(word, word - kHolder, std::memory_order_acq_rel,
                                          std::memory_order_relaxed)) {
  }
}

CounterTable::Found CounterTable::Full() {
  if (!full_logged_.exchange(true)) {
    std::fprintf(stderr,
                 "turnpike: counter table: no slot for a scope (id over %zu bytes, or all %zu "
                 "slots held): such scopes are counted per process across a restart\n",
                 kCounterIdBytes, kCounterTableSlots);
  }
  return {};
}

}  // namespace turnpike::governance
