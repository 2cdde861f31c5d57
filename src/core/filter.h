// Filters: the governed steps a request passes before its door does the work (governance:
// auth, budgets, rate limits; the LLM door's route; a cache plugs in the same way), and after.
//
// The chain follows Envoy's continue / stop-and-resume. OnRequest runs in chain order and
// returns what the chain does next:
//   kContinue  go on to the next filter; after the last one the door does its work
//   kRespond   stop: no later filter runs and the door does not do its work; the request is
//              answered with what this filter set, exactly one of
//                context.refusal  an error: the door renders it in its API's shape and status
//                                 (a 401, a 429, a 404 for a model the door does not route)
//                context.answer   a success (answer.h): status, headers, content type, and a
//                                 whole body or an AnswerStream the core runs (a cache hit, a
//                                 replayed stream); the filter that set it owns nothing after
//   kSuspend   stop until this filter's Resume() completes (a snapshot reload, a cold lookup,
//              a lease refill); Resume returns kContinue or kRespond and the chain goes on
// The synchronous path costs nothing extra: Run() is a plain function that walks the filters
// and returns; only a suspension makes the door co_await Resume(), the one coroutine frame.
//
//   FilterStatus status = chain.Run(ctx);
//   if (status == FilterStatus::kSuspend) status = co_await chain.Resume(ctx);
//   if (status == FilterStatus::kRespond) {
//     co_await core.AnswerFromChain(exchange, ctx, render_error);  // worker_core.h
//   } else {
//     ... do the work ...
//   }
//   chain.Complete(ctx);   // always, exactly once
//
// Every door answers kRespond through WorkerCore::AnswerFromChain, so a refusal and a filter's
// success answer reach the client the same way whichever door runs the chain: the door only
// says how its errors look. Response headers a filter decides (the governance filter's
// x-ratelimit-* and Retry-After) go on the exchange through context.response_headers when the
// filter decides, so they are on every answer: a refusal, a filter's answer, or the door's own.
//
// OnComplete runs for every filter whose OnRequest ran (context.filters_ran), in reverse
// order, exactly once per request, whatever the outcome, also after a filter answered (its
// stream has run by then): that is where a reservation is settled or released.
//
// Ownership and threads: a filter is shared, immutable configuration plus per-worker state;
// it is made once per worker for one door's chain and called only on that worker's thread, so
// it needs no locks. A filter must not hold a lock across its Resume's co_await.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <vector>

#include "core/request_context.h"

namespace turnpike::core {

enum class FilterStatus : uint8_t { kContinue, kRespond, kSuspend };

class Filter {
 public:
  virtual ~Filter() = default;
  // kRespond: set context.refusal or context.answer first (one of them).
  virtual FilterStatus OnRequest(RequestContext& context) { return FilterStatus::kContinue; }
  // Called (and awaited) once after OnRequest returned kSuspend; never returns kSuspend.
  virtual boost::asio::awaitable<FilterStatus> Resume(RequestContext& context);
  virtual void OnComplete(RequestContext& context) {}
};

// One chain per door per worker.
class FilterChain {
 public:
  void Add(std::unique_ptr<Filter> filter) { filters_.push_back(std::move(filter)); }
  bool empty() const { return filters_.empty(); }

  // Runs OnRequest from the first filter not yet run, in order, until one responds or
  // suspends or all continued.
  FilterStatus Run(RequestContext& context);
  // After Run (or Resume) returned kSuspend: awaits the suspended filter, then runs the rest.
  boost::asio::awaitable<FilterStatus> Resume(RequestContext& context);
  // Runs OnComplete of every filter that ran, in reverse order.
  void Complete(RequestContext& context);

 private:
  std::vector<std::unique_ptr<Filter>> filters_;
};

}  // namespace turnpike::core
