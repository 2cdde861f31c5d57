#include "doors/llm/cache_filter.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>

#include "common/clock.h"
#include "governance/cost.h"
#include "http/exchange.h"
#include "model_call/replay.h"

namespace turnpike::doors::llm {
namespace net = boost::asio;
using core::FilterStatus;
using store::CacheStatus;

namespace {

constexpr std::string_view kJson = "application/json";
constexpr int64_t kMaxTtlSeconds = int64_t{366} * 24 * 3600;

constexpr std::array<std::string_view, 5> kOpenAiChatExcluded = {"stream", "stream_options", "user",
                                                                 "store", "metadata"};
constexpr std::array<std::string_view, 2> kAnthropicExcluded = {"stream", "metadata"};
constexpr std::array<std::string_view, 3> kCompletionsExcluded = {"stream", "stream_options",
                                                                  "user"};
constexpr std::array<std::string_view, 1> kStreamOnly = {"stream"};

// Whether the comma-separated Cache-Control value holds `directive` (case-insensitive).
bool HasDirective(std::string_view value, std::string_view directive) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    std::string_view token = value.substr(0, comma);
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t'))
      token.remove_prefix(1);
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
    if (token.size() == directive.size() &&
        std::equal(token.begin(), token.end(), directive.begin(),
                   [](char a, char b) { return (a | 0x20) == b; })) {
      return true;
    }
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

governance::TokenUsage BillableUsage(const core::Usage& u) {
  const int64_t completion = std::max<int64_t>(u.completion_tokens, 0);
  return {std::max<int64_t>(u.prompt_tokens, 0), completion, std::max<int64_t>(u.cached_tokens, 0),
          std::max<int64_t>(u.cache_creation_tokens, 0),
          std::clamp<int64_t>(u.reasoning_tokens, 0, completion)};
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string_view Body(const CacheableRequest& request) {
  return std::string_view(request.http->body().data(), request.http->body().size());
}

std::string_view Header(const CacheableRequest& request, std::string_view name) {
  return http::FieldValue(*request.http, name);
}

// The client's form: its dialect, stream or whole, and what its encoder needs.
model_call::ReplayOptions ReplayOptionsOf(const CacheableRequest& request) {
  model_call::ReplayOptions options;
  options.form = {request.client->name(), request.stream};
  options.provider = request.client;
  options.encoder.created = UnixSeconds();
  options.encoder.include_usage = request.include_usage;
  options.encoder.client_body = Body(request);
  return options;
}

// Sends `frames` in order, the first ones stamping the request's first token. Frames that lie
// one after the other in memory (a recording keeps them so, block by block) go out as one
// view; up to Exchange::kMaxPieces views per write.
net::awaitable<bool> WriteFrames(http::Exchange& exchange, core::RequestContext& ctx,
                                 std::span<const std::string_view> frames) {
  if (!frames.empty() && ctx.phases.first_token == core::Clock::time_point{}) {
    ctx.phases.first_token = core::Clock::now();
  }
  std::array<std::string_view, http::Exchange::kMaxPieces> pieces;
  size_t count = 0;
  for (size_t i = 0; i <= frames.size(); ++i) {
    const bool last = i == frames.size();
    if (!last && count > 0 &&
        pieces[count - 1].data() + pieces[count - 1].size() == frames[i].data()) {
      pieces[count - 1] =
          std::string_view(pieces[count - 1].data(), pieces[count - 1].size() + frames[i].size());
      continue;
    }
    if (count == pieces.size() || (last && count > 0)) {
      const std::span<const std::string_view> batch(pieces.data(), count);
      const bool written = co_await exchange.WritePieces(batch);
      if (!written) co_return false;
      count = 0;
    }
    if (!last && !frames[i].empty()) pieces[count++] = frames[i];
  }
  co_return true;
}

// A stored answer replayed as a stream: the first step was taken by the filter (to know the form
// can be rendered before the head goes out).
class HitStream final : public core::AnswerStream {
 public:
  HitStream(StoredAnswer answer, const model_call::ReplayOptions& options)
      : answer_(std::move(answer)), replay_(*answer_.recording, options) {}

  model_call::ReplayStep First() { return replay_.Next(kStepBytes); }
  void Keep(const model_call::ReplayStep& first) { first_ = first; }

  net::awaitable<bool> WriteBody(http::Exchange& exchange, core::RequestContext& ctx) override {
    model_call::ReplayStep step = first_;
    for (;;) {
      const bool written = co_await WriteFrames(exchange, ctx, step.frames);
      if (!written) co_return false;
      if (step.end) co_return true;
      step = replay_.Next(kStepBytes);
    }
  }

 private:
  static constexpr size_t kStepBytes = 64 * 1024;
  StoredAnswer answer_;
  model_call::Replay replay_;
  model_call::ReplayStep first_;
};

// A call in flight followed as a stream, from the read the filter took.
class FollowerStream final : public core::AnswerStream {
 public:
  FollowerStream(model_call::Follower& follower, const model_call::FollowerRead& first)
      : follower_(follower), first_(first) {}

  net::awaitable<bool> WriteBody(http::Exchange& exchange, core::RequestContext& ctx) override {
    model_call::FollowerRead read = first_;
    for (;;) {
      const bool written = co_await WriteFrames(exchange, ctx, read.frames);
      if (!written) {
        follower_.Leave();
        co_return false;
      }
      if (read.end) co_return true;
      read = co_await follower_.Next();
    }
  }

 private:
  model_call::Follower& follower_;
  model_call::FollowerRead first_;
};

}  // namespace

uint64_t DigestSeedOf(std::string_view secret) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : secret) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::span<const std::string_view> ExcludedFields(std::string_view dialect) {
  if (dialect == "openai") return kOpenAiChatExcluded;
  if (dialect == "anthropic") return kAnthropicExcluded;
  if (dialect == "openai_completions") return kCompletionsExcluded;
  if (dialect == "gemini") return {};  // streaming is in the URL
  return kStreamOnly;                  // openai_responses, cohere
}

bool CacheFilter::Enabled(const LlmContext& ctx) const {
  const config::LlmCacheConfig& config = cache_.config();
  if (config.ttl.count() <= 0) return false;
  const governance::Plan* plan = ctx.principal.plan;
  if (plan == nullptr || plan->cache.mode == governance::CachePolicy::Mode::kDefault) {
    return config.enabled;
  }
  return plan->cache.mode == governance::CachePolicy::Mode::kOn;
}

void CacheFilter::Mark(LlmContext& ctx, CacheStatus status, std::string_view header) {
  ctx.cache_status = status;
  if (ctx.response_headers != nullptr) ctx.response_headers->Add(kCacheHeader, header);
}

bool CacheFilter::ReadHeaders(LlmContext& ctx, bool& no_cache) {
  CacheTicket& ticket = ctx.cache;
  const std::string_view cache_control = Header(ticket.request, "cache-control");
  no_cache = HasDirective(cache_control, "no-cache");
  ticket.no_store = HasDirective(cache_control, "no-store");
  ticket.ttl = cache_.config().ttl;
  const std::string_view ttl = Header(ticket.request, kCacheTtlHeader);
  if (ttl.empty()) return true;
  int64_t seconds = -1;
  const auto [end, ec] = std::from_chars(ttl.data(), ttl.data() + ttl.size(), seconds);
  if (ec != std::errc() || end != ttl.data() + ttl.size() || seconds < 0 ||
      seconds > kMaxTtlSeconds) {
    ctx.refusal =
        Error{ErrorCode::kInvalidRequest,
              "x-turnpike-cache-ttl must be a whole number of seconds (0 stores nothing).",
              std::string(kCacheTtlHeader)};
    return false;
  }
  ticket.ttl = std::min(ticket.ttl, std::chrono::milliseconds(seconds * 1000));
  return true;
}

bool CacheFilter::MakeKey(LlmContext& ctx) {
  CacheTicket& ticket = ctx.cache;
  const std::string_view dialect = ticket.request.client->name();
  Result<cache::Digest128> digest = digester_.Of(Body(ticket.request), ExcludedFields(dialect));
  if (!digest.ok()) return false;
  const governance::Principal& who = ctx.principal;
  const std::string_view key_id =
      who.plan != nullptr && who.plan->cache.key_scope && who.key != nullptr
          ? std::string_view(who.key->key.public_id)
          : std::string_view();
  const std::string_view tenant =
      who.tenant != nullptr ? std::string_view(who.tenant->tenant.id) : std::string_view();
  if (!space_.Holds(tenant, dialect, ctx.model, key_id)) {
    space_.Assign(tenant, dialect, ctx.model, key_id);
  }
  ticket.key = cache::MakeKey(space_.space, digest.value(), std::move(old_id_));
  return true;
}

bool CacheFilter::Space::Holds(std::string_view tenant, std::string_view dialect_in,
                               std::string_view model_in, std::string_view key_id_in) const {
  return !space.ns_id.empty() && model == model_in && dialect == dialect_in &&
         key_id == key_id_in && space.tenant() == tenant;
}

void CacheFilter::Space::Assign(std::string_view tenant, std::string_view dialect_in,
                                std::string_view model_in, std::string_view key_id_in) {
  dialect.assign(dialect_in);
  model.assign(model_in);
  key_id.assign(key_id_in);
  // The namespace: "<dialect> <model length>:<model>[ <key id>]", printable (Redis key names)
  // and unambiguous whatever the model's name holds.
  std::string ns;
  ns.append(dialect).push_back(' ');
  char digits[24];
  const auto [digits_end, ec] = std::to_chars(digits, digits + sizeof(digits), model.size());
  ns.append(digits, digits_end).push_back(':');
  ns.append(model);
  if (!key_id.empty()) ns.append(" ").append(key_id);
  space.Assign(tenant, ns);
}

FilterStatus CacheFilter::OnRequest(core::RequestContext& context) {
  auto& ctx = static_cast<LlmContext&>(context);
  CacheTicket& ticket = ctx.cache;
  if (ticket.request.client == nullptr || !Enabled(ctx)) return FilterStatus::kContinue;
  bool no_cache = false;
  if (!ReadHeaders(ctx, no_cache)) return FilterStatus::kRespond;
  const governance::Principal& who = ctx.principal;
  const bool key_off = who.key != nullptr && who.key->key.cache_off;
  if (key_off || (no_cache && ticket.no_store) || !MakeKey(ctx)) {
    cache_.probe(worker_).cache.bypasses.Add();
    Mark(ctx, CacheStatus::kBypass, "bypass");
    return FilterStatus::kContinue;
  }
  ticket.tool_calls = who.plan != nullptr && who.plan->cache.tool_calls;
  if (no_cache) return Lead(ctx);
  if (std::optional<StoredAnswer> hit = cache_.Find(ticket.key, NowMs())) {
    return AnswerHit(ctx, std::move(*hit));
  }
  const bool l2 = cache_.has_l2();
  if (!l2 && !SemanticOn(ctx)) return FollowOrLead(ctx);
  // A call in flight is joined before the round trip of an L2 or semantic lookup.
  if (cache_.config().coalesce) {
    model_call::FollowerOptions options;
    options.replay = ReplayOptionsOf(ticket.request);
    ResponseCache::Joined joined = cache_.Join(ticket.key, options, executor_);
    ticket.follower = std::move(joined.follower);
    ticket.joined_finished = joined.finished;
    if (ticket.follower != nullptr) {
      ticket.pending = CacheTicket::Pending::kFollow;
      return FilterStatus::kSuspend;
    }
  }
  ticket.pending = l2 ? CacheTicket::Pending::kReadL2 : CacheTicket::Pending::kSemantic;
  return FilterStatus::kSuspend;
}

// A late follower of a finished call is answered as a hit only if the leader stores: TTL 0
// stores nothing, like no-store.
bool CacheFilter::Stores(const CacheTicket& ticket) {
  return !ticket.no_store && ticket.ttl.count() > 0;
}

FilterStatus CacheFilter::FollowOrLead(LlmContext& ctx) {
  CacheTicket& ticket = ctx.cache;
  if (!cache_.config().coalesce) return Lead(ctx);
  model_call::FollowerOptions options;
  options.replay = ReplayOptionsOf(ticket.request);
  ResponseCache::Started started =
      cache_.JoinOrStartLead(ticket.key, options, executor_, ticket.request.stream, Stores(ticket));
  if (started.joined.follower == nullptr) return Led(ctx, std::move(started.lead));
  ticket.follower = std::move(started.joined.follower);
  ticket.joined_finished = started.joined.finished;
  ticket.pending = CacheTicket::Pending::kFollow;
  return FilterStatus::kSuspend;
}

FilterStatus CacheFilter::Lead(LlmContext& ctx) {
  CacheTicket& ticket = ctx.cache;
  return Led(ctx, cache_.StartLead(ticket.key, ticket.request.stream, cache_.config().coalesce,
                                   Stores(ticket)));
}

FilterStatus CacheFilter::Led(LlmContext& ctx, ResponseCache::Lead lead) {
  CacheTicket& ticket = ctx.cache;
  ticket.lead = std::move(lead);
  ticket.fan_out.emplace(ticket.lead.live);
  cache_.probe(worker_).cache.misses.Add();
  Mark(ctx, CacheStatus::kMiss, "miss");
  return FilterStatus::kContinue;
}

FilterStatus CacheFilter::AnswerHit(LlmContext& ctx, StoredAnswer answer) {
  CacheTicket& ticket = ctx.cache;
  const model_call::ReplayOptions options = ReplayOptionsOf(ticket.request);
  core::Answer out;
  if (ticket.request.stream) {
    auto stream = std::make_unique<HitStream>(answer, options);
    const model_call::ReplayStep first = stream->First();
    if (first.end && first.error != nullptr) return Lead(ctx);  // not renderable in this form
    stream->Keep(first);
    out.content_type = providers::StreamContentType(ticket.request.client->stream_framing());
    out.stream = std::move(stream);
  } else {
    model_call::Replay replay(*answer.recording, options);
    for (;;) {
      const model_call::ReplayStep step = replay.Next(SIZE_MAX);
      for (std::string_view frame : step.frames) out.body.append(frame);
      if (!step.end) continue;
      if (step.error != nullptr) return Lead(ctx);
      break;
    }
    const model_call::RecordingProgress progress = answer.recording->progress();
    out.status = progress.whole ? answer.recording->whole().status : 200;
    out.content_type = kJson;
  }
  ticket.hit = std::move(answer);
  ctx.answer = std::move(out);
  cache_.probe(worker_).cache.hits.Add();
  Mark(ctx, CacheStatus::kHit, "hit");
  return FilterStatus::kRespond;
}

net::awaitable<FilterStatus> CacheFilter::Resume(core::RequestContext& context) {
  auto& ctx = static_cast<LlmContext&>(context);
  CacheTicket& ticket = ctx.cache;
  const CacheTicket::Pending pending = std::exchange(ticket.pending, CacheTicket::Pending::kNone);
  if (pending == CacheTicket::Pending::kFollow) {
    const FilterStatus followed = co_await Follow(ctx);
    co_return followed;
  }
  if (pending == CacheTicket::Pending::kReadL2) {
    std::optional<StoredAnswer> found = co_await cache_.ReadL2(ticket.key, NowMs(), worker_);
    if (found) co_return AnswerHit(ctx, std::move(*found));
    if (!SemanticOn(ctx)) {
      const FilterStatus next = co_await JoinOrLead(ctx);
      co_return next;
    }
  }
  const FilterStatus semantic = co_await Semantic(ctx);
  co_return semantic;
}

net::awaitable<FilterStatus> CacheFilter::JoinOrLead(LlmContext& ctx) {
  // A call for the key may have started during the round trip.
  const FilterStatus next = FollowOrLead(ctx);
  if (next != FilterStatus::kSuspend) co_return next;
  ctx.cache.pending = CacheTicket::Pending::kNone;  // followed here, not by a later Resume
  const FilterStatus followed = co_await Follow(ctx);
  co_return followed;
}

bool CacheFilter::SemanticOn(const LlmContext& ctx) const {
  const governance::Plan* plan = ctx.principal.plan;
  if (semantic_ == nullptr || plan == nullptr || plan->cache.semantic_bp <= 0) return false;
  const std::string_view dialect = ctx.cache.request.client->name();
  return dialect == "openai" || dialect == "anthropic";
}

net::awaitable<FilterStatus> CacheFilter::Semantic(LlmContext& ctx) {
  CacheTicket& ticket = ctx.cache;
  const std::string_view dialect = ticket.request.client->name();
  std::optional<SemanticQuestion> question = ReadQuestion(dialect, Body(ticket.request));
  Result<cache::Digest128> context = Error{ErrorCode::kInvalidRequest, "", ""};
  if (question) context = digester_.Of(question->context, ExcludedFields(dialect));
  if (context.ok()) {
    ticket.semantic_ns = ticket.key.ns_id();
    ticket.semantic_ns += " ";
    ticket.semantic_ns += cache::DigestHex(context.value());
    LlmCacheProbe& probe = cache_.probe(worker_);
    probe.semantic_embeddings.Add();
    std::optional<std::vector<float>> vector =
        co_await semantic_->Embed(question->text, ctx.request_id);
    if (!vector) {
      probe.semantic_embed_failures.Add();  // an exact-mode miss, never the client's error
    } else if (std::optional<FilterStatus> hit = SemanticHit(ctx, *vector)) {
      co_return *hit;
    } else {
      ticket.semantic_vector = std::move(*vector);
    }
  }
  const FilterStatus next = co_await JoinOrLead(ctx);
  co_return next;
}

std::optional<FilterStatus> CacheFilter::SemanticHit(LlmContext& ctx,
                                                     std::span<const float> vector) {
  CacheTicket& ticket = ctx.cache;
  SemanticIndex& index = *cache_.semantic();
  const float threshold = static_cast<float>(ctx.principal.plan->cache.semantic_bp) / 10000.0F;
  const int64_t now = NowMs();
  std::optional<SemanticMatch> match = index.Lookup(ticket.semantic_ns, vector, threshold, now);
  if (!match) return std::nullopt;
  std::optional<StoredAnswer> found = cache_.FindById(match->entry_id, now);
  if (!found) {
    index.Drop(ticket.semantic_ns, match->entry_id);  // its entry left the L1
    return std::nullopt;
  }
  const FilterStatus status = AnswerHit(ctx, std::move(*found));
  if (ctx.cache_status != CacheStatus::kHit) return status;  // not renderable: it leads
  const float similarity = std::min(match->similarity, 1.0F);
  char text[16];
  const auto written =
      std::to_chars(text, text + sizeof(text), similarity, std::chars_format::fixed, 4);
  if (ctx.response_headers != nullptr) {
    ctx.response_headers->Add(kCacheSimilarityHeader, std::string_view(text, written.ptr));
  }
  LlmCacheProbe& probe = cache_.probe(worker_);
  probe.semantic_hits.Add();
  probe.semantic_similarity.Observe(std::chrono::nanoseconds(static_cast<int64_t>(
      static_cast<double>(similarity) * 1e9)));  // "seconds" are similarities (response_cache.h)
  return status;
}

net::awaitable<FilterStatus> CacheFilter::Follow(LlmContext& ctx) {
  CacheTicket& ticket = ctx.cache;
  model_call::Follower& follower = *ticket.follower;
  model_call::FollowerRead read = co_await follower.Next();
  if (read.end && read.error != nullptr && read.frames.empty()) {
    // The call failed before its answer started (or this form cannot be rendered from it):
    // this request makes its own.
    ticket.follower.reset();
    co_return Lead(ctx);
  }
  core::Answer out;
  if (ticket.request.stream) {
    out.content_type = providers::StreamContentType(ticket.request.client->stream_framing());
    out.stream = std::make_unique<FollowerStream>(follower, read);
  } else {
    for (;;) {
      for (std::string_view frame : read.frames) out.body.append(frame);
      if (read.end) break;
      read = co_await follower.Next();
    }
    if (read.error != nullptr) {
      ticket.follower.reset();
      co_return Lead(ctx);
    }
    out.content_type = kJson;
  }
  ctx.answer = std::move(out);
  if (ticket.joined_finished) {  // the call had ended: its answer is as good as stored
    cache_.probe(worker_).cache.hits.Add();
    Mark(ctx, CacheStatus::kHit, "hit");
  } else {
    cache_.probe(worker_).cache.coalesced.Add();
    Mark(ctx, CacheStatus::kCoalesced, "coalesced");
  }
  co_return FilterStatus::kRespond;
}

void CacheFilter::OnComplete(core::RequestContext& context) {
  auto& ctx = static_cast<LlmContext&>(context);
  CacheTicket& ticket = ctx.cache;
  if (ticket.lead.live != nullptr) {
    const int64_t now = NowMs();
    LeadEnd end;
    end.store = !ticket.no_store;
    end.tool_calls = ticket.tool_calls;
    end.calls_tools = ctx.finish_reason == "tool_calls";
    end.ttl = ticket.ttl;
    end.usage = BillableUsage(ctx.usage);
    // Semantic mode indexes the entry's vector under its id.
    const bool stored = cache_.EndLead(ticket.key, ticket.lead, end, now, worker_, executor_);
    if (stored && !ticket.semantic_vector.empty()) {
      cache_.semantic()->Insert(ticket.semantic_ns, ticket.semantic_vector, ticket.key.id,
                                now + ticket.ttl.count());
    }
    ticket.fan_out.reset();  // ends the answer for followers of a call that stopped early
  }
  // The lead (if any) has ended and no longer views the id: the next key takes its capacity.
  if (ticket.key.id.capacity() > old_id_.capacity()) old_id_ = std::move(ticket.key.id);
  if (ticket.hit && ctx.admission.active() && ctx.admission.price() != nullptr) {
    const governance::CostResult saved = governance::Cost(ticket.hit->usage, ctx.admission.price());
    cache_.probe(worker_).saved_micros.Add(
        static_cast<uint64_t>(std::max<int64_t>(saved.micros, 0)));
  }
}

}  // namespace turnpike::doors::llm
