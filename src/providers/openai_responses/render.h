// Rendering the Responses API's `response` object and its output items, for both the whole
// answer and the stream events that carry snapshots (internal to providers/openai_responses/).
// Everything is appended as text; strings held here are in JSON-escaped form.
//
// Ids: the gateway stores nothing, so ids are derived from the upstream's: the response is
// "resp_<upstream id>", its message item "msg_<upstream id>", a function call item
// "fc_<call id>", a reasoning item "rs_<upstream id>".
//
// Stateless functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "providers/events.h"

namespace turnpike::providers::openai_responses {

// One output item: an assistant message (one output_text part), a function call, or a
// reasoning item (one summary_text part: the reasoning text the upstream streamed).
struct OutputItem {
  bool is_call = false;
  bool is_reasoning = false;
  std::string id;         // escaped
  std::string call_id;    // escaped; calls
  std::string name;       // escaped; calls
  std::string text;       // escaped: the message's text, the call's arguments, the summary
  std::string encrypted;  // escaped; reasoning: encrypted_content, "<issuer>:<signature>"
};

// kQueued and kCancelled are only an agent turn's (a stored, background or cancelled response).
enum class ResponseStatus : uint8_t {
  kInProgress,
  kCompleted,
  kIncomplete,
  kFailed,
  kQueued,
  kCancelled
};

// What a response object says beyond its items.
struct ResponseHead {
  std::string_view id;     // escaped, "resp_..."
  std::string_view model;  // escaped
  int64_t created_at = 0;
  std::string_view echo;  // EchoFields(request)
  bool background = false;
};

// "in_progress", "completed", ...: the API's name of `status`.
std::string_view StatusName(ResponseStatus status);

// The status a finished answer gets: incomplete for length and content filter.
ResponseStatus StatusFor(FinishReason finish);

// {"id":..,"type":"message",..}, {"id":..,"type":"function_call",..} or
// {"id":..,"type":"reasoning","summary":[..]}; `status` is the item's ("in_progress",
// "completed", "incomplete"). A reasoning item just added has no summary part yet.
void AppendItem(std::string& out, const OutputItem& item, std::string_view status);

// The message's one content part: {"type":"output_text","annotations":[],"logprobs":[],"text":..}.
void AppendTextPart(std::string& out, std::string_view escaped_text);
// A reasoning item's one summary part: {"type":"summary_text","text":..}.
void AppendSummaryPart(std::string& out, std::string_view escaped_text);

// The whole response object. `items` are rendered with the status that `status` implies (a
// message cut by a cancel is "incomplete");
// `usage` null renders "usage":null; `finish` chooses incomplete_details; `error` (kFailed)
// the error object.
void AppendResponse(std::string& out, const ResponseHead& head, ResponseStatus status,
                    FinishReason finish, const std::vector<OutputItem>& items,
                    const TokenUsage* usage, const Error* error);

// Responses' error `code` for a neutral error (server_error, rate_limit_exceeded, ...).
std::string_view ErrorCodeFor(const Error& error);

}  // namespace turnpike::providers::openai_responses
