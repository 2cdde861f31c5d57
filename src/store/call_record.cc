#include "store/call_record.h"

#include <utility>

namespace turnpike::store {
namespace {

void Clear(std::string& text) {
  if (text.capacity() > CallBatch::kMaxKeptCapacity) {
    std::string().swap(text);  // frees it
  } else {
    text.clear();  // keeps the buffer for the next record
  }
}

// Every field back to its default. A field added to CallRecord must be reset here: the
// static_assert stops the build until this function has been looked at.
void Reset(CallRecord& r) {
  static_assert(sizeof(CallRecord) == 328, "CallRecord changed: reset the new field in Reset()");
  static const CallRecord kDefaults{};
  r.time_ms = kDefaults.time_ms;
  Clear(r.request_id);
  Clear(r.tenant_id);
  Clear(r.key_id);
  Clear(r.model);
  Clear(r.deployment);
  r.status = kDefaults.status;
  Clear(r.error);
  r.prompt_tokens = kDefaults.prompt_tokens;
  r.completion_tokens = kDefaults.completion_tokens;
  r.cached_tokens = kDefaults.cached_tokens;
  r.cache_creation_tokens = kDefaults.cache_creation_tokens;
  r.cost_micros = kDefaults.cost_micros;
  r.estimated = kDefaults.estimated;
  r.unpriced = kDefaults.unpriced;
  r.ttft_ms = kDefaults.ttft_ms;
  r.total_ms = kDefaults.total_ms;
  r.overhead_us = kDefaults.overhead_us;
  r.month = kDefaults.month;
  Clear(r.request_body);
  r.dropped_rows = kDefaults.dropped_rows;
}

}  // namespace

CallRecord& CallBatch::Add() {
  if (size_ == rows_.size()) {
    rows_.emplace_back();
  } else {
    Reset(rows_[size_]);
  }
  return rows_[size_++];
}

}  // namespace turnpike::store
