// CounterTable: the in-process counters' words in shared memory, so that a rolling restart's
// two processes (app/restart.h) admit against the same budget and rate words while both serve
// (docs/adr/0003-rolling-restart.md). A fixed table of slots in a memfd mapping, one per scope
// (kind, id), found by hash with linear probing; the old process hands the descriptor to its
// successor, which maps it and finds every scope's words where the old one left them.
//
// A slot is claimed once (free -> claiming -> live, by CAS) and never freed: a scope that goes
// away keeps its slot until the table's last process exits. A scope whose id is too long, or
// that finds the table full, gets no slot (Find answers null) and keeps private words: it is
// then counted per process again, and a log line says so once.
//
// Ownership: the table owns its mapping and descriptor; it must outlive every counter that
// points into it (LocalCounters::Share). Thread and process safety: Find and the slots' words
// are safe from any thread of any process mapping the table; Open and the destructor are not.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "common/result.h"
#include "governance/counters.h"

namespace turnpike::governance {

inline constexpr size_t kCounterTableSlots = 16384;  // 2 MiB
inline constexpr size_t kCounterIdBytes = 86;

// One scope's words. Zero-filled memory is a valid free slot with zero counters.
struct alignas(64) CounterSlot {
  std::atomic<uint32_t> state;  // kFree, kClaiming, kLive
  uint8_t kind;
  uint8_t id_length;
  char id[kCounterIdBytes];
  std::atomic<uint64_t> committed;  // LocalBudgetCounter's words
  std::atomic<uint64_t> spent;
  std::atomic<int64_t> requests_tat;  // GcraLimiter's
  std::atomic<int64_t> tokens_tat;
};

class CounterTable {
 public:
  // Maps `fd` (a table another process made and handed over) or, with fd < 0, a new one.
  // Errors: kInternal when the descriptor cannot be made or mapped, or has the wrong size.
  static Result<std::unique_ptr<CounterTable>> Open(int fd);
  ~CounterTable();
  CounterTable(const CounterTable&) = delete;
  CounterTable& operator=(const CounterTable&) = delete;

  // The descriptor to hand over (close-on-exec: the restart clears the flag in its child).
  int fd() const { return fd_; }

  struct Found {
    CounterSlot* slot = nullptr;  // null: no slot (id too long, table full)
    bool existed = false;         // another process (or an earlier call) made it live
  };
  Found Find(ScopeKind kind, std::string_view id);

 private:
  CounterTable(int fd, CounterSlot* slots);

  const int fd_;
  CounterSlot* const slots_;
  std::atomic<bool> full_logged_{false};
};

}  // namespace turnpike::governance
