// Relays an upstream OpenAI SSE stream to an OpenAI client as it arrives (the identity path).
//
// Each upstream read is split into complete SSE events (a partial event waits for its end;
// a client could not act on half an event anyway); each event's bytes are forwarded untouched,
// except the usage-only chunk, which is dropped when the gateway asked for usage on the
// client's behalf. A ChatAccumulator taps every event for accounting and never holds anything
// back. The loop itself (backpressure, keep-alive comments, a client that leaves, an upstream
// failure mid-stream) is RelayLoop's (relay_loop.h); this class holds at most one read buffer
// (upstream.stream_buffer_bytes) plus one partial event. A stream that cannot be split into
// events ends with an OpenAI in-stream error event after the events before it.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>

#include "doors/llm/relay_loop.h"
#include "stream/chat_accumulator.h"
#include "stream/sse_parser.h"
#include "upstream/call.h"

namespace turnpike::doors::llm {

class StreamRelay final : public RelayLoop {
 public:
  StreamRelay(http::Exchange& exchange, upstream::Call& call, core::RequestContext& ctx,
              bool client_wants_usage, std::chrono::milliseconds keepalive, bool server_timing)
      : RelayLoop(exchange, call, ctx, keepalive, server_timing),
        client_wants_usage_(client_wants_usage) {}

 private:
  Output Feed(std::string_view piece) override;
  std::string_view End() override { return {}; }
  std::string_view Fail(const Error& error) override;
  void Settle() override;

  const bool client_wants_usage_;
  stream::SseParser parser_;
  stream::ChatAccumulator accumulator_;
  std::string out_;  // events to forward that could not be sent as a view of the read
};

}  // namespace turnpike::doors::llm
