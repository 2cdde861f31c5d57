#include "doors/llm/response_cache.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <cstring>

#include "cache/envelope.h"
#include "model_call/recording_codec.h"

namespace turnpike::doors::llm {
namespace net = boost::asio;

namespace {

constexpr size_t kShards = 16;

// The L1's entry: the envelope (its expiry; no body: the recording is the answer) with the
// recording and the usage its call reported. Every envelope in this cache's L1 is one of these.
// An entry made by a call lives in that call's LeadBlock and is owned with it (the L1's
// shared_ptr aliases the block); one decoded from the L2 is made alone and owns its recording.
struct CachedAnswer final : cache::Envelope {
  const model_call::Recording* recording = nullptr;
  std::shared_ptr<const model_call::Recording> decoded;  // the L2's; empty in a LeadBlock
  governance::TokenUsage usage;
};

// A call's answer and the entry it may become (StartLead); the block below adds the
// recording's first bytes, so that the three are one allocation.
class LeadAnswer : public model_call::LiveAnswer {
 public:
  // Written once, by EndLead, before the L1 publishes it.
  CachedAnswer entry;

 protected:
  LeadAnswer(size_t max_bytes, std::span<char> first_block) : LiveAnswer(max_bytes, first_block) {}
};

// The recording's first block is sized by the answer's form: a whole answer records its head
// and body (a chat answer of a few hundred tokens fits), a stream its frames, whose JSON
// framing repeats per token (a 20-token OpenAI stream records about 5 KB). Past it, the arena
// allocates blocks of twice the size.
constexpr size_t kWholeFirstBlock = 2048;
constexpr size_t kStreamFirstBlock = 8192;

template <size_t kBytes>
class LeadBlock final : public LeadAnswer {
 public:
  // The base keeps a view of first_, whose bytes it writes only once the block is built.
  explicit LeadBlock(size_t max_bytes) : LeadAnswer(max_bytes, std::span<char>(first_, kBytes)) {}

 private:
  char first_[kBytes];  // not initialised: written before it is read
};

// The L2 value: a header (magic, version, the usage) and the recording's wire form
// (model_call/recording_codec.h), which carries its own version.
constexpr char kMagic[4] = {'T', 'P', 'L', 'C'};
constexpr uint32_t kVersion = 1;
constexpr size_t kUsageFields = 5;
constexpr size_t kHeaderBytes = sizeof(kMagic) + sizeof(uint32_t) + kUsageFields * sizeof(int64_t);

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

// Empty when the recording cannot be encoded (the codec refuses it: then it stays L1-only).
std::string EncodeValue(const model_call::Recording& recording,
                        const governance::TokenUsage& usage) {
  Result<std::string> encoded = model_call::EncodeRecording(recording);
  if (!encoded.ok()) return {};
  std::string out(kMagic, sizeof(kMagic));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((kVersion >> (8 * i)) & 0xff));
  for (int64_t v : {usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens,
                    usage.cache_creation_tokens, usage.reasoning_tokens}) {
    PutU64(out, static_cast<uint64_t>(v));
  }
  out += encoded.value();
  return out;
}

std::optional<StoredAnswer> DecodeValue(std::string_view bytes, size_t max_bytes) {
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return std::nullopt;
  }
  uint32_t version = 0;
  for (int i = 3; i >= 0; --i) {
    version = (version << 8) | static_cast<uint8_t>(bytes[sizeof(kMagic) + i]);
  }
  if (version != kVersion) return std::nullopt;
  const char* p = bytes.data() + sizeof(kMagic) + sizeof(uint32_t);
  int64_t fields[kUsageFields];
  for (size_t i = 0; i < kUsageFields; ++i) fields[i] = static_cast<int64_t>(GetU64(p + 8 * i));
  Result<std::shared_ptr<const model_call::Recording>> recording =
      model_call::DecodeRecording(bytes.substr(kHeaderBytes), max_bytes);
  if (!recording.ok()) return std::nullopt;
  StoredAnswer answer;
  answer.recording = std::move(recording.value());
  answer.usage = {fields[0], fields[1], fields[2], fields[3], fields[4]};
  return answer;
}

