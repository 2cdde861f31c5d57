// TurnSink: an agent turn's client-facing sink. The model call's pivot events go through the
// Responses encoder (providers/openai_responses/stream_encoder.h), which the turn drives; for a
// streamed turn each read's frames go to the client at its Flush, except the terminal events
// (completed / incomplete / failed), which are held until the turn has stored its items (Close),
// so that a follow-up sent the instant the stream ends sees them. A whole (non-stream) turn
// sends nothing here: the turn answers with the encoder's response object at the end. A
// background turn's frames go to its EventLog (event_log.h) instead of a client, with the same
// holding of the terminal events; its client has had its answer already, so it never "leaves".
//
// Ownership: borrows the exchange (nullptr for a background turn), context, encoder and log
// (the turn owns them all, and outlives the sink). Single-threaded (the turn's worker).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <string>

#include "core/request_context.h"
#include "doors/agents/event_log.h"
#include "http/exchange.h"
#include "model_call/answer_sink.h"
#include "providers/openai_responses/stream_encoder.h"

namespace turnpike::agents {

class TurnSink final : public model_call::AnswerSink {
 public:
  // Where the frames go: nowhere (a whole answer), the client, or a background turn's log.
  enum class Delivery { kWhole, kClient, kLog };
  TurnSink(http::Exchange* exchange, core::RequestContext& ctx,
           providers::openai_responses::ResponsesStreamEncoder& encoder, Delivery delivery,
           EventLog* log);

  // Before the call: the answer's start (the minted id), and for a stream the head and the
  // created / in_progress events at once. False: the client has gone.
  boost::asio::awaitable<bool> Open(const providers::StreamEvent& start);

  void OnEvent(const providers::StreamEvent& event) override;
  void OnWhole(const model_call::WholeAnswer& answer) override;
  boost::asio::awaitable<bool> Flush() override;
  boost::asio::awaitable<bool> Idle() override;
  void OnEnd(const Error* error) override;

  // Feeds the encoder an event of the turn's own (an error, a cancel's end) outside the call.
  void Feed(const providers::StreamEvent& event) { OnEvent(event); }
  // After the turn has stored what it must: whatever is held, and the stream's end.
  boost::asio::awaitable<void> Close();
  bool client_left() const { return left_; }
  // What is held back (the terminal events) until Close: a background turn stores its log's
  // text and this as the turn's whole stream.
  const std::string& held() const { return out_; }
  // Called once, before the encoder renders the answer's last events (the guard's report is
  // complete by then).
  void set_before_end(std::function<void()> before_end) { before_end_ = std::move(before_end); }

 private:
  boost::asio::awaitable<bool> Send(size_t bytes);

  http::Exchange* const exchange_;
  core::RequestContext& ctx_;
  providers::openai_responses::ResponsesStreamEncoder& encoder_;
  const Delivery delivery_;
  const bool stream_;  // the frames are delivered (to the client or the log)
  EventLog* const log_;
  std::string out_;
  size_t held_ = std::string::npos;  // out_ from here on waits for Close
  bool left_ = false;
  std::function<void()> before_end_;
};

}  // namespace turnpike::agents
