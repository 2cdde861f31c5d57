#include "store/call_record.h"

#include <utility>

namespace turnpike::store {
namespace {

// Every std::string member of CallRecord (one missing here is only reset, not reused).
constexpr std::array<std::string CallRecord::*, 7> kTextFields = {
    &CallRecord::request_id, &CallRecord::tenant_id, &CallRecord::key_id,      &CallRecord::model,
    &CallRecord::deployment, &CallRecord::error,     &CallRecord::request_body};

}  // namespace

CallRecord& CallBatch::Add() {
  if (size_ == rows_.size()) {
    rows_.emplace_back();
    return rows_[size_++];
  }
  CallRecord& slot = rows_[size_++];
  CallRecord fresh;
  for (std::string CallRecord::*field : kTextFields) {
    std::string& text = slot.*field;
    if (text.capacity() > kMaxKeptCapacity) {
      std::string().swap(text);  // frees it (assigning over it would keep the buffer)
      continue;
    }
    text.clear();
    (fresh.*field).swap(text);
  }
  slot = std::move(fresh);
  return slot;
}

}  // namespace turnpike::store
