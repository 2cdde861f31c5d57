#include "cache/canonical_json.h"

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <vector>

#include "common/json_escape.h"

namespace turnpike::cache {
namespace {

namespace json = boost::json;

// Doubles in this range that are integral print as integers; beyond it, a double's integer
// spelling would invent digits it does not have.
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53
constexpr size_t kInlineMembers = 16;
constexpr size_t kInitialCapacity = 512;  // a typical search request's canonical text fits

void AppendInteger(std::string& out, auto value) {
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, end);
}

void AppendDouble(std::string& out, double value) {
  if (!std::isfinite(value)) {  // Boost.JSON never produces these from text; be total anyway
    out += "null";
    return;
  }
  if (value == std::trunc(value) && std::fabs(value) <= kMaxExactInteger) {
    AppendInteger(out, static_cast<int64_t>(value));  // also turns -0 into 0
    return;
  }
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, end);
}

void AppendValue(std::string& out, const json::value& value);

void AppendObject(std::string& out, const json::object& object, const CanonicalOptions* top) {
  // Request objects are small: their member pointers are sorted on the stack, not the heap.
  const size_t capacity = object.size() + (top && top->defaults ? top->defaults->size() : 0);
  std::array<const json::key_value_pair*, kInlineMembers> inline_members;
  std::vector<const json::key_value_pair*> heap_members;
  const json::key_value_pair** members = inline_members.data();
  if (capacity > kInlineMembers) {
    heap_members.resize(capacity);
    members = heap_members.data();
  }
  size_t count = 0;
  for (const auto& member : object) {
    if (top &&
        std::find(top->ignored.begin(), top->ignored.end(), member.key()) != top->ignored.end()) {
      continue;
    }
    members[count++] = &member;
  }
  if (top && top->defaults) {
    for (const auto& member : *top->defaults) {
      if (!object.contains(member.key())) members[count++] = &member;
    }
  }
  std::sort(members, members + count,
            [](const auto* a, const auto* b) { return a->key() < b->key(); });
  out.push_back('{');
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonQuoted(out, members[i]->key());
    out.push_back(':');
    AppendValue(out, members[i]->value());
  }
  out.push_back('}');
}

void AppendValue(std::string& out, const json::value& value) {
  switch (value.kind()) {
    case json::kind::null:
      out += "null";
      return;
    case json::kind::bool_:
      out += value.get_bool() ? "true" : "false";
      return;
    case json::kind::int64:
      AppendInteger(out, value.get_int64());
      return;
    case json::kind::uint64:
      AppendInteger(out, value.get_uint64());
      return;
    case json::kind::double_:
      AppendDouble(out, value.get_double());
      return;
    case json::kind::string:
      AppendJsonQuoted(out, value.get_string());
      return;
    case json::kind::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& element : value.get_array()) {
        if (!first) out.push_back(',');
        first = false;
        AppendValue(out, element);
      }
      out.push_back(']');
      return;
    }
    case json::kind::object:
      AppendObject(out, value.get_object(), nullptr);
      return;
  }
}

bool IsRangeBound(std::string_view key) {
  return key == "gt" || key == "gte" || key == "lt" || key == "lte" || key == "from" || key == "to";
}

}  // namespace

std::string CanonicalJsonValue(const json::value& value, const CanonicalOptions& options) {
  std::string out;
  out.reserve(kInitialCapacity);
  if (value.is_object()) {
    AppendObject(out, value.get_object(), &options);
  } else {
    AppendValue(out, value);
  }
  return out;
}

Result<std::string> CanonicalJson(std::string_view text, const CanonicalOptions& options) {
  boost::system::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec) return Error{ErrorCode::kInvalidRequest, "request body is not valid JSON", ""};
  return CanonicalJsonValue(value, options);
}

bool UsesNowDateMath(const json::value& request) {
  if (request.is_array()) {
    for (const auto& element : request.get_array()) {
      if (UsesNowDateMath(element)) return true;
    }
    return false;
  }
  if (!request.is_object()) return false;
  for (const auto& member : request.get_object()) {
    const json::value& value = member.value();
    if (value.is_string() && IsRangeBound(member.key()) &&
        std::string_view(value.get_string()).starts_with("now")) {
      return true;
    }
    if (UsesNowDateMath(value)) return true;
  }
  return false;
}

}  // namespace turnpike::cache
