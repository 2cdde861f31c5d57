#include "cache/envelope.h"

#include <charconv>
#include <cstring>

namespace turnpike::cache {
namespace {

// Per-entry bookkeeping beyond the strings (the envelope, its control block, the L1 node and
// its map slot, the key's inline bytes in the slot), so many tiny entries cannot exceed the
// byte cap by their overhead.
constexpr size_t kEntryOverhead = 192 + L1Slot::kInlineId;
constexpr uint32_t kEncodingVersion = 1;

size_t SkipString(std::string_view s, size_t i) {  // i at the opening quote
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return s.size();
}

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
  return i;
}

// Skips one value starting at i (no validation: the body is our own rendered JSON).
size_t SkipValue(std::string_view s, size_t i) {
  if (i >= s.size()) return i;
  if (s[i] == '"') return SkipString(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') {
        i = SkipString(s, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return i;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' &&
         s[i] != '\r' && s[i] != '\t') {
    ++i;
  }
  return i;
}

template <typename T>
void Put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // little-endian hosts only (x86-64, aarch64)
  out.append(bytes, sizeof(T));
}

template <typename T>
bool Get(std::string_view& in, T& value) {
  if (in.size() < sizeof(T)) return false;
  std::memcpy(&value, in.data(), sizeof(T));
  in.remove_prefix(sizeof(T));
  return true;
}

}  // namespace

size_t Envelope::Charge() const {
  return kEntryOverhead + content_type.size() + body.size() + held_bytes;
}

TookSpan FindTook(std::string_view body) {
  size_t i = SkipSpace(body, 0);
  if (i >= body.size() || body[i] != '{') return {};
  ++i;
  while (true) {
    i = SkipSpace(body, i);
    if (i >= body.size() || body[i] != '"') return {};
    const size_t key_end = SkipString(body, i);
    const bool is_took = body.substr(i, key_end - i) == "\"took\"";
    i = SkipSpace(body, key_end);
    if (i >= body.size() || body[i] != ':') return {};
    i = SkipSpace(body, i + 1);
    const size_t value_end = SkipValue(body, i);
    if (is_took) {
      size_t digits = i;
      while (digits < value_end && body[digits] >= '0' && body[digits] <= '9') ++digits;
      if (digits == i || digits != value_end) return {};  // not a plain non-negative integer
      return {static_cast<uint32_t>(i), static_cast<uint32_t>(value_end - i)};
    }
    i = SkipSpace(body, value_end);
    if (i >= body.size() || body[i] != ',') return {};
    ++i;
  }
}

TookParts RestampTook(const Envelope& envelope, int64_t took_ms) {
  TookParts parts;
  const std::string_view body = envelope.body;
  if (envelope.took_offset == kNoTook ||
      size_t{envelope.took_offset} + envelope.took_length > body.size()) {
    parts.prefix = body;
    return parts;
  }
  auto [end, ec] = std::to_chars(parts.digits, parts.digits + sizeof(parts.digits), took_ms);
  parts.digits_length = static_cast<uint8_t>(end - parts.digits);
  parts.prefix = body.substr(0, envelope.took_offset);
  parts.suffix = body.substr(envelope.took_offset + envelope.took_length);
  return parts;
}

std::string RestampedBody(const Envelope& envelope, int64_t took_ms) {
  TookParts parts = RestampTook(envelope, took_ms);
  std::string out;
  out.reserve(parts.prefix.size() + parts.number().size() + parts.suffix.size());
  out += parts.prefix;
  out += parts.number();
  out += parts.suffix;
  return out;
}

std::string Encode(const Envelope& envelope) {
  std::string out;
  out.reserve(40 + envelope.content_type.size() + envelope.body.size());
  Put(out, kEncodingVersion);
  Put(out, envelope.generation);
  Put(out, envelope.expires_at_ms);
  Put(out, envelope.status);
  Put(out, envelope.took_offset);
  Put(out, envelope.took_length);
  Put(out, static_cast<uint32_t>(envelope.content_type.size()));
  Put(out, static_cast<uint32_t>(envelope.body.size()));
  out += envelope.content_type;
  out += envelope.body;
  return out;
}

std::optional<Envelope> Decode(std::string_view in) {
  Envelope e;
  uint32_t version = 0, type_size = 0, body_size = 0;
  if (!Get(in, version) || version != kEncodingVersion || !Get(in, e.generation) ||
      !Get(in, e.expires_at_ms) || !Get(in, e.status) || !Get(in, e.took_offset) ||
      !Get(in, e.took_length) || !Get(in, type_size) || !Get(in, body_size)) {
    return std::nullopt;
  }
  if (in.size() != size_t{type_size} + body_size) return std::nullopt;
  e.content_type.assign(in.substr(0, type_size));
  e.body.assign(in.substr(type_size));
  if (e.took_offset != kNoTook && size_t{e.took_offset} + e.took_length > e.body.size()) {
    return std::nullopt;
  }
  return e;
}

}  // namespace turnpike::cache
