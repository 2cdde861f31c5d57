#include "store/call_log_buffer.h"

#include <map>
#include <tuple>

namespace turnpike::store {

void CallLogBuffer::Add(const CallRecordView& r) {
  if (rows_.size() >= options_.batch_rows || rows_.text_bytes() >= options_.batch_text_bytes) {
    Flush();
  }
  rows_.Add(r);
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
    if (now - waiting_since_ < options_.max_wait && rows_.size() < options_.max_rows &&
        rows_.text_bytes() < 16 * options_.batch_text_bytes) {
      return;
    }
  }
  Drop();
  waiting_since_ = {};
}

void CallLogBuffer::Drop() {
  std::map<std::tuple<std::string, std::string, governance::MonthId>, CallRecord> standins;
  uint64_t dropped = 0;
  for (size_t i = 0; i < rows_.size(); ++i) {
    const CallRecordView row = rows_.record(i);
    CallRecord& s = standins[{std::string(row.tenant_id), std::string(row.key_id), row.month}];
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
    s.reasoning_tokens += row.reasoning_tokens;
    s.cost_micros += row.cost_micros;
    s.estimated = s.estimated || row.estimated;
    s.unpriced = s.unpriced || row.unpriced;
    dropped += static_cast<uint64_t>(row.dropped_rows > 0 ? 0 : 1);
  }
  dropped_.Add(dropped);
  rows_.Clear();
  for (const auto& [scope, standin] : standins) rows_.Add(ViewOf(standin));
  // Stand-ins are few (one per tenant, key and month) and carry spend: queued past the bound.
  if (thread_.SubmitRecords(rows_, true) != SubmitResult::kAccepted) rows_.Clear();
}

}  // namespace turnpike::store
