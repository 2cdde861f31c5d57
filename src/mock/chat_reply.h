// Internal to mock/: answers one chat completion (or Anthropic message) request according to
// its ChatPlan: the slow-headers delay, the injected fault, then a single reply or an SSE
// stream paced by the first-token and inter-token delays, in the wire shapes of the API the
// request came in on (ChatRequest::wire). A reply may come prepared (`prepared`, an embeddings
// answer): it is sent instead of a rendered completion, after the same delays and faults.
//
// Lifetime: made on the handler's coroutine frame for one exchange and destroyed before the
// exchange; it borrows everything it is given. While a delay is pending it watches the client
// (Exchange::WatchClient) so that a client that leaves cancels the wait at once; the
// destructor stops the watch. Errors: none surface; a client that left is counted in the
// stats (client_disconnects: any reply whose client left before it was complete) and the
// exchange is left answered.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "http/exchange.h"
#include "mock/chat_request.h"
#include "mock/mock_options.h"
#include "mock/mock_stats.h"
#include "mock/openai_render.h"

namespace turnpike::mock {

class ChatReply {
 public:
  ChatReply(http::Exchange& exchange, const MockOptions& options, const ChatRequest& chat,
            const ChatPlan& plan, const ReplyIdentity& identity, WorkerStats& stats,
            boost::asio::io_context& context, std::string prepared = {});
  ~ChatReply();
  ChatReply(const ChatReply&) = delete;
  ChatReply& operator=(const ChatReply&) = delete;

  boost::asio::awaitable<void> Run();

 private:
  boost::asio::awaitable<void> RespondFault();
  boost::asio::awaitable<void> RunSingle();
  boost::asio::awaitable<void> RunStream();
  // Sends the stream's body events; false once the client is gone or the stream was reset.
  boost::asio::awaitable<bool> StreamBody(StreamRenderer& renderer);
  // Waits `delay`; false if the client left meanwhile.
  boost::asio::awaitable<bool> Pause(Millis delay);
  void OnClientGone();
  std::string_view FinishReason() const;
  Usage MakeUsage() const;

  http::Exchange& exchange_;
  const MockOptions& options_;
  const ChatRequest& chat_;
  const ChatPlan& plan_;
  const ReplyIdentity& identity_;
  WorkerStats& stats_;
  boost::asio::steady_timer timer_;
  std::string prepared_;  // non-empty: the single reply's body
  bool watching_ = false;
  bool gone_ = false;  // the client left (seen by the watch or a failed write)
};

}  // namespace turnpike::mock
