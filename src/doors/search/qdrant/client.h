// One JSON call to Qdrant's REST API over the worker's upstream pool (upstream/call.h): send,
// read the whole (bounded) answer, unwrap Qdrant's envelope {"result": ..., "status": "ok"}.
//
// Ownership and threads: a Client borrows its worker's Pool and the shared, immutable
// Settings; it lives on that worker's thread. Calls may run concurrently (the search legs).
// Nothing blocks: the call suspends on the pool's sockets.
//
// Deadlines: every call carries one. The connect, first-byte and idle timeouts of the
// upstream call are the time left until it, and every call but a GET passes it to Qdrant as
// its `timeout` (whole seconds, at least 1); a missed deadline is kUpstreamTimeout with ES
// type timeout_exception.
//
// Errors: unreachable -> kUnavailable (503); 404 -> kNotFound with ES type
// index_not_found_exception (the collection is missing); any other refusal or an unparseable
// answer -> kUpstreamBadResponse (502) quoting Qdrant's `status.error`.
#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <string>
#include <string_view>

#include "doors/search/backend.h"
#include "upstream/origin.h"
#include "upstream/pool.h"

namespace turnpike::search::qdrant {

struct Settings {
  upstream::Origin origin;  // "http(s)://host:port[/base]"
  std::string api_key;      // sent as `api-key`; empty = none
  size_t max_answer_bytes = 64 * 1024 * 1024;
  int64_t max_candidates = 10'000;  // the bound of gateway-side sorts and aggregations
  // The mapping cache (mapping_cache.h): how long an entry is trusted without a read of the
  // collection (0 = off), and how many (tenant, index) entries the process keeps.
  std::chrono::milliseconds mapping_ttl{5'000};
  size_t mapping_cache_entries = 4096;
};

class Client {
 public:
  Client(upstream::Pool& pool, const Settings& settings);

  // `target` is the path after the origin's base path ("/collections/x/points/count").
  // Answers the envelope's `result`. The views must stay valid until the call completes
  // (callers name them before co_await).
  Awaitable<Result<boost::json::value>> Call(std::string_view method, std::string_view target,
                                             std::string_view body, Deadline deadline);

  // Requests sent by this client (for the per-request budget tests).
  uint64_t calls() const { return calls_; }

 private:
  upstream::Pool& pool_;
  const Settings& settings_;
  std::string api_key_header_;  // "api-key: ..." or empty
  uint64_t calls_ = 0;
};

}  // namespace turnpike::search::qdrant
