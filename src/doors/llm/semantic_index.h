// The LLM response cache's semantic index: per cache namespace, a bounded list of embedded
// questions (unit float32 vectors), each pointing at the exact entry (its CacheKey id) that holds
// the answer. A plan's semantic mode (CachePolicy::semantic_bp, cache_filter.h) looks a
// question's embedding up here after every exact lookup missed; the best match at or above the
// plan's threshold is answered from that entry. An exact scan: every live vector of the
// namespace is compared (common/vectors.h Dot, the kernel the search door's kNN uses); no
// approximate structure, so a lookup's answer is the true best match.
//
// Namespaces: what the caller passes; the filter passes the exact key's ns_id (tenant, client
// dialect, model [, key]) plus a digest of the request without its last user message, so a
// question is matched only against questions asked in the same context (system prompt, earlier
// turns, parameters, tools) by the same tenant of the same model (semantic_lookup.h).
//
// Bounds and eviction: up to max_entries vectors per namespace (llm_cache.semantic
// .max_entries); the next insert overwrites the oldest (a ring). An entry past its expiry (the
// exact entry's TTL) never matches; an entry whose exact entry left the L1 early (evicted for
// bytes) is dropped by the caller when its L1 lookup fails (Drop). Vectors of another length
// than the namespace's (the embeddings deployment changed) never match; the first insert of a
// new length clears the namespace. Memory: up to max_entries x dims x 4 bytes per namespace
// (1,000 x 1536 floats = 6 MiB by default), grown as entries arrive, held until the process ends:
// namespaces are never removed (a namespace's header is small; its vectors are not, so a
// gateway with many busy namespaces should lower max_entries).
//
// The risks of semantic mode, and picking a threshold: a near-duplicate is not the same question.
// "Is X safe?" and "Is X not safe?", "the 2023 revenue" and "the 2024 revenue", "Alice's
// account" and "Bob's account" are close in most embedding spaces and will get each other's
// answer above a loose threshold. Similarities are specific to the embeddings model (one model's
// 0.9 is another's 0.8), so a threshold cannot be carried from one model to another. Start high
// (0.97 or more), watch turnpike_cache_semantic_similarity and sample the hits near the
// threshold on real traffic for wrong answers before lowering it; keep semantic mode off for
// plans whose answers depend on exact numbers, names or negations.
//
// Threads: every method may be called from any worker. One mutex guards the namespace table (a
// hash probe, and an insert of a new namespace); each namespace has its own mutex, held for one
// scan or one insert, never across I/O or a co_await. A lookup's cost under that mutex: an exact
// scan of up to max_entries x dims floats, on the calling worker's thread. Measured with
// bench/semantic_index_bench.cc (-O2, on a shared 2-core machine under load): 1,000 x 1536 in
// 0.16 ms; 10,000 x 1536 (15.4 M multiply-adds over 61 MiB, which no cache holds: memory-bound)
// in about 7 ms. For that long the worker serves none of its other connections, and another
// worker looking up the same namespace waits on the mutex; lookups of different namespaces do
// not wait for each other. The cost is linear in max_entries: lower it (or use an embeddings
// model with fewer dimensions) where that stall matters.
// Ownership: owned by the ResponseCache (built in app/ before the workers, destroyed after).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/string_map.h"

namespace turnpike::doors::llm {

struct SemanticMatch {
  std::string entry_id;  // the exact entry's CacheKey id
  float similarity = 0;  // the cosine of the two unit vectors
};

class SemanticIndex {
 public:
  explicit SemanticIndex(size_t max_entries) : max_entries_(max_entries) {}
  SemanticIndex(const SemanticIndex&) = delete;
  SemanticIndex& operator=(const SemanticIndex&) = delete;

  // The live entry of `ns` most similar to `vector` (unit length: common/vectors.h Normalize),
  // if its similarity is at least `threshold`; ties go to the newer entry.
  std::optional<SemanticMatch> Lookup(std::string_view ns, std::span<const float> vector,
                                      float threshold, int64_t now_ms);
  // Adds `vector` (unit length) for `entry_id`, live until `expires_at_ms`, evicting the oldest
  // entry of a full namespace.
  void Insert(std::string_view ns, std::span<const float> vector, std::string entry_id,
              int64_t expires_at_ms);
  // Forgets `entry_id`'s vectors in `ns` (its exact entry is gone).
  void Drop(std::string_view ns, std::string_view entry_id);

  // Live entries of `ns` at `now_ms` (tests, metrics).
  size_t Size(std::string_view ns, int64_t now_ms);

 private:
  struct Slot {
    std::string entry_id;
    int64_t expires_at_ms = 0;  // 0: empty (dropped)
  };
  // One namespace's ring of slots and their vectors (slot i's floats at i * dims).
  struct Namespace {
    std::mutex mu;
    size_t dims = 0;
    size_t next = 0;  // the slot the next insert writes (the oldest once full)
    std::vector<Slot> slots;
    std::vector<float> vectors;
  };

  // The namespace, created when `create`; null when absent and not created.
  Namespace* Find(std::string_view ns, bool create);

  const size_t max_entries_;
  std::mutex mu_;
  // Guarded by mu_; a Namespace, once made, lives as long as the index.
  std::unordered_map<std::string, std::unique_ptr<Namespace>, cache::StringHash, std::equal_to<>>
      namespaces_;
};

}  // namespace turnpike::doors::llm
