// What a cache entry holds, the same in L1 and L2: the generation it was computed under, its
// expiry, and the answer as the client gets it (status, content type, pre-serialised body).
//
// A hit re-stamps the answer's `took` (the search door's elapsed milliseconds): the offset of
// the top-level `"took":N` value is found once when the entry is made (FindTook) and kept in
// the envelope, so a hit writes prefix + new number + suffix (TookParts) without scanning or
// re-serialising the body.
//
// Encode/Decode are the L2 wire form: a fixed little-endian header and the two strings.
// Decode validates every length against the input and returns nullopt on anything malformed
// (an L2 value written by another version, or corrupted): the caller treats it as a miss.
//
// A door may keep its own in-memory form of the entry beside the bytes, in a type derived from
// Envelope (the LLM cache's recorded answer, which a hit replays as it is rather than decoding
// `body` each time; made with std::make_shared, so the entry is one allocation and the
// shared_ptr<const Envelope> destroys it whole). It says what it holds in `held_bytes`: the L1
// charges them, the L2 never sees them (Encode leaves them out).
//
// Threads: values; an entry in L1 is shared as shared_ptr<const Envelope> and never mutated,
// but for its L1 slot, which only the L1 that holds it touches (L1Slot says how).
#pragma once

#include <atomic>
#include <boost/intrusive/list_hook.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace turnpike::cache {

inline constexpr uint32_t kNoTook = UINT32_MAX;

// What an L1 (l1_cache.h) keeps of an entry it holds, in the entry itself, so that storing one
// allocates nothing beside it: the key's bytes (copied in: inline up to kInlineId, past that in
// a string of the slot's own) and hash, the tenant in it, the bytes
// charged, the entry's places in the L1's lists, the L1's own reference to it (`owner`) and the
// CLOCK bit a hit sets. The L1 writes it under the shard's lock only; a lock-free reader of the
// L1 reads `id`, `hash` and `owner` (written before the entry is published, left alone until
// it is reclaimed) and sets `referenced`. An envelope is in at most one L1 at a time; a copy of
// an envelope starts with an empty slot.
struct Envelope;
struct L1Slot {
  using Hook =
      boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>>;
  L1Slot() = default;
  L1Slot(const L1Slot&) {}
  L1Slot& operator=(const L1Slot&) { return *this; }

  static constexpr size_t kInlineId = 128;  // an LLM key with a 36-byte tenant id is ~110
  // Keeps a copy of `key_id` as `id`. Writers only, before the entry is published.
  void SetId(std::string_view key_id) {
    if (key_id.size() <= kInlineId) {
      std::memcpy(inline_id, key_id.data(), key_id.size());
      id = std::string_view(inline_id, key_id.size());
    } else {
      long_id.assign(key_id);
      id = long_id;
    }
  }

  std::string_view id;      // the key's bytes, in inline_id or long_id
  uint64_t hash = 0;        // IdHash(id), carried from the key (key.h)
  std::string_view tenant;  // in id
  size_t charge = 0;
  Hook lru;         // the shard's list, most recently inserted or given a second chance first
  Hook tenant_lru;  // the tenant's list within the shard
  // The L1's reference, from Insert until the entry is reclaimed (after its removal, once no
  // reader can still see it): a hit copies it. Non-null also while a removed entry waits.
  std::shared_ptr<const Envelope> owner;
  std::atomic<bool> referenced{false};  // set by a hit (relaxed), cleared by the eviction scan
  char inline_id[kInlineId];            // not initialised: written by SetId before it is read
  std::string long_id;
};

struct Envelope {
  uint64_t generation = 0;
  int64_t expires_at_ms = 0;  // unix milliseconds (shared by replicas through L2)
  uint16_t status = 200;
  std::string content_type;
  std::string body;
  uint32_t took_offset = kNoTook;  // of the `took` value's digits in body, or kNoTook
  uint32_t took_length = 0;
  size_t held_bytes = 0;  // a derived type's own form (see above); not part of the L2 form
  mutable L1Slot l1;      // the L1's (see L1Slot); not part of the L2 form

  bool Expired(int64_t now_ms) const { return now_ms >= expires_at_ms; }
  // Bytes counted against the L1's caps for this envelope (strings + fixed overhead).
  size_t Charge() const;
};

// Offset and length of the integer value of the top-level object's "took" member, if the body
// is an object that has one (nested objects and strings are skipped, not searched).
struct TookSpan {
  uint32_t offset = kNoTook;
  uint32_t length = 0;
};
TookSpan FindTook(std::string_view body);

// The body with `took` replaced by `took_ms`: write prefix, number, suffix in that order.
// Without a took span, prefix is the whole body and the rest is empty. Views into `envelope`
// and the prefix/suffix view `envelope`: keep it alive while writing.
struct TookParts {
  std::string_view prefix;
  std::string_view suffix;
  char digits[24];
  uint8_t digits_length = 0;
  std::string_view number() const { return {digits, digits_length}; }
};
TookParts RestampTook(const Envelope& envelope, int64_t took_ms);

// The same, joined into one string (tests, and callers that need one buffer).
std::string RestampedBody(const Envelope& envelope, int64_t took_ms);

std::string Encode(const Envelope& envelope);
std::optional<Envelope> Decode(std::string_view bytes);

}  // namespace turnpike::cache
