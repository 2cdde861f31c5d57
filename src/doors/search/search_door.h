// The search door: Elasticsearch's REST API (the subset in target.h) under a prefix ("/es" by
// default, so the official client takes `node: 'http://host:8080/es'`), over a Backend
// (backend.h) made per worker by app/.
//
// A request: WorkerCore::Start; the target parsed (a path or parameter outside the subset is
// a 400, never ignored); the governance filter (keys as `Authorization: ApiKey <key>`,
// `Bearer <key>` or `x-api-key`; RPM; budgets; billed as the model "search"); the operation,
// whose index is looked up under the key's tenant (never one named in the body); the answer,
// with `X-Elastic-Product: Elasticsearch` and the media type the client asked for
// (`application/vnd.elasticsearch+json; compatible-with=8|9`, else application/json); Finish
// (one call-log row). Errors are ES's {"error":{...},"status":N} with the matching status.
//
// With `server.server_timing` on, the answer carries a second Server-Timing header with the
// search's phases (mapping, page, count, aggs, cover, join, render) besides the core's.
//
// A search runs its legs concurrently (the page, the count when totals are tracked, the
// aggregations when asked for, the coverage for `_shards`), each under `search.timeout`, and
// joins them; a leg that failed makes the request fail (no partial answers yet).
//
// Ownership and threads: one SearchDoor per worker, used on that worker's thread; it owns its
// Backend; the WorkerCore outlives it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/door.h"
#include "core/filter.h"
#include "core/worker_core.h"
#include "doors/search/backend.h"
#include "doors/search/target.h"

namespace turnpike::search {

struct SearchDoorOptions {
  std::string prefix = "/es";
  std::chrono::milliseconds timeout{10'000};
};

class SearchDoor : public core::Door {
 public:
  SearchDoor(const SearchDoorOptions& options, std::unique_ptr<Backend> backend,
             core::WorkerCore& core);

  static std::vector<core::RouteSpec> Routes(const SearchDoorOptions& options);

  boost::asio::awaitable<void> Handle(http::Exchange& exchange, core::RouteMatch match) override;
  core::ErrorReply RenderError(int route, const Error& error) const override;
  void Shutdown() override;

  // One request's state while an operation runs (the handlers' argument).
  // Server-Timing entries of the search's own phases (`server.server_timing`): mapping (the
  // index lookup), each leg (page, count, aggs, cover), join (spawn to the last leg's end),
  // render. Null when off: then nothing is timed.
  struct Timing {
    std::string entries;  // "es_page;dur=0.120, ..."
    void Add(std::string_view name, Clock::duration d);
  };
  struct Call {
    http::Exchange& exchange;
    Target target;
    Scope scope;
    Deadline deadline;
    Timing* timing = nullptr;
  };
  using Reply = core::ErrorReply;  // status and body

 private:
  boost::asio::awaitable<Reply> Dispatch(Call& call);
  boost::asio::awaitable<Reply> IndexOp(Call& call);
  boost::asio::awaitable<Reply> MappingOp(Call& call);
  boost::asio::awaitable<Reply> DocOp(Call& call);
  boost::asio::awaitable<Reply> BulkOp(Call& call);
  boost::asio::awaitable<Reply> SearchOp(Call& call, std::string_view body, bool count);
  boost::asio::awaitable<Reply> MsearchOp(Call& call);
  // One search on `index` (the legs and the join).
  boost::asio::awaitable<Reply> RunSearch(Call& call, std::string_view index, std::string_view body,
                                          bool count);

  const SearchDoorOptions& options_;
  std::unique_ptr<Backend> backend_;
  core::WorkerCore& core_;
  core::FilterChain chain_;
};

// Reply helpers shared by the door's files.
SearchDoor::Reply ErrorOf(const Error& error);

}  // namespace turnpike::search
