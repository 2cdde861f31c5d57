// Publishing GovernanceSnapshots to worker threads (read-copy-update, like userver's
// rcu::Variable and Envoy's thread-local slots).
//
// SnapshotCell is the one shared slot: a writer (the admin API, a change signal) publishes a
// new snapshot; any thread may load the current one. It is std::atomic<std::shared_ptr<const
// GovernanceSnapshot>> (libstdc++ 12 implements it with a lock bit inside the atomic, held for
// a few instructions per load; no thread ever waits on I/O there) plus a version counter.
//
// SnapshotReader is a worker's view of a cell. Current() costs one acquire load of the version
// (a read-only shared cache line, so workers do not contend) and, only after a publish, one
// Load() from the cell. The shared_ptr it returns shares a control block private to the worker
// (aliasing constructor), so copying it per request touches no cache line another worker
// writes. A request copies Current() once and keeps it to its end.
//
// Ownership: the cell owns the current snapshot; a snapshot lives until its last holder lets
// go. A SnapshotReader must not outlive its cell.
// Thread safety: SnapshotCell: any thread. SnapshotReader: one thread (its worker).
// ThreadSanitizer with GCC 12's libstdc++ reports a race inside std::atomic<std::shared_ptr>
// (its lock is a bit in the pointer word, invisible to TSan: google/sanitizers#1558); that
// report is a false positive, the rest of governance/ runs TSan-clean.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "governance/snapshot.h"

namespace turnpike::governance {

class SnapshotCell {
 public:
  explicit SnapshotCell(SnapshotPtr initial) : current_(std::move(initial)) {}
  SnapshotCell(const SnapshotCell&) = delete;
  SnapshotCell& operator=(const SnapshotCell&) = delete;

  // Makes `snapshot` current; requests already running keep the one they took.
  void Publish(SnapshotPtr snapshot);

  SnapshotPtr Load() const { return current_.load(std::memory_order_acquire); }
  // Increases by one per Publish.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

 private:
  std::atomic<SnapshotPtr> current_;
  std::atomic<uint64_t> version_{0};
};

class SnapshotReader {
 public:
  explicit SnapshotReader(const SnapshotCell& cell);

  // The cell's current snapshot (as of the last publish this thread has seen).
  const SnapshotPtr& Current() {
    uint64_t version = cell_.version();
    if (version != version_) Refresh(version);
    return local_;
  }

 private:
  void Refresh(uint64_t version);

  const SnapshotCell& cell_;
  uint64_t version_ = 0;
  SnapshotPtr local_;  // aliases a worker-private holder of the cell's shared_ptr
};

}  // namespace turnpike::governance
