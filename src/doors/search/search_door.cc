#include "doors/search/search_door.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>

#include "common/block_cache.h"
#include "doors/search/es_error.h"

namespace turnpike::search {
namespace {

// A request's context (~1.6 KiB) and answer, kept off Handle's coroutine frame, which Asio
// would otherwise malloc (and free) per request (common/block_cache.h).
struct RequestState final : CachedBlock {
  core::RequestContext ctx;
  std::string content_type;
  std::optional<SearchDoor::Timing> timing;
  SearchDoor::Reply reply;
  std::optional<SearchDoor::Call> call;
};

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kApiKeyScheme = "ApiKey ";
constexpr std::string_view kCompatible = "compatible-with=";

template <typename Field>
std::string_view Header(const http::Request& request, Field field) {
  auto it = request.find(field);
  return it == request.end() ? std::string_view{} : std::string_view(it->value());
}

// The compatible-with version the client asked for: 0 none, -1 unsupported.
int CompatibleWith(const http::Request& request) {
  int version = 0;
  for (std::string_view value : {Header(request, boost::beast::http::field::accept),
                                 Header(request, boost::beast::http::field::content_type)}) {
    const size_t at = value.find(kCompatible);
    if (at == std::string_view::npos) continue;
    const std::string_view v = value.substr(at + kCompatible.size(), 1);
    if (v != "8" && v != "9") return -1;
    version = v[0] - '0';
  }
  return version;
}

int64_t UnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void SearchDoor::Timing::Add(std::string_view name, Clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), ";dur=%.3f",
                std::chrono::duration<double, std::milli>(d).count());
  if (!entries.empty()) entries += ", ";
  entries += name;
  entries += buf;
}

SearchDoor::Reply ErrorOf(const Error& error) {
  return {HttpStatus(error.code), RenderEsError(error)};
}

SearchDoor::SearchDoor(const SearchDoorOptions& options, std::unique_ptr<Backend> backend,
                       core::WorkerCore& core, size_t worker)
    : options_(options), backend_(std::move(backend)), core_(core), worker_(worker) {
  if (std::unique_ptr<core::Filter> governance = core.MakeGovernanceFilter()) {
    chain_.Add(std::move(governance));
  }
  if (options_.cache != nullptr) {
    // OpenSSL fails to make a SHA-256 context only when it is broken: start-up is abandoned.
    Result<cache::Digester> digester = cache::Digester::Create();
    if (!digester.ok()) throw std::runtime_error("search cache: " + digester.error().message);
    digester_.emplace(std::move(*digester));
  }
}

std::vector<core::RouteSpec> SearchDoor::Routes(const SearchDoorOptions& options) {
  return {core::RouteSpec{options.prefix + "/**", {}, "search", 0}};
}

core::ErrorReply SearchDoor::RenderError(int route, const Error& error) const {
  return ErrorOf(error);
}

void SearchDoor::Shutdown() { backend_->Shutdown(); }

boost::asio::awaitable<void> SearchDoor::Handle(http::Exchange& exchange, core::RouteMatch match) {
  // The request's state in a cached block, not on this frame (common/block_cache.h):
  // default-initialised, as locals would be.
  auto state = std::make_unique_for_overwrite<RequestState>();
  core::RequestContext& ctx = state->ctx;
  core_.Start(exchange, match, ctx);
  const http::Request& request = exchange.request();
  exchange.response_headers().Add("X-Elastic-Product", "Elasticsearch");
  const int compat = CompatibleWith(request);
  std::string& content_type = state->content_type;
  content_type =
      compat > 0 ? "application/vnd.elasticsearch+json;compatible-with=" + std::to_string(compat)
                 : std::string(kJson);
  const std::string_view target = exchange.target();
  const size_t q = target.find('?');
  Result<Target> parsed =
      ParseTarget(request.method(), match.rest,
                  q == std::string_view::npos ? std::string_view{} : target.substr(q + 1));
  if (compat < 0) {
    parsed = EsError("media_type_header_exception",
                     "Accept/Content-Type: only compatible-with=8 or 9 is supported");
  }
  ctx.model = parsed.ok() ? std::string(OpLabel(parsed->op)) : "es";
  if (ctx.trace.on) {
    ctx.trace.kind = observability::TraceKind::kSearch;
    if (parsed.ok()) ctx.trace.search_index = parsed->index;
  }
  ctx.phases.parsed = core::Clock::now();

  Reply& reply = state->reply;
  bool chain_ran = false;
  std::optional<cache::Outcome> cache_outcome;
  std::optional<Timing>& timing = state->timing;
  if (core_.server_timing()) timing.emplace();
  if (!parsed.ok()) {
    reply = ErrorOf(parsed.error());
  } else {
    core::WorkerCore::ReadCredentials(exchange, ctx);
    // ES clients send `Authorization: ApiKey <key>`: the same key as a Bearer one.
    if (ctx.authorization.size() > kApiKeyScheme.size() &&
        ctx.authorization.substr(0, kApiKeyScheme.size()) == kApiKeyScheme) {
      ctx.x_api_key = ctx.authorization.substr(kApiKeyScheme.size());
      ctx.authorization = {};
    }
    ctx.billing.model = "search";
    ctx.billing.prompt_bytes = static_cast<int64_t>(request.body().size());
    const Op op = parsed->op;
    ctx.billing.per_query = op == Op::kSearch || op == Op::kCount || op == Op::kMsearch;
    chain_ran = true;
    core::FilterStatus status = chain_.Run(ctx);
    if (status == core::FilterStatus::kSuspend) status = co_await chain_.Resume(ctx);
    if (status == core::FilterStatus::kRespond) {
      // A refusal in ES's shape, or a filter's own answer; x-ratelimit-* are already on.
      const core::RenderError render = [](const Error& error) { return ErrorOf(error); };
      co_await core_.AnswerFromChain(exchange, ctx, render, content_type);
      chain_.Complete(ctx);
      core_.Finish(exchange, ctx);
      co_return;
    }
    if (ctx.principal.tenant == nullptr) {
      reply = ErrorOf(EsError("security_exception", "the search door needs governance on",
                              ErrorCode::kUnauthorized));
    } else {
      ctx.phases.admitted = core::Clock::now();
      Call& call = state->call.emplace(Call{exchange,
                                            std::move(*parsed),
                                            Scope{ctx.principal.tenant->tenant.id, {}},
                                            Clock::now() + options_.timeout,
                                            timing ? &*timing : nullptr,
                                            UnixMillis(),
                                            std::nullopt,
                                            {}});
      call.scope.index = call.target.index;
      reply = co_await Dispatch(call);
      cache_outcome = call.cache_outcome;
      state->call.reset();
    }
  }
  if (reply.status >= 400) ctx.error = ErrorCodeForStatus(reply.status);
  if (cache_outcome) {
    exchange.response_headers().Add(cache::kXCacheHeader, cache::XCacheValue(*cache_outcome));
  }
  if (timing && !timing->entries.empty()) {
    exchange.response_headers().Add("Server-Timing", timing->entries);
  }
  if (request.method() == boost::beast::http::verb::head) reply.body.clear();
  co_await core_.Respond(exchange, ctx, static_cast<unsigned>(reply.status), content_type,
                         std::move(reply.body));
  if (chain_ran) chain_.Complete(ctx);
  core_.Finish(exchange, ctx);
}

