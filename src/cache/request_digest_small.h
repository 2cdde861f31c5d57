// The request digest's path for small bodies (request_digest.h "Small bodies"): one pass that
// writes the canonical text of a body of at most kMaxBody bytes straight into a fixed buffer,
// for the common request (plain strings, integers and decimals, members mostly in order), and
// leaves every other body, invalid ones included, to the general scanner (request_digest.cc),
// which then starts over. The two write the same text, so the digest does not depend on the
// path. Internal to src/cache/: RequestDigester::Of() is its one caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "cache/key.h"

namespace turnpike::cache::small_digest {

// Larger bodies go the general way: the text fits 16-bit offsets and the records a fixed array.
constexpr size_t kMaxBody = 1024;
// Zero bytes that must follow the body (RequestDigester's padded copy has more): the scan reads
// up to 16 bytes past a string's last byte, and a zero byte stops every token.
constexpr size_t kPadding = 16;
// The buffer the caller gives: the text, as much again for reordering an object's members, and
// a 32-byte record per member (at most kMaxBody / 3 of them).
constexpr size_t kTextBytes = 2 * kMaxBody + 64;
constexpr size_t kScratchBytes = 2 * kTextBytes + 32 * (kMaxBody / 3);

// Writes the canonical text of `body` (size <= kMaxBody, followed by kPadding zero bytes)
// without the top-level members named in `excluded` (names as decoded), at `scratch`
// (kScratchBytes): its size, or 0 if the general path must digest the body (a canonical text is
// never empty).
size_t Canonical(std::string_view body, std::span<const std::string_view> excluded, char* scratch);

// XXH3-128 of `text`, as RequestDigester::Of() returns it: xxHash compiled in (its run-time
// dispatched copy in the shared library costs a call and a dispatch for a hundred bytes).
Digest128 Hash(std::string_view text, uint64_t seed);

}  // namespace turnpike::cache::small_digest
