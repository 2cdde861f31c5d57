// Internal to mock/: the per-worker http::Handler of the mock provider (see mock_service.h for
// the routes). One instance per worker thread; it owns that worker's request parser, random
// engine and reply counter, and borrows the service's options and its worker's stats slot.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <random>

#include "http/exchange.h"
#include "http/handler.h"
#include "mock/chat_request.h"
#include "mock/gemini_render.h"
#include "mock/mock_options.h"
#include "mock/mock_stats.h"

namespace turnpike::mock {

class MockHandler : public http::Handler {
 public:
  MockHandler(const MockOptions& options, StatsBoard& board, int worker_index,
              boost::asio::io_context& context);

  boost::asio::awaitable<void> Handle(http::Exchange& exchange) override;
  std::string RenderError(std::string_view target, const Error& error) const override;

 private:
  // `gemini`: the model and streaming read from a Gemini URL (Wire::kGemini only).
  boost::asio::awaitable<void> HandleChat(http::Exchange& exchange, Wire wire,
                                          GeminiRoute gemini = {});
  boost::asio::awaitable<void> HandleGemini(http::Exchange& exchange);
  // POST /v1/embeddings (Wire::kOpenAi) and /api/embed (Wire::kOllama): the same delays and
  // faults as a non-stream chat reply (embeddings.h for the answer).
  boost::asio::awaitable<void> HandleEmbeddings(http::Exchange& exchange, Wire wire);
  // Anthropic /v1/messages/count_tokens and Gemini :countTokens: the body's size / 4, as the
  // mock counts chat prompts, in the dialect's answer ({"input_tokens"} / {"totalTokens"}).
  boost::asio::awaitable<void> HandleCountTokens(http::Exchange& exchange, Wire wire);
  boost::asio::awaitable<void> RespondJson(http::Exchange& exchange, unsigned status,
                                           std::string body);
  boost::asio::awaitable<void> RespondError(http::Exchange& exchange, Error error,
                                            Wire wire = Wire::kOpenAi);

  const MockOptions& options_;
  StatsBoard& board_;
  WorkerStats& stats_;
  const int worker_index_;
  boost::asio::io_context& context_;
  BodyParser parser_;
  std::mt19937_64 random_;
  uint64_t replies_ = 0;  // numbers this worker's reply ids
};

}  // namespace turnpike::mock
