// Cache keys: tenant + namespace + a 128-bit digest of the canonical request.
//
// A key is tenant-first (DESIGN.md "Every cache: tenant-first key"): two tenants never share an
// entry, whatever their requests. The namespace is the door's unit of invalidation (the search
// door's index; the LLM cache's model): its generation counter (generations.h) is bumped by
// every write to it. The digest is SHA-256 of the canonical request (canonical_json.h),
// truncated to 128 bits: a cryptographic digest, so a client cannot craft two requests that
// share an entry.
//
// Ownership and threads: CacheKey is a value. A Digester owns an OpenSSL context: one per
// worker (not thread-safe), like governance's SecretVerifier.
// Errors: Digester::Create fails (kInternal) only if OpenSSL does; Of() cannot fail once
// created (an OpenSSL failure there aborts: it means memory corruption, not bad input).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

struct evp_md_st;      // EVP_MD
struct evp_md_ctx_st;  // EVP_MD_CTX

namespace turnpike::cache {

using Digest128 = std::array<uint8_t, 16>;

// The hex form of a digest (32 lower-case characters).
std::string DigestHex(const Digest128& digest);

// One cache entry's identity. `id` is the full key as one string (the L1 map key, the single
// flight key, the L2 entry key); its prefix `ns_id()` names the namespace (the generation
// counter's key). Both are length-prefixed, so no choice of tenant or namespace text can make
// two different (tenant, namespace) pairs collide. Layout (also the L2's key names, with a
// prefix added):
//   ns_id = "{<tenant length>:<tenant><namespace length>:<namespace>}"
//   id    = ns_id + ":" + DigestHex(digest)
// The braces make ns_id a Redis Cluster hash tag, so an entry and its generation always live
// on one node and can be read by one MGET. One string, so making a key is one allocation, or
// none when the caller hands MakeKey a string to reuse (its KeySpace form, below).
// `hash` is IdHash(id), computed once by MakeKey and carried to every table the key meets (the
// L1's shard and index, the LLM cache's in-flight table), which then never hash the id again.
struct CacheKey {
  std::string id;
  uint64_t hash = 0;           // IdHash(id)
  uint32_t ns_length = 0;      // ns_id is id's first ns_length bytes
  uint32_t tenant_offset = 0;  // of the tenant's bytes in id (an offset: survives moves)
  uint32_t tenant_length = 0;
  std::string_view ns_id() const { return std::string_view(id).substr(0, ns_length); }
  std::string_view tenant() const {
    return std::string_view(id).substr(tenant_offset, tenant_length);
  }
};

CacheKey MakeKey(std::string_view tenant, std::string_view ns, const Digest128& digest);

// A namespace's id with the tenant's place in it, made once for the keys in it: MakeKey(space,
// ...) then formats only the digest (the LLM cache filter keeps its worker's last space, which
// most of its requests share).
struct KeySpace {
  std::string ns_id;  // as CacheKey::ns_id()
  uint32_t tenant_offset = 0;
  uint32_t tenant_length = 0;

  void Assign(std::string_view tenant, std::string_view ns);
  std::string_view tenant() const {
    return std::string_view(ns_id).substr(tenant_offset, tenant_length);
  }
};

// The same key as MakeKey(tenant, ns, digest) for the space's tenant and ns. `storage`: a string
// whose capacity the id takes over (a worker passes back its last key's id, so that a warm
// worker's keys allocate nothing).
CacheKey MakeKey(const KeySpace& space, const Digest128& digest, std::string storage = {});

// A key id's hash for the caches' open-addressing tables and shard choice: XXH3-64, about 115
// instructions for an id of 60 bytes and well mixed, so a table need not mix it again.
uint64_t IdHash(std::string_view id);

// A key id with its hash, as the tables' key: a view (of a CacheKey's id, or an entry's copy)
// that carries the hash, so a lookup or an insert costs no hash call. Two are equal when their
// ids are (the hashes then are too).
struct HashedId {
  std::string_view id;
  uint64_t hash = 0;

  HashedId() = default;
  HashedId(std::string_view id_in, uint64_t hash_in) : id(id_in), hash(hash_in) {}
  explicit HashedId(const CacheKey& key) : id(key.id), hash(key.hash) {}
  // Hashes `id` (a caller that has only the id, not its key).
  static HashedId Of(std::string_view id_in) { return {id_in, IdHash(id_in)}; }
  bool operator==(const HashedId& other) const { return id == other.id; }
};
struct HashedIdHasher {
  using is_avalanching = void;  // boost::unordered_flat_map: use the bits as they are
  size_t operator()(const HashedId& key) const { return key.hash; }
};

// The namespace id alone, for a write that bumps a namespace's generation.
std::string NamespaceId(std::string_view tenant, std::string_view ns);

class Digester {
 public:
  static Result<Digester> Create();
  Digester(Digester&&) noexcept = default;
  Digester& operator=(Digester&&) noexcept = default;

  // SHA-256 of `text`, its first 16 bytes. No allocation.
  Digest128 Of(std::string_view text);

 private:
  struct MdFree {
    void operator()(evp_md_st* md) const;
  };
  struct CtxFree {
    void operator()(evp_md_ctx_st* ctx) const;
  };
  Digester(std::unique_ptr<evp_md_st, MdFree> md, std::unique_ptr<evp_md_ctx_st, CtxFree> ctx)
      : md_(std::move(md)), ctx_(std::move(ctx)) {}

  std::unique_ptr<evp_md_st, MdFree> md_;
  std::unique_ptr<evp_md_ctx_st, CtxFree> ctx_;
};

}  // namespace turnpike::cache
