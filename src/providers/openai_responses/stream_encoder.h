// StreamEvents -> Responses API SSE (`event: <type>` + `data: {..,"sequence_number":n}`), for
// clients of the inbound /v1/responses API (internal to providers/openai_responses/).
//
//   kStart         -> response.created, response.in_progress (status in_progress, no output)
//   kTextDelta     -> when no message item is open: the open item's done events, then
//                     response.output_item.added (message) and response.content_part.added;
//                     then response.output_text.delta
//   kToolCallStart -> the open item's done events, response.output_item.added (function_call)
//   kToolArgsDelta -> response.function_call_arguments.delta of the open call
//   kReasoningDelta-> when no reasoning item is open: the open item's done events, then
//                     response.output_item.added (reasoning) and
//                     response.reasoning_summary_part.added; then
//                     response.reasoning_summary_text.delta (the reasoning text is rendered
//                     as the item's one summary part; its done events mirror the message's)
//   kReasoningSignature -> the open reasoning item's encrypted_content, "anthropic:<signature>"
//                     (reasoning.h: the issuer tag), shown in its output_item.done and the
//                     final response; read back from the client's next input
//   kRedactedReasoning -> dropped (a Responses item has one encrypted_content)
//   kFinish        -> the open item's done events (output_text.done, content_part.done,
//                     output_item.done; or function_call_arguments.done, output_item.done)
//   kUsage         -> remembered
//   kEnd           -> response.completed, or response.incomplete (length, content filter), with
//                     the whole response: every item and the usage
//   kError         -> `error` (code, message, param), then response.failed with the response so
//                     far and its error
//
// sequence_number counts every event from 0. Arguments for a call other than the open one (an
// upstream interleaving calls) cannot be expressed once that call is done, and end the stream
// with the error events.
//
// Memory: the `.done` events and the final response repeat the whole output, so the encoder
// keeps each item's text and arguments (escaped) until the stream ends: as many bytes as the
// answer the client receives anyway, plus the request's echoed fields (EchoFields). Only this
// dialect pays it; other encoders keep no text.
//
// An agent turn (doors/agents/) drives the encoder itself: it starts the answer with its own
// kStart (the minted id, before the upstream call), echoes its own fields (EncoderOptions::echo),
// may end it with Cancel(), and reads what the answer held (items(), usage(), status()) to store
// the response and the conversation's new items.
//
// Thread safety: none; one per stream.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "providers/openai_responses/render.h"
#include "providers/provider.h"

namespace turnpike::providers::openai_responses {

class ResponsesStreamEncoder final : public StreamEncoder {
 public:
  explicit ResponsesStreamEncoder(const EncoderOptions& options);
  void OnEvent(const StreamEvent& event) override;

  // Ends an answer that is not done: the open item's done events (a cut message "incomplete"),
  // then `response.cancelled` (Turnpike's event: OpenAI's stream has none) with the response so
  // far. Nothing once done.
  void Cancel();
  // Replaces the echoed members from here on (an agent turn adds what its guard replaced to
  // the metadata before the final snapshot).
  void set_echo(std::string echo) { echo_ = std::move(echo); }
  // The response object as it stands, in status() (in_progress while not done).
  void AppendResponseObject(std::string& out) const;

  bool done() const { return done_; }
  ResponseStatus status() const { return status_; }
  const std::vector<OutputItem>& items() const { return items_; }
  const TokenUsage& usage() const { return usage_; }
  FinishReason finish() const { return finish_; }
  const std::string& id() const { return id_; }  // escaped; empty before the start
  const Error* error() const { return error_ ? &*error_ : nullptr; }

 private:
  void Start(const StreamEvent& event);
  // `head` (an EventHead's: `event: <type>\ndata: {"type":"<type>","sequence_number":`), then n;
  // the caller closes it.
  void OpenEvent(std::string_view head);
  void CloseEvent();
  void OpenItem(OutputItem item);
  void CloseItem();
  // The item fields every item-level event repeats: "item_id":..,"output_index":n.
  void AppendItemRef(size_t index);
  void Snapshot(std::string_view event_head, ResponseStatus status, const Error* error);
  void Fail(const Error& error);

  const int64_t created_;
  std::string echo_;
  std::string id_;          // escaped "resp_<upstream id>"
  std::string model_;       // escaped
  std::string message_id_;  // escaped "msg_<upstream id>"
  std::vector<OutputItem> items_;
  int64_t open_ = -1;  // index in items_ of the open item, -1 when none
  std::string ref_;    // AppendItemRef's text for the item at ref_index_
  int64_t ref_index_ = -1;
  int32_t open_tool_ = -1;  // tool_index of the open call
  int64_t sequence_ = 0;
  int32_t messages_ = 0;    // message items opened so far (the second gets a suffix)
  int32_t reasonings_ = 0;  // reasoning items opened so far (likewise)
  FinishReason finish_ = FinishReason::kNone;
  TokenUsage usage_;
  bool started_ = false;
  bool done_ = false;
  bool background_ = false;
  ResponseStatus status_ = ResponseStatus::kInProgress;
  std::optional<Error> error_;  // the failure's (kFailed)
};

}  // namespace turnpike::providers::openai_responses
