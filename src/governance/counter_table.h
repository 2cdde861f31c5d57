// CounterTable: the in-process counters' words in shared memory, so that a rolling restart's
// two processes (app/restart.h) admit against the same budget and rate words while both serve
// (docs/adr/0003-rolling-restart.md). A fixed table of slots in a memfd mapping, one per scope
// (kind, id), found by hash with linear probing; the old process hands the descriptor to its
// successor, which maps it and finds every scope's words where the old one left them.
//
// A slot is held: Find counts one holder per call, and Release (the scope's counters going away
// in that process: LocalCounters) gives it back. A slot nobody holds stays live, its words kept,
// so that a process that finds the scope again adopts them. Once three quarters of the slots
// are taken, a new scope takes the first such idle slot on its probe path instead of a free one
// (its words zeroed, its generation bumped), and every 1/16 of the table claimed after that a
// sweep frees the idle slots that end a run (those no probe path crosses), so keys made and
// deleted without end reuse slots instead of filling the table.
//
// Finding a live scope is lock-free (a CAS on the slot's word: state, holders and a generation
// that makes a stale match fail). Claiming a slot, rarer, takes the table's claim mutex, a
// robust process-shared one in the mapping's header: two processes claiming one scope at once
// get one slot, and a process killed while claiming leaves a slot the next claimer repairs.
// A scope whose id is too long, or that finds every slot held, gets no slot (Find answers null)
// and keeps private words: it is then counted per process again, and a log line says so once.
//
// The mapping starts with a header (magic and layout version, the mutex, the counts); a
// table of another layout (an older binary's) is refused by Open, and the caller starts a table
// of its own (app/serve_command.cc: counted per process for that one handover).
//
// Ownership: the table owns its mapping and descriptor; it must outlive every counter that
// points into it (LocalCounters::Share). Thread and process safety: Find, Release and the slots'
// words are safe from any thread of any process mapping the table; Open and the destructor are
// not.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "common/result.h"
#include "governance/counters.h"

namespace turnpike::governance {

inline constexpr size_t kCounterTableSlots = 16384;  // 2 MiB, after a 4 KiB header
inline constexpr size_t kCounterIdBytes = 86;

// One scope's words. Zero-filled memory is a valid free slot with zero counters.
struct alignas(64) CounterSlot {
  // Bits 0-1 the state (free, claiming, live), 2-15 the holders, 16-31 the generation.
  std::atomic<uint32_t> word;
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
    CounterSlot* slot = nullptr;  // null: no slot (id too long, every slot held)
    bool existed = false;         // live before: its words are the scope's (adopt them)
  };
  // The scope's slot, held once more (Release gives the hold back).
  Found Find(ScopeKind kind, std::string_view id);
  // Gives back one hold of a slot Find returned.
  static void Release(CounterSlot& slot);

  // Slots not free now; idle slots given to another scope, and made free again, since the
  // table was made (over every process that mapped it).
  size_t occupied() const;
  uint64_t reclaimed() const;
  uint64_t freed() const;

 private:
  struct Header;
  CounterTable(int fd, void* map);
  Found Claim(ScopeKind kind, std::string_view id, size_t start);
  void Sweep();  // under the claim mutex
  Found Full();

  const int fd_;
  Header* const header_;
  CounterSlot* const slots_;
  std::atomic<bool> full_logged_{false};
};

}  // namespace turnpike::governance
