#include "doors/admin/console_session.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <charconv>
#include <vector>

#include "common/hex.h"

namespace turnpike::doors::admin {
namespace {

constexpr std::string_view kVersion = "v1";
constexpr std::string_view kSessionLabel = "turnpike console session v1";
constexpr std::string_view kCsrfLabel = "turnpike console csrf v1";
constexpr size_t kMaxIdBytes = 64;
constexpr size_t kMacHexBytes = 64;

bool IdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

// "" (none) or 1-64 id characters.
bool ValidOptionalId(std::string_view id) {
  if (id.size() > kMaxIdBytes) return false;
  for (char c : id) {
    if (!IdChar(c)) return false;
  }
  return true;
}

std::array<unsigned char, 32> Hmac(std::string_view key, std::string_view data) {
  std::array<unsigned char, 32> out{};
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &size);
  return out;
}

std::string_view AsView(const std::array<unsigned char, 32>& key) {
  return {reinterpret_cast<const char*>(key.data()), key.size()};
}

bool SameBytes(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

ConsoleSessions::ConsoleSessions(std::string_view admin_token, int64_t ttl_seconds)
    : enabled_(!admin_token.empty()), ttl_seconds_(ttl_seconds) {
  if (!enabled_) return;
  session_key_ = Hmac(admin_token, kSessionLabel);
  csrf_key_ = Hmac(admin_token, kCsrfLabel);
}

std::string ConsoleSessions::Mac(const Key& key, std::string_view data) const {
  const std::array<unsigned char, 32> mac = Hmac(AsView(key), data);
  return Hex(mac.data(), mac.size());
}

std::string ConsoleSessions::Issue(const ConsoleIdentity& who) const {
  if (!enabled_ || !ValidOptionalId(who.tenant) || !ValidOptionalId(who.token_id)) return {};
  std::string value = std::string(kVersion) + ":" + who.tenant + ":" + who.token_id + ":" +
                      std::to_string(who.expires_at);
  const std::string mac = Mac(session_key_, value);
  return value + ":" + mac;
}

std::optional<ConsoleIdentity> ConsoleSessions::Verify(std::string_view value, int64_t now) const {
  if (!enabled_) return std::nullopt;
  const size_t last = value.rfind(':');
  if (last == std::string_view::npos) return std::nullopt;
  const std::string_view signed_part = value.substr(0, last);
  if (!SameBytes(Mac(session_key_, signed_part), value.substr(last + 1))) return std::nullopt;
  if (value.size() - last - 1 != kMacHexBytes) return std::nullopt;
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t colon = signed_part.find(':', start);
    parts.push_back(signed_part.substr(start, colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (parts.size() != 4 || parts[0] != kVersion) return std::nullopt;
  ConsoleIdentity who{std::string(parts[1]), std::string(parts[2]), 0};
  const std::string_view expiry = parts[3];
  auto [ptr, ec] = std::from_chars(expiry.data(), expiry.data() + expiry.size(), who.expires_at);
  if (ec != std::errc() || ptr != expiry.data() + expiry.size()) return std::nullopt;
  if (who.expires_at <= now) return std::nullopt;
  if (who.tenant.empty() != who.token_id.empty()) return std::nullopt;
  return who;
}

std::string ConsoleSessions::CsrfToken(std::string_view value) const {
  if (!enabled_) return {};
  return Mac(csrf_key_, value);
}

bool ConsoleSessions::CsrfMatches(std::string_view value, std::string_view presented) const {
  if (!enabled_ || presented.empty()) return false;
  return SameBytes(CsrfToken(value), presented);
}

std::string_view CookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const size_t semi = header.find(';');
    std::string_view pair = header.substr(0, semi);
    header = semi == std::string_view::npos ? std::string_view{} : header.substr(semi + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos || pair.substr(0, eq) != name) continue;
    std::string_view v = pair.substr(eq + 1);
    while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    return v;
  }
  return {};
}

}  // namespace turnpike::doors::admin
