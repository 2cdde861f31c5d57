#include "store/statements.h"

namespace turnpike::store {

std::string_view StoreOpName(StoreOp op) {
  switch (op) {
    case StoreOp::kMigrate:
      return "migrate";
    case StoreOp::kSnapshotLoad:
      return "snapshot_load";
    case StoreOp::kChangeCheck:
      return "change_check";
    case StoreOp::kAdminRead:
      return "admin_read";
    case StoreOp::kAdminWrite:
      return "admin_write";
    case StoreOp::kCallLogInsert:
      return "call_log_insert";
    case StoreOp::kCallLogIndex:
      return "call_log_index";
    case StoreOp::kCallLogRoute:
      return "call_log_route";
    case StoreOp::kSpendWrite:
      return "spend_write";
    case StoreOp::kTransaction:
      return "transaction";
    case StoreOp::kReconcile:
      return "reconcile";
    case StoreOp::kCallLogPurge:
      return "call_log_purge";
    case StoreOp::kCount:
      break;
  }
  return "unknown";
}

bool StatementCounts::AddPurpose(std::string_view name, StoreOp& op) {
  for (size_t i = 0; i < used_; ++i) {
    if (Name(static_cast<StoreOp>(i)) == name) {
      op = static_cast<StoreOp>(i);
      return true;
    }
  }
  if (used_ == kMaxPurposes) return false;
  names_[used_] = name;
  op = static_cast<StoreOp>(used_++);
  return true;
}

std::string_view StatementCounts::Name(StoreOp op) const {
  const auto i = static_cast<size_t>(op);
  if (i < static_cast<size_t>(StoreOp::kCount)) return StoreOpName(op);
  return i < used_ ? names_[i] : "unknown";
}

void StatementCounts::Render(observability::PrometheusWriter& w) const {
  w.Family("turnpike_store_statements_total",
           "Statements the store executed, by purpose (request path: none).",
           observability::MetricType::kCounter);
  for (size_t i = 0; i < used_; ++i) {
    const auto op = static_cast<StoreOp>(i);
    w.Sample("turnpike_store_statements_total", {{"op", Name(op)}}, static_cast<double>(value(op)));
  }
}

}  // namespace turnpike::store
