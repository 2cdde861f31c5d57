#include "http/exchange.h"

#include <chrono>
#include <cstdint>

#include "common/ascii.h"

namespace turnpike::http {
namespace {

constexpr size_t kMaxRequestIdLength = 128;

bool IsSaneRequestId(std::string_view id) {
  if (id.empty() || id.size() > kMaxRequestIdLength) return false;
  for (char c : id) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

// Ids must be unique per process run and cheap: a per-thread random-ish prefix and a counter,
// as 24 hex digits.
std::string GenerateRequestId() {
  thread_local uint64_t counter = 0;
  thread_local const uint64_t prefix =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      reinterpret_cast<uintptr_t>(&counter);
  constexpr char kHex[] = "0123456789abcdef";
  constexpr int kPrefixDigits = 16;
  constexpr int kCounterDigits = 8;
  std::string id(kPrefixDigits + kCounterDigits, '0');
  uint64_t p = prefix;
  for (int i = kPrefixDigits - 1; i >= 0; --i, p >>= 4) id[static_cast<size_t>(i)] = kHex[p & 0xf];
  uint64_t c = ++counter;
  for (int i = kPrefixDigits + kCounterDigits - 1; i >= kPrefixDigits; --i, c >>= 4) {
    id[static_cast<size_t>(i)] = kHex[c & 0xf];
  }
  return id;
}

}  // namespace

std::string_view FieldValue(const Request& request, boost::beast::http::field name) {
  for (const auto& field : request) {
    if (field.name() == name) return std::string_view(field.value().data(), field.value().size());
  }
  return {};
}

std::string_view FieldValue(const Request& request, std::string_view name) {
  for (const auto& field : request) {
    if (EqualsIgnoreCase(std::string_view(field.name_string().data(), field.name_string().size()),
                         name)) {
      return std::string_view(field.value().data(), field.value().size());
    }
  }
  return {};
}

Exchange::Exchange(Request& request, Clock::time_point started, bool draining)
    : request_(request), started_(started), draining_(draining) {
  const std::string_view id = FieldValue(request_, "x-request-id");
  if (!id.empty() && IsSaneRequestId(id)) {
    request_id_ = std::string(id);
  } else {
    request_id_ = GenerateRequestId();
  }
}

boost::asio::awaitable<bool> Exchange::WritePieces(std::span<const std::string_view> pieces) {
  std::string joined;
  for (std::string_view piece : pieces) joined.append(piece);
  const bool written = co_await Write(joined);
  co_return written;
}

}  // namespace turnpike::http
