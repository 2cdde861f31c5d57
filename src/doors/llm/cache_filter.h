// The cache filter: the LLM response cache (response_cache.h) as the last filter of the LLM
// door's chain, after governance (it needs the tenant, the key and the plan) and the route
// filter (an unknown model is a 404 before any lookup).
//
// Whether a request uses the cache: the plan's choice (CachePolicy::mode), else the gateway's
// llm_cache.enabled; off for a key with cache_off, for routes that are not chat answers
// (embeddings, token counts), and with llm_cache.ttl 0. Per request, Cache-Control `no-cache`
// skips the lookups (the answer is still stored), `no-store` skips the store, both skip the
// cache; `x-turnpike-cache-ttl: <seconds>` lowers the entry's TTL (never raises it past
// llm_cache.ttl; 0 stores nothing; not a whole number: 400).
//
// The key: tenant, then the namespace = client dialect + public model (+ the key's id when the
// plan scopes entries to the key; "openai 4:chat"), then the request digest over the body without
// the fields that never change the answer (stream, stream_options, user, ...: ExcludedFields).
//
// Order, for a request that uses the cache:
//   1. L1 hit                     answered here (kRespond): a Replay of the entry in the
//                                 client's form
//   2. a call in flight           joined (kSuspend): Resume waits for its first frames; a
//                                 stream is answered as it is recorded, a whole answer when it
//                                 ends. A call that fails before its answer starts leaves its
//                                 followers to make their own call (a miss). A call whose answer
//                                 already ended (its leader has not stored it yet) serves it as
//                                 a hit.
//   3. the L2 (when configured)   one round trip (kSuspend); a hit is answered as 1
//   4. semantic mode              only when the plan has it (CachePolicy::semantic_bp > 0,
//                                 llm_cache.semantic configured) and the request is an OpenAI
//                                 chat or Anthropic Messages one whose last message is the
//                                 user's text (semantic_lookup.h): that text is embedded
//                                 (kSuspend: one embeddings call) and looked up in the semantic
//                                 index (semantic_index.h); a match at or above the plan's
//                                 threshold whose exact entry is still in L1 is answered as 1,
//                                 with x-turnpike-cache-similarity: 0.9731 beside the hit. A
//                                 failed embedding is counted and the request goes on as 5
//   5. otherwise                  the request leads the call (kContinue): the flow adds the
//                                 ticket's FanOut, so followers and the entry get its answer;
//                                 in semantic mode, once EndLead stored the answer, the
//                                 question's vector is indexed under the entry's id
// and every answer carries x-turnpike-cache: hit | coalesced | miss | bypass (bypass when the
// plan has the cache on but the key or the request turned it off). A hit and a follower bill
// nothing (request_context.h cache_status); OnComplete counts the price they avoided
// (turnpike_cache_saved_usd_total) and ends a lead (EndLead stores its answer). A request with
// Cache-Control no-cache leads at once: its answer is stored for exact lookups only. The risks
// of semantic mode and how to pick its threshold: semantic_index.h.
//
// Ownership and threads: one per worker in the LLM door's chain; borrows the shared cache and
// the worker's executor (followers read there). Keeps the worker's request digester and its
// semantic embedder.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cache/request_digest.h"
#include "core/filter.h"
#include "doors/llm/llm_context.h"
#include "doors/llm/response_cache.h"
#include "doors/llm/semantic_lookup.h"

namespace turnpike::doors::llm {

inline constexpr std::string_view kCacheHeader = "x-turnpike-cache";
inline constexpr std::string_view kCacheTtlHeader = "x-turnpike-cache-ttl";
inline constexpr std::string_view kCacheSimilarityHeader = "x-turnpike-cache-similarity";

// The request digest's seed from llm_cache.key_secret (FNV-1a 64 of its bytes; "" gives the
// fixed offset basis): every replica with the same secret keys alike.
uint64_t DigestSeedOf(std::string_view secret);

// The top-level fields of a client dialect's request that never change its answer.
std::span<const std::string_view> ExcludedFields(std::string_view dialect);

class CacheFilter : public core::Filter {
 public:
  // `semantic`: the worker's embedder when llm_cache.semantic is configured (else null).
  CacheFilter(ResponseCache& cache, size_t worker, boost::asio::any_io_executor executor,
              cache::RequestDigester digester, std::unique_ptr<SemanticLookup> semantic = nullptr)
      : cache_(cache),
        worker_(worker),
        executor_(std::move(executor)),
        digester_(std::move(digester)),
        semantic_(std::move(semantic)) {}

  // `context` is an LlmContext (this filter runs only in the LLM door's chain).
  core::FilterStatus OnRequest(core::RequestContext& context) override;
  boost::asio::awaitable<core::FilterStatus> Resume(core::RequestContext& context) override;
  void OnComplete(core::RequestContext& context) override;

 private:
  // Whether the tenant's plan (or the gateway) has the cache on for this request.
  bool Enabled(const LlmContext& ctx) const;
  // Reads the request's headers into the ticket; false (and a refusal) for a bad TTL.
  bool ReadHeaders(LlmContext& ctx, bool& no_cache);
  bool MakeKey(LlmContext& ctx);
  // Leads the call (registered for followers when coalescing and no call for the key is in
  // flight); Led goes on with a lead already started.
  core::FilterStatus Lead(LlmContext& ctx);
  core::FilterStatus Led(LlmContext& ctx, ResponseCache::Lead lead);
  // After the lookups missed, without a round trip: follows the call in flight for the key when
  // it can be joined (kSuspend, Pending::kFollow), else leads (ResponseCache::JoinOrStartLead:
  // one critical section, so that of identical requests arriving together exactly one leads).
  core::FilterStatus FollowOrLead(LlmContext& ctx);
  static bool Stores(const CacheTicket& ticket);
  core::FilterStatus AnswerHit(LlmContext& ctx, StoredAnswer answer);
  boost::asio::awaitable<core::FilterStatus> Follow(LlmContext& ctx);
  // After the exact lookups missed: the call in flight if one started meanwhile, else a lead.
  boost::asio::awaitable<core::FilterStatus> JoinOrLead(LlmContext& ctx);
  // Whether semantic mode applies to the request (its plan, the client dialect).
  bool SemanticOn(const LlmContext& ctx) const;
  // Step 4 (see the top of this file), then JoinOrLead on a miss.
  boost::asio::awaitable<core::FilterStatus> Semantic(LlmContext& ctx);
  // The index's match for `vector` answered as a hit; nullopt when there is none.
  std::optional<core::FilterStatus> SemanticHit(LlmContext& ctx, std::span<const float> vector);
  void Mark(LlmContext& ctx, store::CacheStatus status, std::string_view header);

  ResponseCache& cache_;
  const size_t worker_;
  const boost::asio::any_io_executor executor_;
  cache::RequestDigester digester_;
  // The key space (tenant and namespace) of this worker's last key, and what made it: most
  // requests share it, and then their keys format only the digest.
  struct Space {
    cache::KeySpace space;
    std::string dialect, model, key_id;  // key_id: empty unless the plan scopes entries to keys
    bool Holds(std::string_view tenant, std::string_view dialect_in, std::string_view model_in,
               std::string_view key_id_in) const;
    void Assign(std::string_view tenant, std::string_view dialect_in, std::string_view model_in,
                std::string_view key_id_in);
  };
  Space space_;
  std::string old_id_;  // the last finished request's key id, whose capacity the next key reuses
  const std::unique_ptr<SemanticLookup> semantic_;
};

}  // namespace turnpike::doors::llm
