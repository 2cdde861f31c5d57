// The loop every streamed answer runs, whatever the dialects: the 200 head, then one upstream
// read at a time handed to the relay's Feed and its bytes written to the client, then the
// usage settled on the request's context. StreamRelay (the OpenAI identity path) and
// DialectRelay (translated or same-dialect non-OpenAI streams) supply only what differs: how a
// read becomes client bytes, what the end and an in-stream error look like, and what usage
// they learned.
//
// The rules it keeps for both: the next upstream read starts only after the client took the
// previous bytes (backpressure: one read buffer per stream); while the upstream is silent for
// `keepalive`, a `: keep-alive` SSE comment goes out (a comment in every SSE dialect; the read
// is a soft deadline, upstream::Call::ReadSomeWithin, so one coroutine does everything); a
// client that leaves is logged as 499 and cancels the upstream call; an upstream failure
// mid-stream becomes the client dialect's in-stream error event (the head was a 200, so the
// failure is in the stream and in the call log), then the stream ends.
//
// Ownership: lives on the flow's frame for one stream; borrows the exchange, the call and the
// context. Single-threaded.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <string_view>

#include "common/error.h"
#include "core/request_context.h"
#include "http/exchange.h"
#include "upstream/call.h"

namespace turnpike::doors::llm {

class RelayLoop {
 public:
  virtual ~RelayLoop() = default;

  // Sends the head, relays until the upstream body ends (or either side fails), then Settle.
  boost::asio::awaitable<void> Run();

 protected:
  RelayLoop(http::Exchange& exchange, upstream::Call& call, core::RequestContext& ctx,
            std::chrono::milliseconds keepalive, bool server_timing)
      : exchange_(exchange),
        call_(call),
        ctx_(ctx),
        keepalive_(keepalive),
        server_timing_(server_timing) {}

  // What one upstream read gives the client. `bytes` stays valid until the next call of Feed,
  // End or Fail; it may be a view of `piece` itself.
  struct Output {
    std::string_view bytes;
    bool go_on = true;  // false: the stream ends after these bytes (they end in an error event)
  };
  virtual Output Feed(std::string_view piece) = 0;
  // The upstream body ended: the stream's last bytes (may be empty).
  virtual std::string_view End() = 0;
  // The client dialect's in-stream error event for a failed upstream read.
  virtual std::string_view Fail(const Error& error) = 0;
  // Fills the context's usage, finish reason and output size from what the stream said.
  virtual void Settle() = 0;

  http::Exchange& exchange_;
  upstream::Call& call_;
  core::RequestContext& ctx_;

 private:
  boost::asio::awaitable<void> Pump();
  // The client left: logged as 499, and nothing more is read from the upstream.
  void ClientLeft();

  const std::chrono::milliseconds keepalive_;
  const bool server_timing_;
};

}  // namespace turnpike::doors::llm
