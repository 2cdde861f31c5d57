// Ollama's wire vocabulary (internal to providers/ollama/): done reasons, the error shape
// {"error":"model \"x\" not found, try pulling it first"} (a bare message: the HTTP status is
// the only type information), and the answer id Ollama does not have.
//
// Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"
#include "providers/events.h"

namespace turnpike::providers::ollama {

// done_reason -> neutral: "length" is kLength; "stop", "load", "unload" and anything else read
// as kStop, or kToolCalls when the answer called tools (Ollama says "stop" for those).
FinishReason ParseDoneReason(std::string_view reason, bool called_tools);

// The code for an Ollama error status: ErrorCodeForStatus (400 invalid, 404 model not found,
// 429, 503 busy...), with 500 as kUpstreamBadResponse.
ErrorCode CodeForStatus(int status);

// A non-2xx answer (any body) as a neutral error carrying Ollama's message.
Error ParseErrorBody(int status, std::string_view body);

// Ollama answers carry no id; the gateway's is "ollama-" + created_at (unique per answer of
// one server as its timestamps have nanoseconds).
void AppendAnswerId(std::string& out, std::string_view created_at);

// The id given to the `index`-th tool call of an answer ("call_<index>"): Ollama's calls have
// no ids, clients need one to send results back.
void AppendCallId(std::string& out, int32_t index);

}  // namespace turnpike::providers::ollama
