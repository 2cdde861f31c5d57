// GuardSink: the output guard as a stage on a model call's answer (model_call/answer_sink.h).
// It is the call's sink; the sinks that must see the guarded answer (the client's encoder, a
// recorder for the agent's memory) sit behind it and receive every callback from it, in order:
//
//   guard::GuardSink guard(agent.guard_config, turn.context_hosts, turn.guard_report);
//   guard.AddDownstream(client_sink);
//   guard.AddDownstream(memory_recorder);
//   call.AddSink(guard);  // first: the call's leader, serving the request's client
//   ... after the call: turn.guard_report.replacements -> CallRecord::guard_replacements;
//       .replacements and .hosts -> the response's metadata
//
// One GuardSink may serve each model call of a turn in turn (OnStart begins a new text); the
// turn's context hosts may grow between calls (tool outputs), not during one.
//
// Translated answers only: a text delta goes through an OutputGuard (output_guard.h) and what it
// releases goes on as a text delta with the event's other fields (nothing when it released
// nothing). Any other event first ends the text: what was held goes on as one text delta, then
// the event (so a tool call, the finish and the end never overtake held text); OnEnd does the
// same before passing on. A whole answer's Response::text (unescaped) is guarded in one pass and
// the downstream sinks get a copy of the Response with the guarded text. Reasoning and tool-call
// arguments pass untouched: they are not the answer's text.
//
// Identity answers (frames in the client's dialect, OnFrames, or a whole identity body) cannot
// be rewritten and pass through untouched: a door that guards has its AttemptSource choose
// translated answers; bypassed() says an identity answer went through unguarded.
//
// Flush and Idle go to every downstream sink; one that returns false (its client left) gets no
// more calls, and the guard's own Flush returns false once none is left. serves_client() and
// wants_events() are those of the sinks still there.
//
// Ownership: borrows the config, the context hosts, the report and the downstream sinks, which
// must outlive it. Lifetimes: a forwarded event's text is valid during that OnEvent only (the
// guard's buffer or the upstream's bytes), as answer_sink.h promises. Threads: the call's worker.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/container/small_vector.hpp>
#include <optional>

#include "guard/output_guard.h"
#include "model_call/answer_sink.h"
#include "providers/events.h"

namespace turnpike::guard {

class GuardSink final : public model_call::AnswerSink {
 public:
  GuardSink(const GuardConfig& config, const HostSet& context, GuardReport& report);

  // In delivery order; before the call starts.
  void AddDownstream(model_call::AnswerSink& sink) { downstream_.push_back(&sink); }

  void OnStart(const model_call::AnswerStart& start) override;
  void OnEvent(const providers::StreamEvent& event) override;
  void OnFrames(std::span<const model_call::IdentityFrame> frames) override;
  void OnWhole(const model_call::WholeAnswer& answer) override;
  boost::asio::awaitable<bool> Flush() override;
  boost::asio::awaitable<bool> Idle() override;
  void OnEnd(const Error* error) override;
  bool serves_client() const override;
  bool wants_events() const override;

  // An identity answer passed through unguarded.
  bool bypassed() const { return bypassed_; }

 private:
  void Forward(const providers::StreamEvent& event);
  void ReleaseHeld();
  boost::asio::awaitable<bool> Deliver(bool idle);

  OutputGuard stream_;  // escaped event text
  OutputGuard whole_;   // a whole answer's unescaped text
  boost::container::small_vector<model_call::AnswerSink*, 2> downstream_;
  std::optional<providers::Response> guarded_;  // a whole answer with its text guarded
  bool bypassed_ = false;
};

}  // namespace turnpike::guard
