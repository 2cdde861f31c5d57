// Responses API SSE events -> StreamEvents, for deployments that speak the Responses API
// (internal to providers/openai_responses/). The event's type is its SSE `event:` name, else
// its data's `type`.
//
//   response.created                       -> kStart (response.id, response.model)
//   response.output_text.delta,
//   response.refusal.delta                 -> kTextDelta
//   response.output_item.added (function_call) -> kToolCallStart (tool_index counts the
//                                             answer's calls; id = call_id, name), and a
//                                             kToolArgsDelta when the item already carries
//                                             arguments
//   response.function_call_arguments.delta -> kToolArgsDelta of the open call
//   response.output_item.done (function_call) -> the call's arguments as one kToolArgsDelta,
//                                             only when no delta carried any
//   response.completed / .incomplete       -> kFinish (FinishFor), kUsage, kEnd
//   response.failed, error                 -> kError (CodeForResponseError)
//   everything else (in_progress, content_part.*, *.done, reasoning items...) -> nothing
//
// The API streams one output item at a time (added, deltas, done), so only the open call is
// tracked: arguments for another output_index are kUpstreamBadResponse. An event after the
// final one is kUpstreamBadResponse too.
//
// State is O(1) per stream and no text is kept: the parser's reused buffers, the open call's
// output_index, counters, the usage and the last error.
#pragma once

#include "providers/provider.h"
#include "stream/padded_json.h"

namespace turnpike::providers::openai_responses {

class ResponsesStreamDecoder final : public StreamDecoder {
 public:
  Status Decode(const stream::SseEvent& event, EventSink& sink) override;
  const TokenUsage& usage() const override { return usage_; }

 private:
  // What one event's data says (views valid until the next Iterate).
  struct Fields {
    std::string_view type, delta;
    int64_t output_index = -1;
    std::string_view item_type, call_id, name, arguments;
    std::string_view id, model, status, reason;  // response.*
    bool has_usage = false;
    TokenUsage usage;
    bool has_error = false;
    std::string_view error_code;
    std::string_view error_message;  // unescaped
  };

  simdjson::error_code Read(simdjson::ondemand::object root, Fields& fields);
  void Start(const Fields& fields, EventSink& sink);
  void Args(std::string_view text, EventSink& sink);

  stream::PaddedJsonParser parser_;
  TokenUsage usage_;
  Error error_;                 // the in-stream error, kept alive for its event
  int64_t open_call_ = -1;      // output_index of the open function_call item, -1 when none
  int32_t tools_ = 0;           // function calls started so far
  bool open_has_args_ = false;  // the open call's arguments were already passed on
  bool started_ = false;
  bool done_ = false;
};

}  // namespace turnpike::providers::openai_responses
