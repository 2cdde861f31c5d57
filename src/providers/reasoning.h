// Reasoning in the pivot request, shared by every dialect's request translation.
//
// The pivot is an OpenAI chat request (provider.h), so reasoning travels in OpenAI's own fields
// where it has them, and in two gateway fields where it has none:
//
//   top level          reasoning_effort: "minimal" | "low" | "medium" | "high" (OpenAI's);
//                      "none" means no reasoning (and is what a client's thinking-disabled
//                      becomes)
//   assistant message  reasoning_content: the reasoning text of that turn (the form vLLM,
//                      DeepSeek and llama.cpp stream)
//                      reasoning_signature: {"dialect": d, "value": v}, the signature the
//                      dialect `d` issued for that reasoning (gateway field)
//                      redacted_reasoning: [{"dialect": d, "value": v}, ...], encrypted
//                      reasoning payloads `d` issued (gateway field)
//
// The gateway fields never reach an upstream as they are: a dialect's BuildRequest sends a
// signature or payload back only when its own dialect issued it, and drops the others (the
// failover rule: a signature is only ever valid at the API that issued it). OpenAI-compatible
// upstreams get no reasoning of earlier turns at all (see providers/openai/README.md).
//
// Budget <-> effort: dialects that take a token budget (Anthropic budget_tokens, Gemini
// thinkingBudget, Cohere token_budget) map through the table below, both ways.
//
// Pure functions; thread-safe.
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/result.h"

namespace turnpike::providers::reasoning {

inline constexpr std::string_view kEffort = "reasoning_effort";
inline constexpr std::string_view kContent = "reasoning_content";
inline constexpr std::string_view kSignature = "reasoning_signature";
inline constexpr std::string_view kRedacted = "redacted_reasoning";

// Effort levels, in increasing order.
enum class Effort : uint8_t { kNone, kMinimal, kLow, kMedium, kHigh };

// The budget each effort maps to, and the upper bounds (exclusive) of the budgets read as
// each effort. minimal 1024, low 2048, medium 8192, high 24576 tokens; a budget below 4096
// reads as low, below 16384 as medium, anything above as high (so each effort survives a
// round trip; minimal reads back as low).
inline constexpr int64_t kMinimalBudget = 1024;
inline constexpr int64_t kLowBudget = 2048;
inline constexpr int64_t kMediumBudget = 8192;
inline constexpr int64_t kHighBudget = 24576;
inline constexpr int64_t kLowBelow = 4096;
inline constexpr int64_t kMediumBelow = 16384;

int64_t BudgetFor(Effort effort);
Effort EffortFor(int64_t budget);
std::string_view EffortName(Effort effort);

// The pivot's reasoning_effort: nullopt when absent or null; a string other than the levels
// above is a 400 naming `reasoning_effort`.
Result<std::optional<Effort>> ReadEffort(const boost::json::object& chat);

// A signature shown to a client API that has no issuer field of its own (a Gemini thought
// part's thoughtSignature, a Responses reasoning item's encrypted_content) is written
// "<issuing dialect>:<value>"; base64 has no ':', so a value without one is the client API's
// own. kStreamIssuer is the dialect of every signature in the pivot's events today: the
// Anthropic decoder is the only one that emits kReasoningSignature (events.h).
inline constexpr std::string_view kStreamIssuer = "anthropic";
struct Tagged {
  std::string_view dialect;
  std::string_view value;
};
// Splits at the first ':'; without one, `own_dialect` and the whole value.
Tagged SplitTagged(std::string_view tagged, std::string_view own_dialect);

// Whether `key` is one of the gateway's own message fields (kSignature, kRedacted).
bool IsGatewayMessageField(std::string_view key);

// The value of a {"dialect", "value"} entry when `dialect` issued it; nullptr otherwise (also
// for a malformed entry, which only the gateway writes).
const boost::json::value* IssuedBy(const boost::json::value& entry, std::string_view dialect);

}  // namespace turnpike::providers::reasoning
