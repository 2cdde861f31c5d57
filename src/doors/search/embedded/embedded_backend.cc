// EmbeddedBackend: each call copies what the engine thread needs (the scope's strings; the
// request by pointer, which the awaiting coroutine keeps alive) into a job on the Engine.
#include "doors/search/embedded/engine.h"

namespace turnpike::search::embedded {
namespace {

struct Names {
  std::string tenant;
  std::string index;
  uint64_t request = 0;
};
Names Own(Scope scope) {
  return Names{std::string(scope.tenant), std::string(scope.index), scope.request};
}

}  // namespace

const Capabilities& EmbeddedBackend::capabilities() const {
  static const Capabilities kAll{.bm25 = true,
                                 .phrase = true,
                                 .prefix = true,
                                 .multi_key_sort = true,
                                 .keyword_sort = true,
                                 .search_after = true,
                                 .exact_count = true,
                                 .terms_aggs = true,
                                 .range_aggs = true,
                                 .histogram_aggs = true,
                                 .filtered_knn = true,
                                 .max_candidates = kExactTotal};
  return kAll;
}

Awaitable<Status> EmbeddedBackend::CreateIndex(Scope scope, Mapping mapping, Deadline deadline) {
  auto fn = [n = Own(scope), m = std::move(mapping)](Store& s) mutable {
    return s.CreateIndex(n.tenant, n.index, std::move(m));
  };
  Status r = co_await engine_.Call<Ok>(deadline, std::move(fn));
  co_return r;
}

Awaitable<Result<IndexInfo>> EmbeddedBackend::GetIndex(Scope scope, Deadline deadline) {
  auto fn = [n = Own(scope)](Store& s) { return s.GetIndex(n.tenant, n.index); };
  Result<IndexInfo> r = co_await engine_.Call<IndexInfo>(deadline, std::move(fn));
  co_return r;
}

Awaitable<Status> EmbeddedBackend::DeleteIndex(Scope scope, Deadline deadline) {
  auto fn = [n = Own(scope)](Store& s) { return s.DeleteIndex(n.tenant, n.index); };
  Status r = co_await engine_.Call<Ok>(deadline, std::move(fn));
  co_return r;
}

Awaitable<Result<std::vector<IndexListing>>> EmbeddedBackend::ListIndices(std::string tenant,
                                                                          Deadline deadline) {
  auto fn = [t = std::move(tenant)](Store& s) -> Result<std::vector<IndexListing>> {
    return s.ListIndices(t);
  };
  Result<std::vector<IndexListing>> r =
      co_await engine_.Call<std::vector<IndexListing>>(deadline, std::move(fn));
  co_return r;
}

Awaitable<Status> EmbeddedBackend::PutMapping(Scope scope, Mapping mapping, Deadline deadline) {
  auto fn = [n = Own(scope), m = std::move(mapping)](Store& s) mutable {
    return s.PutMapping(n.tenant, n.index, std::move(m));
  };
  Status r = co_await engine_.Call<Ok>(deadline, std::move(fn));
  co_return r;
}

Awaitable<Status> EmbeddedBackend::Refresh(Scope scope, Deadline deadline) {
  // Writes are visible when acknowledged; refresh only checks the index exists.
  auto fn = [n = Own(scope)](Store& s) -> Status {
    Result<Coverage> c = s.Cover(n.tenant, n.index);
    if (!c.ok()) return c.error();
    return Ok{};
  };
  Status r = co_await engine_.Call<Ok>(deadline, std::move(fn));
  co_return r;
}

Awaitable<Result<std::vector<WriteResult>>> EmbeddedBackend::Write(Scope scope,
                                                                   std::vector<WriteOp> ops,
                                                                   Deadline deadline) {
  auto fn = [n = Own(scope), o = std::move(ops)](Store& s) mutable {
    return s.Write(n.tenant, n.index, std::move(o));
  };
  Result<std::vector<WriteResult>> r =
      co_await engine_.Call<std::vector<WriteResult>>(deadline, std::move(fn));
  co_return r;
}

Awaitable<Result<std::optional<StoredDocument>>> EmbeddedBackend::Get(Scope scope, std::string id,
                                                                      Deadline deadline) {
  auto fn = [n = Own(scope), i = std::move(id)](Store& s) { return s.Get(n.tenant, n.index, i); };
  Result<std::optional<StoredDocument>> r =
      co_await engine_.Call<std::optional<StoredDocument>>(deadline, std::move(fn));
  co_return r;
}

Awaitable<Result<Page>> EmbeddedBackend::Search(Scope scope, const SearchRequest& request,
                                                Deadline deadline) {
  auto fn = [n = Own(scope), r = &request](Store& s) {
    return s.Search(n.tenant, n.index, *r, n.request);
  };
  Result<Page> r = co_await engine_.Call<Page>(deadline, std::move(fn));
  co_return r;
}

Awaitable<Result<Total>> EmbeddedBackend::Count(Scope scope, const Query& query, const Knn* knn,
                                                int64_t up_to, Deadline deadline) {
  auto fn = [n = Own(scope), q = &query, knn, up_to](Store& s) {
    return s.Count(n.tenant, n.index, *q, knn, up_to, n.request);
  };
  Result<Total> r = co_await engine_.Call<Total>(deadline, std::move(fn));
  co_return r;
}

Awaitable<Result<std::vector<AggResult>>> EmbeddedBackend::Aggregate(
    Scope scope, const Query& query, const std::vector<Aggregation>& aggs, Deadline deadline) {
  auto fn = [n = Own(scope), q = &query, a = &aggs](Store& s) {
    return s.Aggregate(n.tenant, n.index, *q, *a, n.request);
  };
  Result<std::vector<AggResult>> r =
      co_await engine_.Call<std::vector<AggResult>>(deadline, std::move(fn));
  co_return r;
}

Awaitable<Result<Coverage>> EmbeddedBackend::Cover(Scope scope, Deadline deadline) {
  auto fn = [n = Own(scope)](Store& s) { return s.Cover(n.tenant, n.index); };
  Result<Coverage> r = co_await engine_.Call<Coverage>(deadline, std::move(fn));
  co_return r;
}

}  // namespace turnpike::search::embedded
