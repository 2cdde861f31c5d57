// Relays an upstream OpenAI SSE stream to the client as it arrives.
//
// Each upstream read is split into complete SSE events (a partial event waits for its end;
// a client could not act on half an event anyway); each event's bytes are forwarded untouched,
// except the usage-only chunk, which is dropped when the gateway asked for usage on the
// client's behalf. A ChatAccumulator taps every event for accounting and never holds anything
// back. Backpressure: the next upstream read starts only after the client took the previous
// bytes, so a slow client slows the upstream read and the relay holds at most one read buffer
// (upstream.stream_buffer_bytes) plus one partial event.
//
// While the upstream is silent for `keepalive`, a `: keep-alive` comment goes to the client
// (upstream::Call::ReadSomeWithin: a soft read deadline, so one coroutine does everything).
// An upstream failure mid-stream becomes an OpenAI in-stream error event, then the stream ends.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>

#include "http/exchange.h"
#include "pipeline/request_context.h"
#include "stream/chat_accumulator.h"
#include "stream/sse_parser.h"
#include "upstream/call.h"

namespace turnpike::gateway {

class StreamRelay {
 public:
  StreamRelay(http::Exchange& exchange, upstream::Call& call, pipeline::RequestContext& ctx,
              bool client_wants_usage, std::chrono::milliseconds keepalive, bool server_timing)
      : exchange_(exchange),
        call_(call),
        ctx_(ctx),
        client_wants_usage_(client_wants_usage),
        keepalive_(keepalive),
        server_timing_(server_timing) {}

  boost::asio::awaitable<void> Run();

 private:
  boost::asio::awaitable<void> Pump();
  boost::asio::awaitable<void> FailMidStream(const Error& error);
  void Settle();

  http::Exchange& exchange_;
  upstream::Call& call_;
  pipeline::RequestContext& ctx_;
  const bool client_wants_usage_;
  const std::chrono::milliseconds keepalive_;
  const bool server_timing_;
  stream::SseParser parser_;
  stream::ChatAccumulator accumulator_;
  std::string out_;  // events to forward that could not be sent as a view of the read
};

}  // namespace turnpike::gateway
