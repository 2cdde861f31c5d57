#include "governance/snapshot_cell.h"

namespace turnpike::governance {

void SnapshotCell::Publish(SnapshotPtr snapshot) {
  // The pointer is stored before the version moves, so a reader that sees the new version
  // loads this snapshot or a newer one.
  current_.store(std::move(snapshot), std::memory_order_release);
  version_.fetch_add(1, std::memory_order_acq_rel);
}

SnapshotReader::SnapshotReader(const SnapshotCell& cell) : cell_(cell) { Refresh(cell_.version()); }

void SnapshotReader::Refresh(uint64_t version) {
  // A worker-private control block: request copies of local_ count here, not on the
  // snapshot's own (shared by every worker) control block.
  auto holder = std::make_shared<SnapshotPtr>(cell_.Load());
  const GovernanceSnapshot* snapshot = holder->get();
  local_ = SnapshotPtr(std::move(holder), snapshot);
  version_ = version;
}

}  // namespace turnpike::governance
