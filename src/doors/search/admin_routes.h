// The search door's admin resource (core/admin_route.h):
//
//   GET /admin/v1/search/indices[?tenant=t]  every index, or tenant t's (a tenant's admin token:
//       its own): {"object": "list", "data": [{"object": "search.index", "tenant", "index",
//       "docs_count", "created_at" (unix seconds)}]}, by tenant then index
//
// The list is read from the search door's backend on the worker the call runs on (one per
// worker: WorkerCore::door), so it is what the Elasticsearch API's own index calls see, on
// either backend.
//
// Thread safety: the handler runs on any worker, on that worker's door only.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "core/admin_route.h"

namespace turnpike::search {

// `door`: the search door's index in app/'s list of doors; `timeout`: the list's deadline.
std::vector<core::AdminRoute> SearchAdminRoutes(size_t door, std::chrono::milliseconds timeout);

}  // namespace turnpike::search
