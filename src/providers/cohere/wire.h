// Cohere's v2 Chat wire vocabulary (internal to providers/cohere/): finish reasons, usage and
// errors. References: https://docs.cohere.com/reference/chat and
// https://docs.cohere.com/reference/errors. Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "providers/events.h"

namespace turnpike::providers::cohere {

// COMPLETE -> kStop, STOP_SEQUENCE -> kStopSequence, MAX_TOKENS -> kLength, TOOL_CALL ->
// kToolCalls; an unknown reason reads as kStop. ERROR and TIMEOUT are not finish reasons but
// failures: check IsFailure first.
FinishReason ParseFinishReason(std::string_view reason);
bool IsFailure(std::string_view reason);

// The error a failed generation (finish_reason ERROR or TIMEOUT) ends with; `message` is
// Cohere's error text when it gave one.
Error FailureError(std::string_view reason, std::string_view message);

// The counts of one `usage` object. Cohere reports `billed_units` (what it charges) and
// `tokens` (what the model read and wrote, its prompt template included); the gateway prices by
// what is billed, so billed_units wins when present. -1 means not reported.
struct UsageCounts {
  int64_t billed_input = -1, billed_output = -1;
  int64_t input = -1, output = -1;
  int64_t cached = -1;
};

// In the common convention (events.h): cached_tokens is taken as a part of the input, as
// OpenAI counts it.
TokenUsage ToTokenUsage(const UsageCounts& counts);

// The neutral code for a Cohere HTTP error status: the common mapping, plus 402 (payment
// required) -> kForbidden.
ErrorCode CodeForStatus(int status);

// Parses a non-2xx answer (any body; Cohere's is {"id":..,"message":".."}) into a neutral
// error.
Error ParseErrorBody(int status, std::string_view body);

}  // namespace turnpike::providers::cohere