// `held_bytes`: the finished recording's (progress().bytes, read by the caller).
void FillEntry(CachedAnswer& entry, const model_call::Recording& recording, size_t held_bytes,
               const governance::TokenUsage& usage, int64_t expires_at_ms) {
  entry.expires_at_ms = expires_at_ms;
  entry.held_bytes = held_bytes;
  entry.recording = &recording;
  entry.usage = usage;
}

// An entry for an answer decoded from the L2.
std::shared_ptr<const cache::Envelope> DecodedEntry(StoredAnswer answer, int64_t expires_at_ms) {
  auto entry = std::make_shared<CachedAnswer>();
  FillEntry(*entry, *answer.recording, answer.recording->progress().bytes, answer.usage,
            expires_at_ms);
  entry->decoded = std::move(answer.recording);
  return entry;
}

}  // namespace

ResponseCache::ResponseCache(const config::LlmCacheConfig& config, cache::L2Store* l2,
                             size_t workers)
    : config_(config),
      l2_(l2),
      l1_(cache::L1Options{config.max_bytes, config.tenant_max_bytes, kShards}),
      semantic_(config.semantic.model.empty()
                    ? nullptr
                    : std::make_unique<SemanticIndex>(config.semantic.max_entries)) {
  for (size_t i = 0; i < std::max<size_t>(workers, 1); ++i) {
    probes_.push_back(std::make_unique<LlmCacheProbe>());
  }
}

ResponseCache::~ResponseCache() = default;

std::string ResponseCache::EntryKey(std::string_view id) {
  std::string key = "tp:cache:llm:e:";
  key += id;
  return key;
}

std::optional<StoredAnswer> ResponseCache::FindById(cache::HashedId id, int64_t now_ms) {
  std::shared_ptr<const cache::Envelope> envelope = l1_.Find(id, 0, now_ms);
  if (envelope == nullptr) return std::nullopt;
  const auto& entry = static_cast<const CachedAnswer&>(*envelope);
  // Shares the envelope's ownership: its LeadBlock's, or its own.
  return StoredAnswer{std::shared_ptr<const model_call::Recording>(envelope, entry.recording),
                      entry.usage};
}

net::awaitable<std::optional<StoredAnswer>> ResponseCache::ReadL2(const cache::CacheKey& key,
                                                                  int64_t now_ms, size_t worker) {
  // The generation key is never written: the LLM cache has no invalidation but the TTL, and
  // the L2's contract reads both in one MGET.
  std::string generation_key = "tp:cache:llm:g:";
  generation_key += key.ns_id();
  Result<cache::L2Read> read = co_await l2_->Get(std::move(generation_key), EntryKey(key.id));
  if (!read.ok()) {
    probes_[worker]->cache.l2_errors.Add();
    co_return std::nullopt;
  }
  if (!read->entry) co_return std::nullopt;
  std::optional<cache::Envelope> envelope = cache::Decode(*read->entry);
  if (envelope && envelope->Expired(now_ms)) co_return std::nullopt;  // Redis drops it soon
  std::optional<StoredAnswer> answer;
  if (envelope) answer = DecodeValue(envelope->body, config_.max_entry_bytes);
  if (!answer) {
    probes_[worker]->cache.l2_errors.Add();  // written by another version, or damaged
    co_return std::nullopt;
  }
  l1_.Insert(key, DecodedEntry(*answer, envelope->expires_at_ms));
  co_return answer;
}

ResponseCache::Joined ResponseCache::Join(const cache::CacheKey& key,
                                          const model_call::FollowerOptions& options,
                                          net::any_io_executor executor) {
  std::lock_guard lock(mu_);
  auto it = flights_.find(cache::HashedId(key));
  if (it == flights_.end()) return {};
  return JoinFlight(it->second, options, std::move(executor));
}

ResponseCache::Joined ResponseCache::JoinFlight(const Flight& flight,
                                                const model_call::FollowerOptions& options,
                                                net::any_io_executor executor) {
  if (flight.live->followers() >= config_.max_followers) return {};
  const bool finished =
      flight.live->recording().progress().state == model_call::RecordingState::kComplete;
  if (finished && !flight.stores) return {};
  return {flight.live->Join(options, std::move(executor)), finished};
}

