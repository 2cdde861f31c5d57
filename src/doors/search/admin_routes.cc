#include "doors/search/admin_routes.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <string>
#include <utility>

#include "core/worker_core.h"
#include "doors/search/search_door.h"

namespace turnpike::search {
namespace net = boost::asio;
namespace json = boost::json;

namespace {

using Answer = Result<core::AdminAnswer>;

net::awaitable<Answer> ListIndices(core::WorkerCore* worker, size_t door, std::string tenant,
                                   std::chrono::milliseconds timeout) {
  auto* search = worker != nullptr ? static_cast<SearchDoor*>(worker->door(door)) : nullptr;
  if (search == nullptr) {
    co_return Error{ErrorCode::kInternal, "the search door is missing on this worker", ""};
  }
  const Deadline deadline = Clock::now() + timeout;
  Result<std::vector<IndexListing>> listed =
      co_await search->backend().ListIndices(std::move(tenant), deadline);
  if (!listed.ok()) co_return listed.error();
  json::array data;
  data.reserve(listed->size());
  for (const IndexListing& l : *listed) {
    data.push_back(json::object{{"object", "search.index"},
                                {"tenant", l.tenant},
                                {"index", l.index},
                                {"docs_count", l.doc_count},
                                {"created_at", l.created_ms / 1000}});
  }
  co_return core::AdminAnswer{200,
                              json::serialize(json::object{{"object", "list"}, {"data", data}})};
}

}  // namespace

std::vector<core::AdminRoute> SearchAdminRoutes(size_t door, std::chrono::milliseconds timeout) {
  std::vector<core::AdminRoute> routes;
  routes.push_back({"/admin/v1/search/indices",
                    {core::Verb::get},
                    core::TenantFrom::Query("tenant"),
                    [door, timeout](const core::AdminCall& call) {
                      return ListIndices(call.worker, door, call.tenant, timeout);
                    }});
  return routes;
}

}  // namespace turnpike::search
