// The Standard Webhooks signing scheme (standardwebhooks.com) and the retry schedule of the
// webhook outbox: pure functions, no I/O.
//
// A delivery is POSTed with three headers:
//   webhook-id         the delivery's id: the same on every attempt and after a restart, so a
//                      receiver deduplicates by it (the outbox is at-least-once)
//   webhook-timestamp  unix seconds of this attempt
//   webhook-signature  "v1," + base64(HMAC-SHA256(key, id + "." + timestamp + "." + body))
// The endpoint's secret is "whsec_" + base64(32 random bytes); the HMAC key is those bytes (a
// secret without the prefix or not base64 is used as raw bytes).
//
// Threads: any. Errors: none (OpenSSL's HMAC cannot fail for SHA-256 with these inputs).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace turnpike::webhooks {

inline constexpr std::string_view kSecretPrefix = "whsec_";

// "whsec_" + base64 of 32 bytes from the OS's random source (RAND_bytes).
std::string MintSecret();

// The HMAC key a secret stands for (see above).
std::string SecretKey(std::string_view secret);

// The webhook-signature header's value for one attempt.
std::string Sign(std::string_view secret, std::string_view id, int64_t timestamp,
                 std::string_view body);

// How long to wait before attempt `attempts` + 1, after `attempts` (>= 1) failed ones:
// base * 2^(attempts - 1), at most `cap`, plus a jitter of up to a quarter of it picked by
// `random` (uniform over uint32), so that receivers that come back are not hit all at once.
std::chrono::milliseconds Backoff(int attempts, std::chrono::milliseconds base,
                                  std::chrono::milliseconds cap, uint32_t random);

}  // namespace turnpike::webhooks