boost::asio::awaitable<void> SearchDoor::InvalidateWritten(Call& call) {
  if (options_.cache == nullptr) co_return;
  using boost::beast::http::verb;
  const verb method = call.exchange.request().method();
  const bool reads = method == verb::get || method == verb::head;
  switch (call.target.op) {
    case Op::kIndex:
    case Op::kMapping:
    case Op::kDoc:
      if (reads) co_return;
      call.written.push_back(call.target.index);
      break;
    case Op::kRefresh:
    case Op::kDocNew:
    case Op::kCreate:
    case Op::kUpdate:
      call.written.push_back(call.target.index);
      break;
    case Op::kBulk:  // BulkOp listed the indexes it wrote to
      break;
    default:
      co_return;
  }
  for (std::string& index : call.written) {
    std::string tenant(call.scope.tenant);
    // A failed L2 bump is counted (l2_errors); the write stands, and other replicas may serve
    // the index's old answers until their TTL: the write's answer is not failed for it.
    Status ignored =
        co_await options_.cache->Invalidate(std::move(tenant), std::move(index), worker_);
    (void)ignored;
  }
}

boost::asio::awaitable<SearchDoor::Reply> SearchDoor::Dispatch(Call& call) {
  Reply reply = co_await DispatchOp(call);
  co_await InvalidateWritten(call);
  co_return reply;
}

boost::asio::awaitable<SearchDoor::Reply> SearchDoor::DispatchOp(Call& call) {
  const std::string_view body = call.exchange.request().body();
  switch (call.target.op) {
    case Op::kInfo: {
      const std::string number = CompatibleWith(call.exchange.request()) == 8 ? "8.19.0" : "9.0.0";
      co_return Reply{
          200,
          R"({"name":"turnpike","cluster_name":"turnpike","cluster_uuid":"turnpike-search","version":{"number":")" +
              number +
              R"(","build_flavor":"default","build_type":"turnpike","lucene_version":"10.0.0","minimum_wire_compatibility_version":"8.18.0","minimum_index_compatibility_version":"8.0.0"},"tagline":"You Know, for Search"})"};
    }
    case Op::kIndex: {
      Reply r = co_await IndexOp(call);
      co_return r;
    }
    case Op::kMapping: {
      Reply r = co_await MappingOp(call);
      co_return r;
    }
    case Op::kRefresh: {
      Status s = co_await backend_->Refresh(call.scope, call.deadline);
      if (!s.ok()) co_return ErrorOf(s.error());
      co_return Reply{200, R"({"_shards":{"total":1,"successful":1,"failed":0}})"};
    }
    case Op::kDocNew:
    case Op::kDoc:
    case Op::kCreate:
    case Op::kUpdate: {
      Reply r = co_await DocOp(call);
      co_return r;
    }
    case Op::kBulk: {
      Reply r = co_await BulkOp(call);
      co_return r;
    }
    case Op::kSearch:
    case Op::kCount: {
      Reply r = co_await RunSearch(call, call.target.index, body, call.target.op == Op::kCount,
                                   cache::ModeFromRequestCache(call.target.url.request_cache));
      co_return r;
    }
    case Op::kMsearch: {
      Reply r = co_await MsearchOp(call);
      co_return r;
    }
  }
  co_return ErrorOf(Error{ErrorCode::kInternal, "unknown operation", ""});
}

}  // namespace turnpike::search
