// One row of the call log: what a governed request did and cost. Made by the core when a
// governed request ends (core/worker_core.cc), carried through the worker's CallLogBuffer and
// the store thread's bounded queue, and written in batches by the store thread. The same
// record carries the spend the writer adds to the persisted counters, so the spend table and
// the call log are committed in one transaction and cannot disagree (call_log.h).
//
// A record has two forms of one template: CallRecord owns its texts (a row read back, a
// stand-in, a test's row); CallRecordView views them (a row being made, or read from a
// batch).
//
// CallBatch holds the records a worker collects between flushes, packed for the trip to the
// store thread, which reads every byte a worker wrote on another core:
//   - a record's numbers inline: with the rest, an entry of three cache lines;
//   - its route (tenant, key, model, deployment, budget month) as an index into the batch's
//     routes, copied in only when it differs from the previous record's (it mostly does not);
//   - its texts (request id, error, opted-in body) appended to one text buffer.
// A cleared batch keeps its capacity (records, route strings, text buffer up to
// kMaxKeptText), and the worker's buffer and the store thread hand batches back and forth,
// so once warm a record allocates nothing.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "governance/budget.h"

namespace turnpike::store {

// What the response cache did for a request (call_log.cache_status, a small integer: these
// values never change meaning; a new one is appended).
enum class CacheStatus : uint8_t {
  kNone = 0,       // no cache was consulted (the default for requests that set none)
  kMiss = 1,       // looked up, not found: the answer was made and may have been stored
  kHit = 2,        // answered from the cache
  kBypass = 3,     // the cache was skipped (the request or its tenant asked for no cache)
  kCoalesced = 4,  // waited for another request's identical answer (single flight)
};

// "miss", "hit", "bypass", "coalesced"; "" for kNone.
std::string_view CacheStatusName(CacheStatus status);

// Named bits of call_log.flags (a bit set; 0 for requests that set none). A bit never changes
// meaning; a new one takes the next free bit.
namespace call_flags {
inline constexpr uint32_t kStreamed = 1u << 0;       // the answer was streamed to the client
inline constexpr uint32_t kFailedOver = 1u << 1;     // an attempt failed and another was made
inline constexpr uint32_t kCancelled = 1u << 2;      // cancelled (POST .../cancel or a signal)
inline constexpr uint32_t kGuardBlocked = 1u << 3;   // a guard ended the answer early
inline constexpr uint32_t kMemoryTrimmed = 1u << 4;  // conversation memory was cut to fit
}  // namespace call_flags

// A record's numbers.
struct CallFacts {
  int64_t time_ms = 0;  // unix milliseconds when the request arrived
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t cache_creation_tokens = 0;  // prompt tokens written to the provider's prompt cache
  int64_t reasoning_tokens = 0;       // completion tokens spent reasoning (0: none reported)
  int64_t cost_micros = 0;
  double ttft_ms = -1;  // -1: no token was streamed
  double total_ms = 0;
  int64_t overhead_us = -1;  // the gateway's own time; -1: never went upstream
  // A stand-in for rows the queue dropped (call_log.when_full): one per tenant, key and month
  // with their summed cost and tokens, request_id empty, error "log_rows_dropped", and
  // `dropped_rows` the number of requests it stands for. Spend is never dropped with a row.
  int64_t dropped_rows = 0;
  int64_t agent_version = 0;       // the agent config's version (0: not an agent turn)
  int64_t guard_replacements = 0;  // spans a guard replaced in the answer
  governance::MonthId month = 0;   // the budget month the cost was charged to
  int status = 0;                  // what the client got (499: it left first)
  uint32_t flags = 0;              // call_flags bits
  CacheStatus cache_status = CacheStatus::kNone;
  bool estimated = false;  // tokens estimated: the provider reported no usage
  bool unpriced = false;   // no price for the model: cost_micros is 0 but not free
};

template <typename Text>
struct BasicCallRecord : CallFacts {
  Text request_id;
  Text tenant_id;
  Text key_id;  // the key's public id
  Text model;   // the public model name asked for
  Text deployment;
  Text error;         // ErrorCodeName, empty on success
  Text request_body;  // only for tenants that opted in (log_bodies)
  Text agent_id;      // the agent of an agent turn; empty otherwise
  Text response_id;   // the response id the client was given (Responses API); empty if none
};

using CallRecord = BasicCallRecord<std::string>;
using CallRecordView = BasicCallRecord<std::string_view>;

// `r` with its texts viewed, or copied.
CallRecordView ViewOf(const CallRecord& r);
CallRecord RecordOf(const CallRecordView& r);

// A record's route, as views (into a record or a batch).
struct RouteView {
  std::string_view tenant_id;
  std::string_view key_id;
  std::string_view model;
  std::string_view deployment;
  governance::MonthId month = 0;

  bool operator==(const RouteView&) const = default;
};

inline RouteView RouteOf(const CallRecordView& r) {
  return {r.tenant_id, r.key_id, r.model, r.deployment, r.month};
}

class CallBatch {
 public:
  // Texts kept across Clear; a larger buffer (opted-in request bodies) is freed.
  static constexpr size_t kMaxKeptText = 1 << 20;

  // Copies `r` in.
  void Add(const CallRecordView& r);

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  size_t capacity() const { return entries_.capacity(); }
  // Bytes of text held (request ids, errors, bodies), and the room for them.
  size_t text_bytes() const { return text_.size(); }
  size_t text_capacity() const { return text_.capacity(); }

  // Record `i`, viewing the batch (valid until the batch changes); or only its numbers.
  CallRecordView record(size_t i) const;
  const CallFacts& facts(size_t i) const { return entries_[i]; }
  // The index of record `i`'s route: records with the same index share their route (records
  // with different ones may too).
  size_t route_of(size_t i) const { return entries_[i].route; }
  RouteView route(size_t index) const;

  // Forgets the records and keeps the room they took.
  void Clear();

 private:
  // Where a text is in text_.
  struct TextRange {
    uint32_t offset = 0;
    uint32_t size = 0;
  };
  struct Entry : CallFacts {
    uint32_t route = 0;
    TextRange request_id;
    TextRange error;
    TextRange request_body;
    TextRange agent_id;
    TextRange response_id;
  };
  struct Route {
    std::string tenant_id;
    std::string key_id;
    std::string model;
    std::string deployment;
    governance::MonthId month = 0;
  };

  uint32_t RouteFor(const CallRecordView& r);
  TextRange Append(std::string_view text);
  std::string_view Text(TextRange range) const { return {text_.data() + range.offset, range.size}; }

  std::vector<Entry> entries_;
  std::vector<Route> routes_;  // slots; the first routes_used_ are this batch's
  size_t routes_used_ = 0;
  std::string text_;
};

// A range of one batch's records.
struct CallBatchPart {
  const CallBatch* batch = nullptr;
  size_t begin = 0;
  size_t end = 0;

  size_t size() const { return end - begin; }
};

// Rows written in one transaction, in order.
using CallBatchParts = std::span<const CallBatchPart>;

}  // namespace turnpike::store
