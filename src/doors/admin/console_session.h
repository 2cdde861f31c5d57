// The web console's sign-in session (doors/ui/ signs in; the admin door accepts it): a cookie
// that stands for an admin token without holding it, and the CSRF token that every write made
// with that cookie must also carry.
//
// The cookie's value is "v1:<tenant>:<token id>:<expiry>:<mac>": the identity of the admin token
// that signed in (the operator: tenant and token id empty; a tenant's admin token: its tenant
// and public id), the unix second it expires, and HMAC-SHA256 over the rest (hex), keyed by a
// key derived from TURNPIKE_ADMIN_TOKEN. Any replica with the same token accepts it; changing
// the token ends every session. Ids are 1-64 of A-Z a-z 0-9 - _ . (never ':'): Issue refuses
// others. A tenant's session lasts only while its token is active (the admin door checks the
// published snapshot on every request: a revocation ends it).
//
// The CSRF token is HMAC-SHA256 of the cookie's value under a second derived key (hex): the
// sign-in answer (and GET /ui/session, same origin only) returns it to the pages; a write (POST,
// PUT, PATCH, DELETE) authenticated by the session cookie must send it in kCsrfHeader. A page of
// another site can neither read it nor compute it. Bearer-token requests need none.
//
// Thread safety: a ConsoleSessions is immutable after construction; its methods are const and
// may be called from any worker. Time is the caller's (unix seconds), so tests give their own.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace turnpike::doors::admin {

inline constexpr std::string_view kSessionCookie = "tp_session";
inline constexpr std::string_view kCsrfHeader = "x-csrf-token";

// Who a session is: the operator, or a tenant's admin token.
struct ConsoleIdentity {
  std::string tenant;    // "" = the operator
  std::string token_id;  // a tenant's admin token's public id; "" for the operator
  int64_t expires_at = 0;

  bool operator==(const ConsoleIdentity&) const = default;
};

class ConsoleSessions {
 public:
  // `admin_token` empty: no session is ever issued or accepted (enabled() is false).
  ConsoleSessions(std::string_view admin_token, int64_t ttl_seconds);

  bool enabled() const { return enabled_; }
  int64_t ttl_seconds() const { return ttl_seconds_; }

  // The cookie value for `who` (its expires_at as given); "" if disabled or an id is not valid.
  std::string Issue(const ConsoleIdentity& who) const;

  // The identity a cookie value carries, if its MAC is right and it has not expired at `now`.
  std::optional<ConsoleIdentity> Verify(std::string_view value, int64_t now) const;

  // The CSRF token of a session cookie value.
  std::string CsrfToken(std::string_view value) const;
  // Whether `presented` is the CSRF token of `value` (constant time).
  bool CsrfMatches(std::string_view value, std::string_view presented) const;

 private:
  using Key = std::array<unsigned char, 32>;
  std::string Mac(const Key& key, std::string_view data) const;

  bool enabled_ = false;
  int64_t ttl_seconds_ = 0;
  Key session_key_{};
  Key csrf_key_{};
};

// The value of cookie `name` in a Cookie header ("a=1; b=2"); "" when absent.
std::string_view CookieValue(std::string_view header, std::string_view name);

}  // namespace turnpike::doors::admin
