#include "cache/cache.h"

namespace turnpike::cache {

std::optional<Mode> ModeFromRequestCacheParam(std::optional<std::string_view> value) {
  if (!value || *value == "true") return Mode::kUse;
  if (*value == "false") return Mode::kBypass;
  return std::nullopt;
}

std::string_view XCacheValue(Outcome outcome) {
  switch (outcome) {
    case Outcome::kHit:
      return "hit";
    case Outcome::kMiss:
      return "miss";
    case Outcome::kBypass:
      return "bypass";
  }
  return "miss";
}

Cache::Cache(CacheOptions options, L2Store* l2)
    : options_(std::move(options)),
      l2_(l2),
      l1_(options_.l1),
      flights_(options_.max_waiters_per_key) {
  probes_.reserve(options_.workers);
  for (size_t i = 0; i < std::max<size_t>(options_.workers, 1); ++i) {
    probes_.push_back(std::make_unique<CacheProbe>());
  }
}

std::string Cache::GenerationKey(std::string_view ns_id) const {
  std::string key = "tp:cache:" + options_.name + ":g:";
  key += ns_id;
  return key;
}

std::string Cache::EntryKey(std::string_view id) const {
  std::string key = "tp:cache:" + options_.name + ":e:";
  key += id;
  return key;
}

boost::asio::awaitable<Lookup> Cache::Acquire(CacheKey key, int64_t now_ms, size_t worker) {
  CacheProbe& probe = *probes_[worker];
  Lookup lookup;
  lookup.worker_ = worker;
  if (options_.ttl.count() <= 0) {  // off: nothing is looked up or stored
    probe.misses.Add();
    lookup.key_ = std::move(key);
    co_return lookup;
  }
  if (l2_ == nullptr) {
    const uint64_t generation = generations_.Current(key.ns_id());
    lookup.generation_ = generation;
    lookup.envelope_ = l1_.Find(HashedId(key), generation, now_ms);
  } else {
    auto get = l2_->Get(GenerationKey(key.ns_id()), EntryKey(key.id));
    Result<L2Read> read = co_await std::move(get);
    if (!read.ok()) {
      probe.l2_errors.Add();  // generation unknown: compute, store nothing
    } else {
      lookup.generation_ = read->generation;
      std::optional<Envelope> entry;
      if (read->entry) entry = Decode(*read->entry);
      if (entry && entry->generation == read->generation && !entry->Expired(now_ms)) {
        lookup.envelope_ = std::make_shared<const Envelope>(std::move(*entry));
      }
    }
  }
  if (lookup.hit()) {
    probe.hits.Add();
    lookup.key_ = std::move(key);
    co_return lookup;
  }

  // A flight is per key AND generation: a request that arrives after a write must not take
  // the answer of a computation that started before it.
  std::string flight_id = key.id;
  flight_id += '#';
  if (lookup.generation_) {
    flight_id += std::to_string(*lookup.generation_);
  } else {
    flight_id += '?';
  }
  auto join = flights_.Join(std::move(flight_id), options_.flight_wait);
  SingleFlight::Joined joined = co_await std::move(join);
  if (joined.leader) {
    lookup.flight_.emplace(std::move(*joined.leader));
    probe.misses.Add();
  } else if (joined.result) {
    lookup.envelope_ = std::move(joined.result);
    probe.hits.Add();
    probe.coalesced.Add();
  } else {
    if (joined.timed_out || joined.overflow) probe.flight_timeouts.Add();
    probe.misses.Add();
  }
  lookup.key_ = std::move(key);
  co_return lookup;
}

boost::asio::awaitable<void> Cache::Fill(Lookup& lookup, Envelope envelope, int64_t now_ms) {
  if (lookup.hit()) co_return;
  std::optional<SingleFlight::Flight> flight = std::move(lookup.flight_);
  lookup.flight_.reset();
  if (lookup.generation_) envelope.generation = *lookup.generation_;
  envelope.expires_at_ms = now_ms + options_.ttl.count();
  if (envelope.took_offset == kNoTook) {
    const TookSpan took = FindTook(envelope.body);
    envelope.took_offset = took.offset;
    envelope.took_length = took.length;
  }
  auto shared = std::make_shared<const Envelope>(std::move(envelope));
  // Waiters first: they should not wait for the stores.
  if (flight) flight->Complete(shared);
  if (!lookup.generation_ || options_.ttl.count() <= 0) co_return;
  if (l2_ == nullptr) {
    // Stale already (a write landed while computing): it could never be served.
    if (generations_.Current(lookup.key_.ns_id()) != shared->generation) co_return;
    l1_.Insert(lookup.key_, std::move(shared));
    co_return;
  }
  auto put = l2_->Put(EntryKey(lookup.key_.id), Encode(*shared), options_.ttl);
  Status stored = co_await std::move(put);
  if (!stored.ok()) probes_[lookup.worker_]->l2_errors.Add();
}

boost::asio::awaitable<Status> Cache::Invalidate(std::string tenant, std::string ns,
                                                 size_t worker) {
  const std::string ns_id = NamespaceId(tenant, ns);
  generations_.Bump(ns_id);
  if (l2_ == nullptr) co_return Ok{};
  auto bump = l2_->Bump(GenerationKey(ns_id));
  Result<uint64_t> bumped = co_await std::move(bump);
  if (!bumped.ok()) {
    probes_[worker]->l2_errors.Add();
    co_return bumped.error();
  }
  co_return Ok{};
}

void Cache::WriteMetrics(observability::PrometheusWriter& writer) const {
  std::vector<const CacheProbe*> probes;
  probes.reserve(probes_.size());
  for (const auto& probe : probes_) probes.push_back(probe.get());
  WriteCacheMetrics(writer, options_.name, probes, l1_.Stats());
}

}  // namespace turnpike::cache
