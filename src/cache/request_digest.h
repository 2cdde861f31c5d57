// The digest of an LLM request body for the LLM response cache's key (key.h): XXH3-128 of the
// body's canonical form, written in one pass over the JSON text without a document.
//
// What counts: everything in the body but the top-level members the caller excludes (fields
// that never change the answer: "stream", "user", "metadata"...; a nested member of the same
// name counts). Two bodies have one digest when they differ only in
//   - whitespace;
//   - the order of an object's members, at any depth (arrays keep their order);
//   - the spelling of a number: 1, 1.0, 1e0, 10E-1 and 1.00 are one number, -0 is 0. Numbers
//     are exact decimals, never doubles: the significant digits with leading and trailing
//     zeros stripped, and the power of ten, so 2^53 + 1 and 2^53 differ, as do 0.1 and
//     0.10000000000000001;
//   - string escapes: "\u0041" is "A", "\/" is "/", a surrogate pair is the code point's UTF-8.
// Anything else (a value, a member name, an extra member, a type: 1 and "1", true and 1, null
// and an absent member) gives another digest.
//
// Canonical form: compact JSON; each object's members ordered by name, the shorter first and
// names of one length by the bytes of their canonical text (duplicates: below); numbers as
// their significant digits and a power of ten when it is not 0 ("15e-1" for 1.5, "1e2" for
// 100, "42" for 42.0); strings with only the escapes JSON requires (\" \\ \b \f \n \r \t,
// other control characters as \u00xx) and every other character as UTF-8. Any fixed order of
// names would make the form canonical; this one (shortlex) is the order SDKs mostly write
// already ("role" before "content", "id" before "type" before "function"), so for most objects
// the order costs a check, not a sort. Duplicate member names are all kept, in their order in
// the body (the sort is stable): {"a":1,"a":2} differs from {"a":2,"a":1} and from {"a":2}.
// Parsers disagree on which duplicate wins (Python's and Boost.JSON's take the last, others the
// first or refuse), so only bodies whose duplicates line up alike share an entry.
//
// Why a canonical text, hashed once, and not a hash tree: XXH3 is fastest over one run of
// contiguous bytes, and a tree would pay a hash call per member. One pass over the body writes
// each token in canonical form (strings 16 bytes at a time) with members where the body has
// them, and records every object. An object whose members came in order costs one name
// comparison per member; if any did not (an SDK's {"model":...,"messages":...,"tools":...}),
// its members are sorted (by offsets, not bytes) and a second pass copies the text once more,
// each such object with its members in order. Then XXH3 runs once over the result.
//
// Small bodies (at most 1 KB: a typical chat request) take a second scanner first
// (request_digest_small.h): one pass into a fixed buffer, no object records but the open
// objects' members, an out-of-order object put in order in place when it closes, and the zero
// bytes after the padded copy ending every token instead of a bounds check per byte. It writes
// the same canonical text for every body it takes, so the digest does not depend on the path
// (and did not change with it: no L2 entry format or version changed); a body it does not take
// ("\uXXXX" escapes, exponents, an escape in a member name, nesting past kMaxDepth, numbers
// that would outgrow its buffer) and every invalid one go to the general scanner, which then
// digests the body or reports the error. tests/cache/request_digest_test.cc and
// fuzz/request_digest_fuzz.cc check that the two paths agree on the text, the digest and the
// error. About 1,450 callgrind instructions for the 107-byte bench request (1,660 with the
// "seed" of its --distinct runs), against 2,250 (2,600) the general way.
//
// Invalid input is kInvalidRequest, with what and the byte offset in the message: malformed or
// truncated JSON, trailing bytes, bad escapes, lone surrogates, invalid UTF-8 in a string
// (overlong forms, encoded surrogates and code points above U+10FFFF included), arrays and
// objects nested deeper than kMaxDepth, an exponent of 10^18 or more; a body over kMaxBody is
// kPayloadTooLarge. Every read is bounded by the body or its padded copy; open containers are a
// fixed stack of kMaxDepth, and the second pass recurses no deeper than the objects nest.
//
// Collisions: two bodies in different classes have different canonical texts (the text is
// JSON that reads back as its class: numbers as exact decimals, strings decoded, members in a
// total order with duplicates kept), so they share a digest only if XXH3-128 collides on two
// texts. XXH3 is not a cryptographic hash. The tenant is in the key in clear (key.h), so
// tenants never share an entry whatever their digests: a crafted collision could only give one
// request of a tenant the cached answer to another request of the same tenant (and key). With
// a secret seed, crafting one means first learning the seed. Random collisions follow the
// 128-bit birthday bound: likely only near 2^64 distinct requests under one key, about 2^-65
// among 2^32. The search cache's Digester (SHA-256) also rules out crafted collisions, but
// costs about 3 us for 6 KB on our 2-core machine: more than this whole digest.
//
// Ownership and threads: a RequestDigester owns its scratch, sized by the largest body it has
// seen, and reuses it: once warm, Of() allocates nothing but an error's message. The scratch is
// a padded copy of a body under 4 KB (so that a small body's scan can read ahead past its end),
// two texts of the body's size (plus 4 KB each, for alignment) and a 24-byte record per member
// and object: about 4 times a 6 KB chat body, up to some 12 times a large body made of tiny
// members ({"a":0,...}); and, from the first body of at most 1 KB, the small path's fixed
// 15 KB (its text, room to reorder, a record per member). Not thread-safe: one per worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "cache/key.h"
#include "common/result.h"

namespace turnpike::cache {

class RequestDigester {
 public:
  // Arrays and objects nested deeper than this are invalid (the body's outermost one is at 1).
  static constexpr int kMaxDepth = 64;
  // Larger bodies are refused (kPayloadTooLarge): the scratch records hold 32-bit offsets.
  static constexpr size_t kMaxBody = size_t{1} << 30;

  // `seed` is the cache's configured seed: replicas sharing an L2 must use the same one.
  explicit RequestDigester(uint64_t seed);
  RequestDigester(RequestDigester&&) noexcept;
  RequestDigester& operator=(RequestDigester&&) noexcept;
  ~RequestDigester();

  // The digest of `body` (any JSON value; `excluded` applies when it is an object) without the
  // top-level members named in `excluded` (names as decoded: "stream", not "\u0073tream").
  Result<Digest128> Of(std::string_view body, std::span<const std::string_view> excluded = {});

  // The canonical text the last successful Of() hashed, until the next call: for tests, and to
  // see why two requests did or did not share an entry.
  std::string_view canonical() const { return canonical_; }

  // For tests and the fuzz target, to compare the two paths: whether Of() may take the small
  // bodies' one (on unless turned off), and whether the last successful call did.
  void set_small_path(bool enabled) { small_path_ = enabled; }
  bool took_small_path() const { return took_small_path_; }

 private:
  class Scanner;
  struct Member;
  struct Object;

  uint64_t seed_;
  bool small_path_ = true;
  bool took_small_path_ = false;
  std::vector<char> small_;      // small bodies' text and room to reorder (request_digest_small.h)
  std::vector<char> padded_;     // a small body's copy with zero bytes after it (.cc kPadBelow)
  std::vector<char> text_;       // the tokens in canonical form, members in body order
  std::vector<char> sorted_;     // the same with every object's members in order, if needed
  std::vector<Member> open_;     // the open objects' members, innermost last
  std::vector<Member> placed_;   // out-of-order objects' members, sorted
  std::vector<Object> objects_;  // every object, in body order of their '{'
  std::string_view canonical_;   // in text_ or sorted_
};

}  // namespace turnpike::cache
