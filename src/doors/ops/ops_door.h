// The ops door: what an orchestrator and a scraper ask of every replica.
//
//   GET /healthz   alive: 200 {"status":"ok"}
//   GET /readyz    200, or 503 {"status":"draining"} while the server drains
//   GET /metrics   Prometheus text, summed over all workers (core/request_probe.h)
//
// HEAD is answered as GET. Errors (405, a GET with a body) are in OpenAI's envelope, as the
// gateway's other unversioned paths. Never governed: no key is needed.
//
// Ownership and threads: one OpsDoor per worker; the probe registry outlives it.
#pragma once

#include <vector>

#include "core/door.h"
#include "core/request_probe.h"
#include "core/worker_core.h"

namespace turnpike::doors::ops {

class OpsDoor : public core::Door {
 public:
  OpsDoor(const core::ProbeRegistry& probes, core::WorkerCore& core)
      : probes_(probes), core_(core) {}

  static std::vector<core::RouteSpec> Routes();

  boost::asio::awaitable<void> Handle(http::Exchange& exchange, core::RouteMatch match) override;
  core::ErrorReply RenderError(int route, const Error& error) const override;

 private:
  const core::ProbeRegistry& probes_;
  core::WorkerCore& core_;
};

}  // namespace turnpike::doors::ops
