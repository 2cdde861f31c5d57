// How a model call's answer reaches the parts that consume it: the client's encoder (the door
// answering its client), a recorder (a cache entry, an agent's memory), a guard, coalesced
// followers. A ModelCall (model_call.h) delivers one answer to one or more AnswerSinks, in the
// same order to each:
//
//   OnStart                                   once, when the answering attempt is chosen;
//                                             for a stream then co_await Flush() (its head)
//   then, for a stream, per upstream read:    OnEvent...  OnFrames      then  co_await Flush()
//             or, while the upstream is silent for the keep-alive period:  co_await Idle()
//   OnEnd                                     once (complete, or failed mid-answer), then a
//                                             last co_await Flush()
//   or, for a whole answer (complete once read): OnWhole, OnEnd(nullptr), then one
//                                             co_await Flush()
//
// Two shapes of content, chosen per attempt by the call (AnswerStart::identity):
//   translated  the upstream's dialect decoded into pivot events (providers/events.h); a sink
//               renders them in whatever dialect it serves
//   identity    the upstream speaks the client's dialect: its bytes, a read's complete frames
//               in one OnFrames (an SSE event with its blank line, or an NDJSON line, each
//               untouched); the call still taps them (usage, finish, first token) and, when a
//               sink asked for events (AnswerStart::events), decodes them into pivot events
//               too, delivered before that read's frames
// A sink overrides only what it uses.
//
// Back-pressure: the next upstream read starts only after every sink's Flush of the previous
// read returned. A sink that must not slow the others (a follower, a recorder) never waits in
// Flush: it copies what it keeps and returns at once, and says so in FlushAtOnce. Flush returning
// false says the consumer has gone (its client left): it gets no more calls, and the call ends the
// upstream read once no sink that serves a client is left (ModelCall's rules).
//
// Lifetimes: event strings and whole bodies are valid only during the call that receives them;
// frames' bytes until the Flush that follows them returns (so that a client sink can send
// adjacent frames as one view of the upstream's read, without a copy; the span that lists them
// only during OnFrames). A sink that keeps anything
// copies it. The exceptions: WholeAnswer::content_type, valid until the Flush that follows, and
// WholeAnswer::storage, which the client's sink may move out in its Flush (a recorder copies
// in OnWhole, before any Flush).
// Threads: a sink is called only on the call's worker thread. A sink that hands data to
// another thread (a follower on another worker) copies it first (fan_out.h).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/error.h"
#include "providers/events.h"

namespace turnpike::model_call {

struct AnswerStart {
  bool stream = false;       // per-read content follows; false: one OnWhole
  bool identity = false;     // frames (OnFrames) in the client's dialect; false: events
  bool events = false;       // identity: pivot events are decoded and delivered as well
  unsigned status = 200;     // the upstream's status (2xx, or an identity error passed on whole)
  std::string_view dialect;  // the dialect of the upstream's answer
  std::string_view content_type;    // the upstream's Content-Type
  std::string_view upstream_model;  // the model the deployment was asked for
};

// What the call's tap read from an identity frame.
enum class FrameKind : uint8_t {
  kData,       // a data frame
  kUsageOnly,  // an OpenAI chunk carrying only usage (sent when the gateway asked for usage)
  kOther,      // a comment or an event with no data
};

// One complete upstream frame of an identity answer, untouched, and what the tap read from it.
struct IdentityFrame {
  std::string_view bytes;
  FrameKind kind = FrameKind::kData;
};

// A whole (non-stream) answer. Identity: `body` is the upstream's bytes. Translated: `response`
// is the parsed answer (body empty), for a sink to render in its dialect.
struct WholeAnswer {
  unsigned status = 200;
  std::string_view content_type;
  std::string_view body;
  const providers::Response* response = nullptr;
  std::string* storage = nullptr;  // body's own bytes (see Lifetimes above); null for response
};

class AnswerSink {
 public:
  virtual ~AnswerSink() = default;

  virtual void OnStart(const AnswerStart& start) {}
  // One pivot event (translated, or decoded from an identity frame when asked).
  virtual void OnEvent(const providers::StreamEvent& event) {}
  // Identity: one read's complete upstream frames, in order (one call per read: a sink's cost
  // per frame is its own loop, not a virtual call).
  virtual void OnFrames(std::span<const IdentityFrame> frames) {}
  virtual void OnWhole(const WholeAnswer& answer) {}
  // Delivers what this read gave. false: this consumer has gone (see the top of this file).
  virtual boost::asio::awaitable<bool> Flush() { co_return true; }
  // Flush for a sink that never waits in it (a recorder, a fan-out to followers), done at once:
  // its result, and the call then skips Flush (and the coroutine frame it costs per read);
  // nullopt, the default, asks the call to await Flush().
  virtual std::optional<bool> FlushAtOnce() { return std::nullopt; }
  // The upstream has been silent for the keep-alive period (a stream's client gets a comment).
  // false: this consumer has gone.
  virtual boost::asio::awaitable<bool> Idle() { co_return true; }
  // The answer ended: `error` null when it completed, else what cut it (an upstream failure
  // mid-answer, or a stream that ended without its final event).
  virtual void OnEnd(const Error* error) {}
  // True for a sink that serves a client (the upstream read continues while one is left); a
  // recorder or a guard that serves nobody by itself says false.
  virtual bool serves_client() const { return true; }
  // True for a sink that keeps pivot events (a recorder): an identity answer is then decoded
  // for it as well (AnswerStart::events), at the cost of running the decoder.
  virtual bool wants_events() const { return false; }
};

}  // namespace turnpike::model_call
