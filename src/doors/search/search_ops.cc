// The search door's _search, _count and _msearch: parse against the index's mapping, check
// the backend's capabilities, run the legs concurrently and join them.
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <optional>

#include "doors/search/es_error.h"
#include "doors/search/render.h"
#include "doors/search/search_door.h"
#include "doors/search/search_join.h"

namespace turnpike::search {
namespace {

namespace asio = boost::asio;
using Reply = SearchDoor::Reply;

// Waits for the legs spawned on this worker. Single-threaded (the worker's).
class Join {
 public:
  explicit Join(asio::any_io_executor executor) : timer_(std::move(executor)) {}
  void Add() { ++pending_; }
  void Done() {
    if (--pending_ == 0) timer_.cancel();
  }
  asio::awaitable<void> Wait() {
    while (pending_ > 0) {
      timer_.expires_at(asio::steady_timer::time_point::max());
      boost::system::error_code ec;
      co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
  }

 private:
  int pending_ = 0;
  asio::steady_timer timer_;
};

// One leg: awaits `work` into `out`, then tells the join (state as parameters: GCC 12).
template <typename T>
asio::awaitable<void> Leg(asio::awaitable<Result<T>> work, std::optional<Result<T>>* out,
                          Join* join, SearchDoor::Timing* timing, std::string_view name) {
  const Clock::time_point start = timing != nullptr ? Clock::now() : Clock::time_point{};
  try {
    Result<T> r = co_await std::move(work);
    out->emplace(std::move(r));
    if (timing != nullptr) timing->Add(name, Clock::now() - start);
  } catch (const std::exception& e) {
    out->emplace(Error{ErrorCode::kInternal, std::string("search leg failed: ") + e.what(), ""});
  }
  join->Done();
}

template <typename T>
void Spawn(asio::any_io_executor executor, asio::awaitable<Result<T>> work,
           std::optional<Result<T>>& out, Join& join, SearchDoor::Timing* timing,
           std::string_view name) {
  join.Add();
  asio::co_spawn(executor, Leg<T>(std::move(work), &out, &join, timing, name), asio::detached);
}

// The request asks only for what the backend does natively, or a 400 naming the feature.
Status CheckCapabilities(const SearchRequest& r, const Backend& backend) {
  const Capabilities& c = backend.capabilities();
  auto refuse = [&](std::string_view feature) -> Status {
    return EsError(kIllegalArgument, std::string(feature) + " is not supported by the " +
                                         std::string(backend.name()) + " search backend");
  };
  const size_t user_keys = r.sort.size() - 1;  // without the _id tie-breaker
  if (user_keys > 1 && !c.multi_key_sort) return refuse("sorting on more than one key");
  for (const SortKey& k : r.sort) {
    if (k.kind == SortKey::Kind::kField && k.type == FieldType::kKeyword && !c.keyword_sort) {
      return refuse("sorting on a keyword field");
    }
  }
  if (!r.search_after.empty() && !c.search_after) return refuse("search_after");
  if (r.track_total_up_to == kExactTotal && !c.exact_count) return refuse("an exact total");
  if (r.knn && r.knn->filter && !c.filtered_knn) return refuse("a filtered knn");
  for (const Aggregation& a : r.aggs) {
    if (a.kind == Aggregation::Kind::kTerms && !c.terms_aggs) return refuse("a terms aggregation");
    if (a.kind == Aggregation::Kind::kRange && !c.range_aggs) return refuse("a range aggregation");
    if (a.kind == Aggregation::Kind::kHistogram && !c.histogram_aggs) {
      return refuse("a histogram aggregation");
    }
  }
  if (r.query.Scores() && !c.bm25) return refuse("scored text queries (BM25)");
  if (r.knn && r.query.kind != QueryKind::kMatchAll) {
    return EsError(kIllegalArgument,
                   "combining [knn] with [query] is not implemented; put the "
                   "query in the knn's [filter]");
  }
  return Ok{};
}

int64_t ElapsedMs(Clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
}

}  // namespace

asio::awaitable<Reply> SearchDoor::Compute(Call& call, std::string_view index,
                                           std::string_view body, bool count, bool* complete) {
  const Clock::time_point start = Clock::now();
  // One token per search (not per HTTP request: an msearch runs several), process-wide.
  static std::atomic<uint64_t> searches{0};
  const Scope scope{call.scope.tenant, index, searches.fetch_add(1, std::memory_order_relaxed) + 1};
  Result<IndexInfo> info = co_await backend_->GetIndex(scope, call.deadline);
  if (!info.ok()) co_return ErrorOf(info.error());
  if (call.timing != nullptr) call.timing->Add("es_mapping", Clock::now() - start);
  // A cached mapping may lack what another replica added: re-read it before refusing.
  const Scope fresh{scope.tenant, scope.index, 0};
  if (count) {
    Result<Query> query = ParseCount(body, info->mapping, call.now_ms);
    if (!query.ok() && backend_->capabilities().cached_mappings) {
      info = co_await backend_->GetIndex(fresh, call.deadline);
      if (!info.ok()) co_return ErrorOf(info.error());
      query = ParseCount(body, info->mapping, call.now_ms);
    }
    if (!query.ok()) co_return ErrorOf(query.error());
    Result<Total> total =
        co_await backend_->Count(scope, *query, nullptr, kExactTotal, call.deadline);
    if (!total.ok()) co_return ErrorOf(total.error());
    if (complete != nullptr) *complete = !total->timed_out;
    co_return Reply{200, R"({"count":)" + std::to_string(total->value) + R"(,"_shards":)" +
                             RenderShards(Coverage{}) + "}"};
  }
  Result<SearchRequest> request = ParseSearch(body, info->mapping, call.target.url, call.now_ms);
  if (!request.ok() && backend_->capabilities().cached_mappings) {
    info = co_await backend_->GetIndex(fresh, call.deadline);
    if (!info.ok()) co_return ErrorOf(info.error());
    request = ParseSearch(body, info->mapping, call.target.url, call.now_ms);
  }
  if (!request.ok()) co_return ErrorOf(request.error());
  Status capable = CheckCapabilities(*request, *backend_);
  if (!capable.ok()) co_return ErrorOf(capable.error());
  const SearchRequest& req = *request;

  asio::any_io_executor executor = co_await asio::this_coro::executor;
  Join join(executor);
  LegResults legs;
  std::optional<Result<Coverage>> coverage;
  const Knn* knn = req.knn ? &*req.knn : nullptr;
  const Clock::time_point spawned =
      call.timing != nullptr || req.timeout ? Clock::now() : Clock::time_point{};
  // The request's `timeout` bounds every leg; the door's own deadline bounds it.
  const Deadline deadline =
      req.timeout && *req.timeout < call.deadline - spawned
          ? spawned + std::chrono::duration_cast<Clock::duration>(*req.timeout)
          : call.deadline;
  if (req.size > 0) {
    Spawn(executor, backend_->Search(scope, req, deadline), legs.page, join, call.timing,
          "es_page");
  }
  if (req.track_total_up_to > 0) {
    Spawn(executor, backend_->Count(scope, req.query, knn, req.track_total_up_to, deadline),
          legs.total, join, call.timing, "es_count");
  }
  if (!req.aggs.empty()) {
    Spawn(executor, backend_->Aggregate(scope, req.query, req.aggs, deadline), legs.aggs, join,
          call.timing, "es_aggs");
  }
  Spawn(executor, backend_->Cover(scope, deadline), coverage, join, call.timing, "es_cover");
  co_await join.Wait();
  const Clock::time_point joined = call.timing != nullptr ? Clock::now() : Clock::time_point{};
  if (call.timing != nullptr) call.timing->Add("es_join", joined - spawned);

  legs.coverage = std::move(*coverage);
  Result<Joined> result = JoinLegs(req, std::move(legs));
  if (!result.ok()) co_return ErrorOf(result.error());
  const Joined& j = *result;
  SearchAnswer answer;
  answer.request = &req;
  answer.index = index;
  answer.coverage = j.coverage;
  answer.page = j.page ? &*j.page : nullptr;
  answer.total = j.total ? &*j.total : nullptr;
  answer.aggs = j.aggs ? &*j.aggs : nullptr;
  answer.shard_failure = j.shard_failure ? &*j.shard_failure : nullptr;
  answer.timed_out = j.timed_out;
  answer.took_ms = ElapsedMs(start);
  if (complete != nullptr) *complete = j.complete();
  Reply reply{200, RenderSearch(answer)};
  if (call.timing != nullptr) call.timing->Add("es_render", Clock::now() - joined);
  co_return reply;
}

asio::awaitable<Reply> SearchDoor::MsearchOp(Call& call) {
  namespace json = boost::json;
  const Clock::time_point start = Clock::now();
  std::string_view body = call.exchange.request().body();
  std::vector<std::string_view> lines;
  while (!body.empty()) {
    const size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    body = nl == std::string_view::npos ? std::string_view{} : body.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos) lines.push_back(line);
  }
  if (lines.empty() || lines.size() % 2 != 0) {
    co_return ErrorOf(EsError(kIllegalArgument, "msearch needs header and body lines in pairs"));
  }
  std::string out = R"({"took":0,"responses":[)";
  for (size_t i = 0; i < lines.size(); i += 2) {
    boost::system::error_code ec;
    json::value header = json::parse(lines[i], ec);
    std::string index = call.target.index;
    std::optional<bool> request_cache = call.target.url.request_cache;
    Status ok = Ok{};
    if (ec || !header.is_object()) {
      ok = EsError(kParsingException,
                   "msearch header line " + std::to_string(i + 1) + " must be a JSON object");
    } else {
      for (const auto& [key, value] : header.as_object()) {
        if (key == "index" && value.is_string()) {
          index = std::string(value.as_string());
        } else if (key == "index" && value.is_array() && value.as_array().size() == 1 &&
                   value.as_array()[0].is_string()) {
          index = std::string(value.as_array()[0].as_string());
        } else if (key == "request_cache") {
          if (!value.is_bool()) {
            ok = EsError(kIllegalArgument, "msearch header [request_cache] must be a boolean");
          } else {
            request_cache = value.as_bool();
          }
        } else if (key != "ignore_unavailable" && key != "expand_wildcards" &&
                   key != "allow_no_indices") {
          ok = EsError(kIllegalArgument,
                       "msearch header key [" + std::string(key) + "] is not supported");
        }
      }
    }
    if (ok.ok()) ok = ValidIndexName(index);
    Reply r;
    if (ok.ok()) {
      const std::string_view search_body = lines[i + 1];
      r = co_await RunSearch(call, index, search_body, false,
                             cache::ModeFromRequestCache(request_cache));
    } else {
      r = ErrorOf(ok.error());
    }
    if (i > 0) out += ',';
    if (r.status == 200) {
      r.body.pop_back();
      out += r.body + R"(,"status":200})";
    } else {
      out += r.body;  // the error shape already carries its status
    }
  }
  out += "]}";
  const std::string took = std::to_string(ElapsedMs(start));
  out.replace(8, 1, took);
  co_return Reply{200, std::move(out)};
}

}  // namespace turnpike::search