ResponseCache::Started ResponseCache::JoinOrStartLead(const cache::CacheKey& key,
                                                      const model_call::FollowerOptions& options,
                                                      net::any_io_executor executor, bool stream,
                                                      bool stores) {
  Started started;
  started.lead.live = NewAnswer(stream);  // before the lock; a follower drops it
  {
    std::lock_guard lock(mu_);
    const auto [it, inserted] =
        flights_.try_emplace(cache::HashedId(key), Flight{started.lead.live, stores});
    if (inserted) {
      started.lead.cache_ = this;
      started.lead.id_ = cache::HashedId(key);
      return started;
    }
    started.joined = JoinFlight(it->second, options, std::move(executor));
  }
  if (started.joined.follower != nullptr) started.lead.live.reset();
  return started;
}

ResponseCache::Lead& ResponseCache::Lead::operator=(Lead&& other) noexcept {
  if (this == &other) return *this;
  if (cache_ != nullptr) {
    std::lock_guard lock(cache_->mu_);
    cache_->Unregister(*this);
  }
  live = std::move(other.live);
  cache_ = std::exchange(other.cache_, nullptr);
  id_ = other.id_;
  return *this;
}

ResponseCache::Lead::~Lead() {
  if (cache_ == nullptr) return;
  std::lock_guard lock(cache_->mu_);
  cache_->Unregister(*this);
}

void ResponseCache::Unregister(Lead& lead) {
  auto it = flights_.find(lead.id_);
  if (it != flights_.end() && it->second.live == lead.live) flights_.erase(it);
  lead.cache_ = nullptr;
}

std::shared_ptr<model_call::LiveAnswer> ResponseCache::NewAnswer(bool stream) const {
  if (stream) return std::make_shared<LeadBlock<kStreamFirstBlock>>(config_.max_entry_bytes);
  return std::make_shared<LeadBlock<kWholeFirstBlock>>(config_.max_entry_bytes);
}

ResponseCache::Lead ResponseCache::StartLead(const cache::CacheKey& key, bool stream, bool coalesce,
                                             bool stores) {
  Lead lead;
  lead.live = NewAnswer(stream);
  if (!coalesce) return lead;
  std::lock_guard lock(mu_);
  if (flights_.try_emplace(cache::HashedId(key), Flight{lead.live, stores}).second) {
    lead.cache_ = this;
    lead.id_ = cache::HashedId(key);
  }
  return lead;
}

bool ResponseCache::Storable(const model_call::Recording& recording,
                             const model_call::RecordingProgress& progress) {
  if (progress.state != model_call::RecordingState::kComplete || progress.truncated) return false;
  if (progress.whole && recording.whole().status != 200) return false;
  if (!progress.whole && (!progress.started || recording.start().status != 200)) return false;
  return true;
}

bool ResponseCache::EndLead(const cache::CacheKey& key, Lead& lead, const LeadEnd& end,
                            int64_t now_ms, size_t worker, const net::any_io_executor& executor) {
  if (lead.live == nullptr) return false;
  LlmCacheProbe& probe = *probes_[worker];
  const model_call::Recording& recording = lead.live->recording();
  // One read (one lock of the recording's mutex): a finished recording no longer changes, and
  // one that has not finished is not stored.
  const model_call::RecordingProgress progress = recording.progress();
  std::shared_ptr<const cache::Envelope> entry;
  const int64_t expires = now_ms + end.ttl.count();
  if (end.store && end.ttl.count() > 0 && (end.tool_calls || !end.calls_tools) &&
      Storable(recording, progress)) {
    // The entry is the lead's own (its LeadBlock): the L1 shares the block's ownership.
    auto& block = static_cast<LeadAnswer&>(*lead.live);
    FillEntry(block.entry, recording, progress.bytes, end.usage, expires);
    entry = std::shared_ptr<const cache::Envelope>(lead.live, &block.entry);
    cache::Envelope envelope;
    if (l2_ != nullptr) envelope.body = EncodeValue(recording, end.usage);
    if (!envelope.body.empty()) {
      envelope.expires_at_ms = expires;
      net::co_spawn(executor,
                    PutL2(l2_, EntryKey(key.id), cache::Encode(envelope), end.ttl, &probe),
                    net::detached);
    }
  } else {
    probe.not_stored.Add();
  }
  bool stored = false;
  {
    // One critical section: a Join sees the call or, after it, the entry (see the top of this
    // file).
    std::unique_lock lock(mu_, std::defer_lock);
    if (lead.registered()) {
      lock.lock();
      Unregister(lead);
    }
    if (entry != nullptr) stored = l1_.Insert(key, std::move(entry));
  }
  if (stored) probe.stored.Add();
  lead = Lead{};
  return stored;
}

