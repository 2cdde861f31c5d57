// The search door's use of the response cache (cache/cache.h; the contract is in
// search_door.h): the key of a search, the lookup, and the fill of a complete answer.
#include <array>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <charconv>
#include <chrono>
#include <memory>

#include "cache/canonical_json.h"
#include "common/block_cache.h"
#include "doors/search/search_door.h"

namespace turnpike::search {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using Reply = SearchDoor::Reply;

// Most search bodies parse inside this buffer (a cached block: no heap allocation for the key's
// parse once warm).
constexpr size_t kParseBuffer = 4096;
struct ParseBuffer final : CachedBlock {
  std::array<unsigned char, kParseBuffer> bytes;
};
// A key no search or count body may carry (both parsers refuse unknown keys with a 400, which
// is never cached): it tells a `_count` from a `_search` of the same body.
constexpr std::string_view kOpKey = "\x01op";

// The defaults ParseSearch applies (query.h), so `{}` and `{"size":10}` share an entry.
const json::object& SearchDefaults() {
  static const json::object defaults{{"from", 0}, {"size", 10}, {"track_total_hits", 10'000}};
  return defaults;
}

int64_t ElapsedMs(Clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
}

// URL options override the body's (ParseSearch): fold them in, so the key sees what runs.
// Values that do not parse are left as strings: ParseSearch refuses them, and errors are not
// cached.
void FoldUrlOptions(const UrlOptions& url, json::object& body) {
  if (url.from) body["from"] = *url.from;
  if (url.size) body["size"] = *url.size;
  if (url.track_total_hits) {
    const std::string& t = *url.track_total_hits;
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
    if (t == "true" || t == "false") {
      body["track_total_hits"] = t == "true";
    } else if (ec == std::errc{} && end == t.data() + t.size()) {
      body["track_total_hits"] = n;
    } else {
      body["track_total_hits"] = t;
    }
  }
  // Not a body key (ParseSearch refuses it there), so it cannot collide with one.
  if (url.rest_total_hits_as_int) body["rest_total_hits_as_int"] = *url.rest_total_hits_as_int;
}

// One outcome per HTTP answer: an msearch is a hit if every search hit, bypass if every one
// bypassed, else miss.
void Note(SearchDoor::Call& call, cache::Outcome outcome) {
  if (!call.cache_outcome) {
    call.cache_outcome = outcome;
  } else if (*call.cache_outcome != outcome) {
    call.cache_outcome = cache::Outcome::kMiss;
  }
}

}  // namespace

asio::awaitable<Reply> SearchDoor::RunSearch(Call& call, std::string_view index,
                                             std::string_view body, bool count, cache::Mode mode) {
  cache::Cache* const cache = options_.cache;
  if (cache == nullptr) {
    Reply r = co_await Compute(call, index, body, count, nullptr);
    co_return r;
  }
  const Clock::time_point start = Clock::now();
  // The parse's first bytes, in a cached block rather than on this frame (common/block_cache.h):
  // a frame over 1,020 bytes is a malloc and a free per search.
  auto buffer = std::make_unique_for_overwrite<ParseBuffer>();
  json::monotonic_resource resource(buffer->bytes.data(), buffer->bytes.size());
  json::value root;
  if (mode == cache::Mode::kBypass) {
    // Asked not to use the cache: the body is left to the search's own parser.
  } else if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    root = json::object(&resource);
  } else {
    boost::system::error_code ec;
    root = json::parse(body, ec, &resource);
    if (ec || !root.is_object()) mode = cache::Mode::kBypass;  // the parser answers its 400
  }
  if (mode == cache::Mode::kUse && cache::UsesNowDateMath(root)) mode = cache::Mode::kBypass;
  if (mode == cache::Mode::kBypass) {
    cache->CountBypass(worker_);
    Note(call, cache::Outcome::kBypass);
    Reply r = co_await Compute(call, index, body, count, nullptr);
    co_return r;
  }

  json::object& request = root.as_object();
  if (count) {
    request[kOpKey] = "count";
  } else {
    FoldUrlOptions(call.target.url, request);
  }
  const cache::CanonicalOptions options{count ? nullptr : &SearchDefaults(), {}};
  const std::string canonical = cache::CanonicalJsonValue(root, options);
  cache::CacheKey key = cache::MakeKey(call.scope.tenant, index, digester_->Of(canonical));
  const int64_t now_ms = call.now_ms;  // the request's one instant (date math's `now` too)
  const Clock::time_point keyed = call.timing != nullptr ? Clock::now() : Clock::time_point{};
  if (call.timing != nullptr) call.timing->Add("es_key", keyed - start);
  auto acquire = cache->Acquire(std::move(key), now_ms, worker_);
  cache::Lookup lookup = co_await std::move(acquire);
  if (call.timing != nullptr) call.timing->Add("es_cache", Clock::now() - keyed);
  if (lookup.hit()) {
    Note(call, cache::Outcome::kHit);
    const cache::Envelope& envelope = *lookup.envelope();
    co_return Reply{envelope.status, cache::RestampedBody(envelope, ElapsedMs(start))};
  }

  Note(call, cache::Outcome::kMiss);
  Reply reply = co_await ComputeAndFill(call, index, body, count, lookup);
  co_return reply;  // an unfilled lookup releases the key's waiters when it goes
}

asio::awaitable<SearchDoor::Reply> SearchDoor::ComputeAndFill(Call& call, std::string_view index,
                                                              std::string_view body, bool count,
                                                              cache::Lookup& lookup) {
  bool complete = false;
  Reply reply = co_await Compute(call, index, body, count, &complete);
  if (reply.status == 200 && complete) {
    cache::Envelope envelope;
    envelope.status = 200;
    envelope.body = reply.body;
    auto fill = options_.cache->Fill(lookup, std::move(envelope), call.now_ms);
    co_await std::move(fill);
  }
  co_return reply;
}

}  // namespace turnpike::search
