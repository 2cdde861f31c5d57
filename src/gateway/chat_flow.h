// One POST /v1/chat/completions, from the parsed body to the last byte sent: filter chain,
// attempts over the planned deployments with backoff and Retry-After, then a whole-body or a
// streamed relay of the chosen upstream's answer.
//
// Failover: a connect error, a timeout before the response head, a 5xx or a 429 moves on to
// the next planned attempt, as long as nothing reached the client. Once the stream started, an
// upstream failure becomes an in-stream OpenAI error event and the stream ends.
//
// Ownership: lives on the handler's coroutine frame for one request; borrows the handler (its
// pool, chain, probe), the exchange and the context. Single-threaded.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "http/exchange.h"
#include "pipeline/request_context.h"
#include "providers/openai/chat_request.h"
#include "upstream/call.h"

namespace turnpike::gateway {

class LlmHandler;

class ChatFlow {
 public:
  ChatFlow(LlmHandler& handler, http::Exchange& exchange, pipeline::RequestContext& ctx)
      : handler_(handler), exchange_(exchange), ctx_(ctx) {}

  boost::asio::awaitable<void> Run();

 private:
  // An upstream answer that asked for a retry (5xx, 429), kept to pass on if every attempt fails.
  struct RetryableAnswer {
    unsigned status = 0;
    std::string content_type;
    std::string body;
    int64_t retry_after_seconds = -1;
    size_t deployment = 0;
  };

  boost::asio::awaitable<void> Attempts();
  // Waits `delay` unless the client goes away first; false if it did.
  boost::asio::awaitable<bool> Sleep(std::chrono::milliseconds delay);
  boost::asio::awaitable<void> RelayWhole(upstream::Call& call);
  boost::asio::awaitable<void> RelayStream(upstream::Call& call);
  boost::asio::awaitable<void> GiveUp(const std::optional<Error>& error,
                                      std::optional<RetryableAnswer>& answer);
  void MarkClientGone();

  LlmHandler& handler_;
  http::Exchange& exchange_;
  pipeline::RequestContext& ctx_;
  providers::openai::ChatRequestInfo info_;
};

}  // namespace turnpike::gateway
