// Gemini thought signatures carried in tool call ids (internal to providers/gemini/).
//
// Gemini's thinking models put a `thoughtSignature` (base64 of opaque bytes) on the Part of a
// function call; the next request must send that part back with it, or Gemini 3 refuses the
// turn (https://ai.google.dev/gemini-api/docs/thought-signatures). No client dialect has a
// field for it, but every one echoes the tool call id back (OpenAI `tool_calls[].id` and
// `tool_call_id`, Anthropic `tool_use.id` and `tool_use_id`), so the id the gateway hands out
// carries the signature:
//
//   <plain id> "_ts_" <signature in base64url, unpadded>
//
// e.g. "call_Xq8maNHv_0_ts_CiQB0e2Kb1fA-bWc_0fn". The separator and the signature segment use
// only [A-Za-z0-9_-], the alphabet of Anthropic's tool_use ids (the synthesized plain ids too),
// so the id survives every client and dialect. The split
// is at the first "_ts_": the plain ids the gateway hands out never contain it (MakeClientId
// turns the '_' that would start one into '-'), and the signature segment is whatever follows.
// An id without "_ts_" is a plain id (a call that came from another provider, or from a model
// that sent no signature). Length: the plain id + 4 + the signature's base64 length without
// padding; Google documents no bound on a signature's size (observed: tens to a few thousand
// characters), so an id can be that long. Signatures on parts that are not function calls are
// not carried (see README.md).
//
// Stateless functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace turnpike::providers::gemini {

inline constexpr std::string_view kSignatureSeparator = "_ts_";

// True when `escaped` (a thoughtSignature's JSON string token, escaped form) is non-empty
// base64, standard or URL-safe alphabet, padding optional; "\/" reads as '/'.
bool IsSignature(std::string_view escaped);

// Turns `id`, holding a plain id, into the id handed to the client: every "_ts_" in it is
// defused ('_' -> '-'), then, when `signature` is not empty, "_ts_" and the signature in
// base64url without padding are appended. `signature` must pass IsSignature (escaped or
// unescaped: base64 has no escape but "\/"). Appends only: once `id` has the capacity, no
// allocation.
void MakeClientId(std::string& id, std::string_view signature);

// A client's id split back.
struct CallId {
  std::string_view plain;  // the id before "_ts_" (all of it when there is none)
  std::string signature;   // standard base64 with padding, as Gemini reads it; empty: none
};

// Splits an id from a client; nullopt when the signature segment after "_ts_" is empty, has a
// character outside base64url, or has a length no base64 text has.
std::optional<CallId> SplitCallId(std::string_view id);

// Reasoning signatures another dialect issued (the pivot's reasoning_signature) are shown to a
// Gemini client as the `thoughtSignature` of a thought part, tagged with their issuer
// ("anthropic:EqQB...", reasoning.h SplitTagged); one without a tag is Gemini's own (what a
// Gemini deployment put there, through the identity path) and reads as this dialect's.
inline constexpr std::string_view kOwnDialect = "gemini";

}  // namespace turnpike::providers::gemini
