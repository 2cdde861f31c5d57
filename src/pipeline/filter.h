// Filters: the governed steps every request passes before and after its upstream call
// (governance: auth, budgets, rate limits; then route; a cache plugs in the same way).
//
// A Filter is shared, immutable configuration plus per-worker state; it is made once per
// worker and called only on that worker's thread, so it needs no locks. OnRequest runs in
// chain order before the upstream call and returns what the chain does next; OnComplete runs
// for every filter whose OnRequest ran, in reverse order, exactly once per request, whatever
// the outcome (that is where a reservation is settled or released).
#pragma once

#include <memory>
#include <vector>

#include "common/error.h"
#include "pipeline/request_context.h"

namespace turnpike::pipeline {

enum class FilterStatus {
  // Go on to the next filter; after the last one the front door calls the upstream.
  kContinue,
  // Stop here and answer the client with `error`; no later filter and no upstream call runs.
  kRespond,
};

class Filter {
 public:
  virtual ~Filter() = default;
  // `error` is filled when returning kRespond.
  virtual FilterStatus OnRequest(RequestContext& context, Error& error) {
    return FilterStatus::kContinue;
  }
  virtual void OnComplete(RequestContext& context) {}
};

// Runs filters in order. One chain per worker.
class FilterChain {
 public:
  void Add(std::unique_ptr<Filter> filter) { filters_.push_back(std::move(filter)); }

  // Runs OnRequest in order. Returns the error of the filter that answered, or nullopt to go on.
  // `ran` receives how many filters ran (pass it to Complete).
  std::optional<Error> Request(RequestContext& context, size_t& ran);
  // Runs OnComplete of the first `ran` filters in reverse order.
  void Complete(RequestContext& context, size_t ran);

 private:
  std::vector<std::unique_ptr<Filter>> filters_;
};

}  // namespace turnpike::pipeline
