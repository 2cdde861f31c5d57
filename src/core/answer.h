// A success answer a filter gives instead of the door's work (FilterStatus::kRespond with
// context.answer set, filter.h): a response cache's hit, a replayed stream. The other answer a
// filter can give is an error, context.refusal, which the door renders in its API's shape.
// WorkerCore::AnswerFromChain (worker_core.h) answers either, the same way for every door.
//
// An Answer is a status, a content type, extra header lines, and a body: either whole (`body`,
// sent with its length) or produced piece by piece by an AnswerStream (`stream`, sent as a
// streamed body: StartStream, the stream's writes, EndStream).
//
// Ownership: the answer lives in the request's context (the door's coroutine frame) until the
// request ends; the core runs its stream on the request's worker, once, and the context
// destroys it. What `content_type` views must outlive the context (a constant, or bytes the
// stream or the filter's per-worker state keeps). Single-threaded (the connection's worker).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>
#include <string_view>

namespace turnpike::http {
class Exchange;
}

namespace turnpike::core {

struct RequestContext;

// The body of a streamed answer (the response cache will replay recorded SSE frames this way).
class AnswerStream {
 public:
  virtual ~AnswerStream() = default;

  // Writes the body with exchange.Write(), in order. The core has sent the head (StartStream
  // with the answer's status, content type and headers) before, and ends the body
  // (EndStream) after, unless this returned false: as soon as a Write returns false (the
  // client left) it stops and returns false, and the request is counted as cancelled (499).
  // It may record what it sent on `context` for accounting (output_bytes, phases.first_token,
  // usage); it must not Respond, StartStream or EndStream itself.
  virtual boost::asio::awaitable<bool> WriteBody(http::Exchange& exchange,
                                                 RequestContext& context) = 0;
};

struct Answer {
  unsigned status = 200;
  std::string_view content_type;  // see Ownership above
  std::string header_lines;       // "Name: value\r\n" each; added to the response as they are
  std::string body;               // the whole body, when there is no stream
  std::unique_ptr<AnswerStream> stream;

  void AddHeader(std::string_view name, std::string_view value) {
    header_lines.append(name).append(": ").append(value).append("\r\n");
  }
};

}  // namespace turnpike::core