net::awaitable<void> ResponseCache::PutL2(cache::L2Store* l2, std::string key, std::string value,
                                          std::chrono::milliseconds ttl, LlmCacheProbe* probe) {
  Status put = co_await l2->Put(std::move(key), std::move(value), ttl);
  if (!put.ok()) probe->cache.l2_errors.Add();
}

void ResponseCache::WriteMetrics(observability::PrometheusWriter& writer) const {
  std::vector<const cache::CacheProbe*> probes;
  uint64_t saved = 0, stored = 0, not_stored = 0;
  for (const auto& probe : probes_) {
    probes.push_back(&probe->cache);
    saved += probe->saved_micros.value();
    stored += probe->stored.value();
    not_stored += probe->not_stored.value();
  }
  cache::WriteCacheMetrics(writer, "llm", probes, l1_.Stats());
  using observability::MetricType;
  writer.Family("turnpike_cache_saved_usd_total",
                "The price of the upstream calls that cache hits and coalesced requests avoided.",
                MetricType::kCounter);
  writer.Sample("turnpike_cache_saved_usd_total", {{"cache", "llm"}},
                static_cast<double>(saved) / 1e6);
  writer.Family("turnpike_cache_stores_total",
                "Finished calls that led a cache key: stored, or not (an error, a cut or "
                "truncated answer, tool calls the plan does not cache, no-store).",
                MetricType::kCounter);
  writer.Sample("turnpike_cache_stores_total", {{"cache", "llm"}, {"result", "stored"}},
                static_cast<double>(stored));
  writer.Sample("turnpike_cache_stores_total", {{"cache", "llm"}, {"result", "not_stored"}},
                static_cast<double>(not_stored));
  if (semantic_ != nullptr) WriteSemanticMetrics(writer);
}

void ResponseCache::WriteSemanticMetrics(observability::PrometheusWriter& writer) const {
  uint64_t embeddings = 0, failed = 0, hits = 0;
  observability::HistogramSnapshot similarity;
  for (const auto& probe : probes_) {
    embeddings += probe->semantic_embeddings.value();
    failed += probe->semantic_embed_failures.value();
    hits += probe->semantic_hits.value();
    similarity.Merge(probe->semantic_similarity.Snapshot());
  }
  using observability::MetricType;
  writer.Family("turnpike_cache_semantic_embeddings_total",
                "Embeddings calls of the LLM cache's semantic mode (the gateway's cost, not "
                "billed to tenants); failed: the request went on as an exact-mode miss.",
                MetricType::kCounter);
  writer.Sample("turnpike_cache_semantic_embeddings_total", {{"result", "ok"}},
                static_cast<double>(embeddings - std::min(failed, embeddings)));
  writer.Sample("turnpike_cache_semantic_embeddings_total", {{"result", "failed"}},
                static_cast<double>(failed));
  writer.Family("turnpike_cache_semantic_hits_total",
                "LLM cache hits found by similarity (also counted in turnpike_cache_hits_total).",
                MetricType::kCounter);
  writer.Sample("turnpike_cache_semantic_hits_total", {}, static_cast<double>(hits));
  writer.Family("turnpike_cache_semantic_similarity",
                "The similarity (cosine) of each semantic hit's question to the stored one.",
                MetricType::kHistogram);
  writer.WriteHistogram("turnpike_cache_semantic_similarity", {}, similarity);
}

}  // namespace turnpike::doors::llm
