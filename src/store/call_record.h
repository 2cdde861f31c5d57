// One row of the call log: what a governed request did and cost. Made by the front door when
// the request ends (gateway/llm_handler.cc), carried through the worker's CallLogBuffer and
// the store thread's bounded queue, and written in batches by the store thread. The same
// record carries the spend the writer adds to the persisted counters, so the spend table and
// the call log are committed in one transaction and cannot disagree (store.h).
//
// CallBatch holds the records a worker collects between flushes. Its slots are reused: a
// cleared batch keeps its records and their strings' buffers, and the worker's buffer and the
// store thread hand batches back and forth, so once warm a row reuses buffers instead of
// allocating (only a string longer than any before it in that slot allocates), and no
// per-request string is made on a worker and freed on the store thread.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "governance/budget.h"

namespace turnpike::store {

struct CallRecord {
  int64_t time_ms = 0;  // unix milliseconds when the request arrived
  std::string request_id;
  std::string tenant_id;
  std::string key_id;  // the key's public id
  std::string model;   // the public model name asked for
  std::string deployment;
  int status = 0;     // what the client got (499: it left first)
  std::string error;  // ErrorCodeName, empty on success
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t cache_creation_tokens = 0;  // prompt tokens written to the provider's prompt cache
  int64_t cost_micros = 0;
  bool estimated = false;  // tokens estimated: the provider reported no usage
  bool unpriced = false;   // no price for the model: cost_micros is 0 but not free
  double ttft_ms = -1;     // -1: no token was streamed
  double total_ms = 0;
  int64_t overhead_us = -1;       // the gateway's own time; -1: never went upstream
  governance::MonthId month = 0;  // the budget month the cost was charged to
  std::string request_body;       // only for tenants that opted in (log_bodies)
  // A stand-in for rows the queue dropped (call_log.when_full): one per tenant, key and month
  // with their summed cost and tokens, request_id empty, error "log_rows_dropped", and
  // `dropped_rows` the number of requests it stands for. Spend is never dropped with a row.
  int64_t dropped_rows = 0;
};

// Rows written in one transaction, in order: spans into CallBatches.
using CallRecordSpans = std::span<const std::span<const CallRecord>>;

class CallBatch {
 public:
  // A slot for one more record, equal to a default CallRecord. Its strings keep the buffers of
  // the record that used the slot before, unless one grew past kMaxKeptCapacity (an opted-in
  // request body): that one is freed, so a batch does not hold on to large buffers.
  CallRecord& Add();

  std::span<const CallRecord> records() const { return {rows_.data(), size_}; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Forgets the records and keeps the slots.
  void Clear() { size_ = 0; }

  static constexpr size_t kMaxKeptCapacity = 1'024;

 private:
  std::vector<CallRecord> rows_;
  size_t size_ = 0;
};

}  // namespace turnpike::store
