// Filters: the governed steps a request passes before its door does the work (governance:
// auth, budgets, rate limits; the LLM door's route; a cache plugs in the same way), and after.
//
// The chain follows Envoy's continue / stop-and-resume. OnRequest runs in chain order and
// returns what the chain does next:
//   kContinue  go on to the next filter; after the last one the door does its work
//   kRespond   stop: the door answers with context.refusal; no later filter runs
//   kSuspend   stop until this filter's Resume() completes (a snapshot reload, a cold lookup,
//              a lease refill); Resume returns kContinue or kRespond and the chain goes on
// The synchronous path costs nothing extra: Run() is a plain function that walks the filters
// and returns; only a suspension makes the door co_await Resume(), the one coroutine frame.
//
//   FilterStatus status = chain.Run(ctx);
//   if (status == FilterStatus::kSuspend) status = co_await chain.Resume(ctx);
//   ... kRespond: answer ctx.refusal; kContinue: do the work ...
//   chain.Complete(ctx);   // always, exactly once
//
// OnComplete runs for every filter whose OnRequest ran (context.filters_ran), in reverse
// order, exactly once per request, whatever the outcome: that is where a reservation is
// settled or released.
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
  // kRespond: set context.refusal first.
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
