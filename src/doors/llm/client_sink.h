// The LLM door's client as a sink of a model call (model_call/answer_sink.h): renders the
// call's answer in the dialect the client called and writes it to the Exchange.
//
//   stream, identity     the upstream's frames forwarded untouched, without a copy: frames that
//                        lie one after the other in the upstream's read are one view of it, and
//                        a read's views (split by a frame completed from the previous read, or
//                        by a dropped one) go out gathered in one write; on the OpenAI chat
//                        wire the usage-only chunk is dropped when the gateway asked for usage
//                        on the client's behalf
//   stream, translated   pivot events rendered by the client dialect's StreamEncoder
//   whole                identity bytes with the upstream's status, or the parsed answer
//                        rendered by the client dialect (RenderWholeResponse)
//   an end with an error the client dialect's in-stream error event, then the end of stream
//
// With a recording (ClientSinkOptions::recording: a cache entry, an agent's memory), the sink
// reports what it rendered for a translated answer as its form's frames (model_call/recorder.h):
// each event's bytes as one frame, a whole answer's body as the whole form's one frame; its
// form is closed when its client leaves before the end; the in-stream error it renders at the
// end is not reported (a replay renders its own). An identity answer's frames are the
// upstream's, which the Recorder keeps itself: the sink reports none.
//
// The stream's head (200, text/event-stream, Cache-Control: no-cache, Server-Timing when on)
// goes out at the Flush after OnStart, before the first upstream read; a `: keep-alive`
// comment (a comment in every SSE dialect) on Idle. A client that leaves is logged as 499 and
// says so from Flush: the call then stops reading for it.
//
// Ownership: on the flow's frame for one call; borrows the exchange, the core, the context and
// the client's Provider. Single-threaded.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "core/request_context.h"
#include "core/worker_core.h"
#include "http/exchange.h"
#include "model_call/answer_sink.h"
#include "model_call/recorder.h"
#include "providers/provider.h"

namespace turnpike::doors::llm {

struct ClientSinkOptions {
  const providers::Provider* client = nullptr;  // the dialect the client speaks
  bool openai_chat = false;      // the OpenAI chat API (its identity frames, its error event)
  bool include_usage = false;    // an OpenAI client asked for the usage chunk
  std::string_view client_body;  // the client's request (EncoderOptions::client_body)
  const boost::json::object* client_document = nullptr;  // EncoderOptions::client_document
  bool server_timing = false;
  // Set: a translated answer's frames are reported into it as the client's form (see above).
  model_call::Recording* recording = nullptr;
};

class ClientSink final : public model_call::AnswerSink {
 public:
  ClientSink(http::Exchange& exchange, core::WorkerCore& core, core::RequestContext& ctx,
             const ClientSinkOptions& options)
      : exchange_(exchange), core_(core), ctx_(ctx), options_(options) {}

  void OnStart(const model_call::AnswerStart& start) override;
  void OnEvent(const providers::StreamEvent& event) override;
  void OnFrames(std::span<const model_call::IdentityFrame> frames) override;
  void OnWhole(const model_call::WholeAnswer& answer) override;
  boost::asio::awaitable<bool> Flush() override;
  boost::asio::awaitable<bool> Idle() override;
  void OnEnd(const Error* error) override;

 private:
  enum class Step : uint8_t { kIdle, kHead, kBytes, kWhole, kEnd, kDone };

  providers::EncoderOptions EncoderOptionsOf() const;
  void AddHeadHeaders();
  // This read's bytes as pieces_[0, count): the views, then out_; the views are handed over.
  size_t TakePending();
  bool Left();

  http::Exchange& exchange_;
  core::WorkerCore& core_;
  core::RequestContext& ctx_;
  const ClientSinkOptions options_;
  model_call::AnswerStart start_;
  Step step_ = Step::kIdle;
  std::unique_ptr<providers::StreamEncoder> encoder_;  // translated streams
  std::optional<model_call::FormRecorder> frames_;     // a recording's form; until OnEnd
  // This read's bytes: runs of adjacent identity frames as views into the upstream's read
  // (pieces_[0, views_)), then out_ (rendered bytes, or frames past kViews runs, copied).
  static constexpr size_t kViews = http::Exchange::kMaxPieces - 1;
  std::array<std::string_view, http::Exchange::kMaxPieces> pieces_;
  size_t views_ = 0;
  std::string out_;
  bool ended_ = false;  // an end or error event was rendered
  bool gone_ = false;   // the client left
  // A whole answer waiting for its Flush.
  unsigned whole_status_ = 0;
  std::string_view whole_type_;  // static, or the upstream's header (alive until the Flush)
  std::string whole_body_;       // a translated answer, rendered
  std::string* whole_storage_ = nullptr;  // an identity answer: the call's bytes, moved out
};

}  // namespace turnpike::doors::llm
