// Failed admin authentications, counted per client address, so that a token cannot be guessed
// at the speed of the network: an address with kMaxFailures failures within one kWindow is
// refused (429, with Retry-After: the rest of its window) before its token is even read, the
// operator's included, until the window ends. Only failures count (401, and 403 for a revoked
// token or a suspended tenant); a success neither counts nor resets. Behind a proxy every client
// shares the proxy's address: that address is limited as one.
//
// Memory: at most kMaxAddresses addresses are kept. When the table is full, the addresses whose
// window has ended are dropped; if none has, the new address is not tracked (it is not refused:
// a flood of addresses cannot lock anyone out, and each tracked one stays limited).
//
// Thread safety: every method may be called from any worker; one mutex, held for a table look-up
// only (never across I/O or a co_await). Admin requests only: not on any door's request path.
// Time is the caller's (steady clock), so tests give their own.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace turnpike::doors::admin {

class AuthFailures {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kMaxFailures = 10;
  static constexpr std::chrono::seconds kWindow{60};
  static constexpr size_t kMaxAddresses = 4096;

  // The seconds an address must wait before it may try again (>= 1), or nullopt when it may
  // try now. `client` is "ip:port" or "ip" (Exchange::client_address); the port is ignored.
  std::optional<int64_t> Blocked(std::string_view client, Clock::time_point now) const;

  // One more failure from `client`.
  void Failed(std::string_view client, Clock::time_point now);

  size_t tracked() const;

 private:
  struct Window {
    Clock::time_point start;
    int failures = 0;
  };

  // The address of "ip:port", "[v6]:port" or a bare address.
  static std::string_view AddressOf(std::string_view client);

  mutable std::mutex mu_;
  std::unordered_map<std::string, Window> windows_;  // guarded by mu_
};

}  // namespace turnpike::doors::admin
