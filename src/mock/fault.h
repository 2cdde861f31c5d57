// The faults the mock provider injects, how a request asks for one (`x-mock-fault`) and how
// the configured rates pick one at random.
//
// Pure functions over values; thread-compatible (each worker passes its own random engine).
#pragma once

#include <cstddef>
#include <optional>
#include <random>
#include <string_view>

#include "mock/mock_options.h"

namespace turnpike::mock {

enum class FaultKind {
  kNone,
  kHttp500,           // 500 with an OpenAI error body, before any token
  kHttp503,           // 503 with an OpenAI error body
  kHttp429,           // 429 with Retry-After and an OpenAI error body
  kReset,             // stream: RST after half the tokens; non-stream: RST instead of a reply
  kResetBeforeHead,   // RST before the response head
  kSlowHeaders,       // a delay before the response head, then a normal reply
  kCloseWithoutDone,  // stream: all tokens, then the body ends with no finish chunk, no usage
                      // and no `data: [DONE]`; non-stream: a normal reply
};

inline constexpr size_t kFaultKindCount = 8;

// The spelling used in `x-mock-fault` and as the key in /mock/stats ("500", "reset", ...).
// Empty for kNone.
std::string_view FaultName(FaultKind kind);

// Parses an `x-mock-fault` value; nullopt for an unknown one (kNone is never returned).
std::optional<FaultKind> ParseFault(std::string_view value);

// Draws a fault for a request from the configured rates: one uniform draw against
// [fail | rate limit | reset | none]. Resets only apply to streams.
FaultKind DrawFault(const MockOptions& options, bool stream, std::mt19937_64& random);

}  // namespace turnpike::mock
