#include "store/call_record.h"

#include <limits>

namespace turnpike::store {
namespace {

template <typename To, typename From>
BasicCallRecord<To> Convert(const BasicCallRecord<From>& r) {
  BasicCallRecord<To> out;
  static_cast<CallFacts&>(out) = r;
  out.request_id = To(r.request_id);
  out.tenant_id = To(r.tenant_id);
  out.key_id = To(r.key_id);
  out.model = To(r.model);
  out.deployment = To(r.deployment);
  out.error = To(r.error);
  out.request_body = To(r.request_body);
  out.agent_id = To(r.agent_id);
  out.response_id = To(r.response_id);
  return out;
}

}  // namespace

CallRecordView ViewOf(const CallRecord& r) { return Convert<std::string_view>(r); }
CallRecord RecordOf(const CallRecordView& r) { return Convert<std::string>(r); }

void CallBatch::Add(const CallRecordView& r) {
  // The store thread reads every entry a worker wrote, on another core: keep it to three lines
  // (two until the agent and cache fields of schema 8).
  static_assert(sizeof(Entry) <= 192, "a batch entry grew past three cache lines");
  Entry& e = entries_.emplace_back();
  static_cast<CallFacts&>(e) = r;
  e.route = RouteFor(r);
  e.request_id = Append(r.request_id);
  e.error = Append(r.error);
  e.request_body = Append(r.request_body);
  e.agent_id = Append(r.agent_id);
  e.response_id = Append(r.response_id);
}

uint32_t CallBatch::RouteFor(const CallRecordView& r) {
  if (routes_used_ > 0 && route(routes_used_ - 1) == RouteOf(r)) {
    return static_cast<uint32_t>(routes_used_ - 1);
  }
  if (routes_used_ == routes_.size()) routes_.emplace_back();
  Route& route = routes_[routes_used_];  // a reused slot: assigning keeps its strings' buffers
  route.tenant_id.assign(r.tenant_id);
  route.key_id.assign(r.key_id);
  route.model.assign(r.model);
  route.deployment.assign(r.deployment);
  route.month = r.month;
  return static_cast<uint32_t>(routes_used_++);
}

CallBatch::TextRange CallBatch::Append(std::string_view text) {
  if (text.empty()) return {};
  // CallLogBuffer hands a batch over long before its texts near 4 GiB; a text past that is
  // not kept rather than mis-addressed.
  if (text_.size() + text.size() > std::numeric_limits<uint32_t>::max()) return {};
  const TextRange range{static_cast<uint32_t>(text_.size()), static_cast<uint32_t>(text.size())};
  text_.append(text);
  return range;
}

CallRecordView CallBatch::record(size_t i) const {
  const Entry& e = entries_[i];
  const Route& route = routes_[e.route];
  CallRecordView r;
  static_cast<CallFacts&>(r) = e;
  r.request_id = Text(e.request_id);
  r.tenant_id = route.tenant_id;
  r.key_id = route.key_id;
  r.model = route.model;
  r.deployment = route.deployment;
  r.error = Text(e.error);
  r.request_body = Text(e.request_body);
  r.agent_id = Text(e.agent_id);
  r.response_id = Text(e.response_id);
  return r;
}

RouteView CallBatch::route(size_t index) const {
  const Route& r = routes_[index];
  return {r.tenant_id, r.key_id, r.model, r.deployment, r.month};
}

void CallBatch::Clear() {
  entries_.clear();
  routes_used_ = 0;
  if (text_.capacity() > kMaxKeptText) {
    std::string().swap(text_);  // frees it
  } else {
    text_.clear();
  }
}

std::string_view CacheStatusName(CacheStatus status) {
  switch (status) {
    case CacheStatus::kMiss:
      return "miss";
    case CacheStatus::kHit:
      return "hit";
    case CacheStatus::kBypass:
      return "bypass";
    case CacheStatus::kCoalesced:
      return "coalesced";
    case CacheStatus::kNone:
      break;
  }
  return "";
}

}  // namespace turnpike::store
