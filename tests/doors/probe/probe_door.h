// The probe door: a door that exists only for the tests, built by following docs/extending.md's
// checklists ("a door that calls a model", "a feature with its own store role", "an admin
// resource", "receiving a hand-off"). Nothing in src/ names it: main.cc registers it with one
// line, in a binary of its own. It proves those seams from outside the product's own doors.
//
//   POST /v1/responses {"model": "probe:<model>", "input": "<text>"}
//       handed over by the LLM door (the "probe:" prefix, core/handoff.h); governed by the
//       core's governance filter; calls <model> through model_call::ModelCall (a streamed,
//       translated call from a pivot request: model_call::PivotSource) with two sinks: the
//       door's own, which serves this client, and a Recorder; writes the recorded answer to its
//       table (probe_store.h) on the store thread; answers
//       {"object": "probe.answer", "id", "model", "text", "events", "streamed"}
//   GET /admin/v1/probe/answers        (admin token; operator only)
//       {"data": [{"id", "model", "text", "events"}...]}, oldest first
//
// Errors are OpenAI-shaped. Ownership and threads: one door per worker (core/door.h); the
// shared part (ProbeShared) outlives the server.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <random>

#include "app/feature.h"
#include "core/door.h"
#include "core/filter.h"
#include "core/worker_core.h"
#include "model_call/model_call.h"

namespace turnpike::probe {

class ProbeDoor final : public core::Door {
 public:
  ProbeDoor(const app::FeatureContext& context, int worker, core::WorkerCore& core);

  boost::asio::awaitable<void> Handle(http::Exchange& exchange, core::RouteMatch match) override;
  core::ErrorReply RenderError(int route, const Error& error) const override;
  boost::asio::awaitable<void> Receive(http::Exchange& exchange, core::RouteMatch match,
                                       core::HandedRequest request) override;

 private:
  // Answers `error` and accounts the request.
  boost::asio::awaitable<void> Refuse(http::Exchange& exchange, core::RequestContext& ctx,
                                      const Error& error, bool chain_ran);

  const app::FeatureContext context_;
  core::WorkerCore& core_;
  core::FilterChain chain_;
  const upstream::CallOptions call_options_;
  std::minstd_rand rng_;
  const model_call::CallDeps call_deps_;
};

// The feature as main.cc registers it: the role, the door (model prefix "probe:") and its admin
// route.
app::Feature ProbeFeature();

}  // namespace turnpike::probe
