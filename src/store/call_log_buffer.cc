#include "store/call_log_buffer.h"

#include <map>
#include <tuple>

namespace turnpike::store {

CallRecord& CallLogBuffer::Add() {
  if (rows_.size() >= options_.batch_rows) Flush();
  return rows_.Add();
}

void CallLogBuffer::Flush(bool final) {
  if (rows_.empty()) return;
  const SubmitResult result = thread_.SubmitRecords(rows_, final);
  if (result == SubmitResult::kAccepted) {
    waiting_since_ = {};
    return;
  }
  const Clock::time_point now = Clock::now();
  if (result == SubmitResult::kFull && !options_.drop_when_full) {
    if (waiting_since_ == Clock::time_point{}) waiting_since_ = now;
    if (now - waiting_since_ < options_.max_wait && rows_.size() < options_.max_rows) return;
  }
  Drop();
  waiting_since_ = {};
}

void CallLogBuffer::Drop() {
  std::map<std::tuple<std::string, std::string, governance::MonthId>, CallRecord> standins;
  for (const CallRecord& row : rows_.records()) {
    CallRecord& s = standins[{row.tenant_id, row.key_id, row.month}];
    if (s.dropped_rows == 0) {
      s.time_ms = row.time_ms;
      s.tenant_id = row.tenant_id;
      s.key_id = row.key_id;
      s.month = row.month;
      s.error = "log_rows_dropped";
    }
    s.dropped_rows += row.dropped_rows > 0 ? row.dropped_rows : 1;
    s.prompt_tokens += row.prompt_tokens;
    s.completion_tokens += row.completion_tokens;
    s.cached_tokens += row.cached_tokens;
    s.cache_creation_tokens += row.cache_creation_tokens;
    s.cost_micros += row.cost_micros;
    s.estimated = s.estimated || row.estimated;
    s.unpriced = s.unpriced || row.unpriced;
  }
  uint64_t dropped = 0;
  for (const CallRecord& row : rows_.records()) {
    dropped += static_cast<uint64_t>(row.dropped_rows > 0 ? 0 : 1);
  }
  dropped_.Add(dropped);
  rows_.Clear();
  for (auto& [scope, standin] : standins) rows_.Add() = std::move(standin);
  // Stand-ins are few (one per tenant, key and month) and carry spend: queued past the bound.
  if (thread_.SubmitRecords(rows_, true) != SubmitResult::kAccepted) rows_.Clear();
}

}  // namespace turnpike::store
