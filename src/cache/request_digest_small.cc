// Small bodies' one pass (request_digest_small.h). Unlike the general scanner it keeps no
// object records for a second pass and needs no bounds check per byte: the text has a fixed
// size, an object whose members came out of order is put in order when it closes (its members'
// text copied aside and back, in place), and the zero bytes after the body stop every token, so
// only the last one compares with the body's end. What it does not handle (escapes \uXXXX,
// exponents, names with an escape, numbers that would outgrow the buffer, nesting over
// kMaxDepth) and every error return 0: the general scanner then digests the body or reports
// what is wrong and where.
#include "cache/request_digest_small.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <charconv>
#include <cstring>

#include "cache/request_digest.h"
#include "cache/request_digest_text.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace turnpike::cache::small_digest {
namespace {

using digest_text::BytesEqual;
using digest_text::CompareNames;
using digest_text::IsDigit;
using digest_text::IsVerbatimEscape;

constexpr size_t kBlock = 16;
// Room kept in the text beyond the body bytes still to read: a block store writes up to 16
// bytes past a string, and a number up to 6 bytes more than it read ("1.5" is "15e-1"; with at
// most kMaxBody fraction digits, an exponent has at most 4).
constexpr size_t kSlack = 64;
constexpr int kMaxDepth = RequestDigester::kMaxDepth;
// A member's name and colon are 3 bytes of its own, so a body holds at most kMaxBody / 3.
constexpr size_t kMaxMembers = kMaxBody / 3;
static_assert(kTextBytes >= kMaxBody + kSlack);

// Where a string's out-of-line step left the scan: the next body byte to read and text byte to
// write (p null: the body is the general path's). By value, so that the loop keeps both in
// registers.
struct Cursor {
  const char* p;
  char* o;
};

// A member of an open object, in the text (pointers: an offset would cost a subtraction per
// field written).
struct Member {
  char* rewind;  // where it starts, its comma included
  char* name;    // after the name's opening quote
  char* end;     // after the value
  size_t name_size;
};
static_assert(kScratchBytes >= 2 * kTextBytes + kMaxMembers * sizeof(Member));
static_assert(kTextBytes % alignof(Member) == 0);

// An open array or object.
struct Frame {
  char* open;   // its '[' or '{'
  size_t base;  // an object's first member in the records
  bool object;
  bool in_order;  // an object's members so far came in name order
};

// A name's bit in a 64-bit filter of names, from its length and last byte: enough to tell the
// excluded names from those a request has at the top level ("model" and "store", "messages"
// and "metadata" share a length), so that a name is rarely compared byte by byte.
[[gnu::always_inline]] inline uint64_t NameBit(const char* name, size_t size) {
  const size_t last = size == 0 ? 0 : static_cast<unsigned char>(name[size - 1]);
  return uint64_t{1} << ((last ^ (size << 2)) & 63);
}

#if defined(__SSE2__)
// The bytes that end a run of plain bytes in a string: a quote, a backslash, a control or a
// non-ASCII byte (negative in a signed compare, so below ' ' too). Made once per body: each
// string site would otherwise load the three constants again.
struct Stops {
  __m128i quote = _mm_set1_epi8('"');
  __m128i backslash = _mm_set1_epi8('\\');
  __m128i space = _mm_set1_epi8(' ');

  [[gnu::always_inline]] unsigned In(__m128i block) const {
    const __m128i stops =
        _mm_or_si128(_mm_cmpeq_epi8(block, quote),
                     _mm_or_si128(_mm_cmpeq_epi8(block, backslash), _mm_cmplt_epi8(block, space)));
    return static_cast<unsigned>(_mm_movemask_epi8(stops));
  }
};

class Scan {
 public:
  Scan(std::string_view body, std::span<const std::string_view> excluded, char* scratch)
      : begin_(body.data()),
        end_(body.data() + body.size()),
        excluded_(excluded),
        text_(scratch),
        aside_(scratch + kTextBytes),
        members_(reinterpret_cast<Member*>(scratch + 2 * kTextBytes)) {
    for (std::string_view name : excluded) excluded_bits_ |= NameBit(name.data(), name.size());
  }

  size_t Run();

 private:
  // Moves `p` past whitespace; returns the byte there (0 at the body's end).
  [[gnu::always_inline]] static char Next(const char*& p) {
    char c = *p;
    while (static_cast<unsigned char>(c) <= ' ' &&
           (c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
      c = *++p;
    }
    return c;
  }

  template <bool kName>
  [[gnu::always_inline]] inline bool String(const char*& p, char*& o, const Stops& stops);
  static Cursor Special(Cursor at, bool name);
  [[gnu::always_inline]] inline bool Number(const char*& p, char*& o) const;
  [[gnu::always_inline]] inline bool Name(const char*& p, char*& o, const Frame& frame,
                                          size_t& count, const Stops& stops);
  [[gnu::always_inline]] inline void EndMember(char*& o, Frame& frame, bool top_level,
                                               size_t& count);
  bool Excluded(const char* name, size_t size) const;
  void Order(const Frame& frame, size_t count, const char* o);

  const char* begin_;
  const char* end_;
  std::span<const std::string_view> excluded_;
  uint64_t excluded_bits_ = 0;  // NameBit of each excluded name
  char* text_;
  char* aside_;      // an out-of-order object's members while they are put back in order
  Member* members_;  // the open objects' members, innermost last (kMaxMembers)
};

// A string from its opening quote, 16 bytes at a time up to the first quote, backslash, control
// or non-ASCII byte (the block store writes past it; the next write overwrites that); those
// but the closing quote are Special's, out of line, so that their constants stay out of here.
template <bool kName>
bool Scan::String(const char*& p, char*& o, const Stops& stops) {
  // The first block holds the opening quote: its stop bit is dropped.
  __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(o), block);
  unsigned special = stops.In(block) & ~1u;
  for (;;) {
    if (special != 0) {
      const unsigned plain = static_cast<unsigned>(__builtin_ctz(special));
      p += plain;
      o += plain;
      if (*p == '"') {  // already written by the block store
        ++p;
        ++o;
        return true;
      }
      const Cursor next = Special({p, o}, kName);
      if (next.p == nullptr) return false;
      p = next.p;
      o = next.o;
    } else {
      p += kBlock;
      o += kBlock;
    }
    block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o), block);
    special = stops.In(block);
  }
}

// In a string, at a backslash, a control or a non-ASCII byte: an escape whose canonical form is
// itself or "\/" (not in a member name: an excluded name is then a byte comparison), or a valid
// UTF-8 sequence. Anything else (a "\u" escape, a control byte, the body's end) is the general
// path's: a null cursor.
Cursor Scan::Special(Cursor at, bool name) {
  const char c = *at.p;
  if (c == '\\' && !name) {
    const char kind = at.p[1];
    if (IsVerbatimEscape(kind)) {
      at.o[0] = '\\';
      at.o[1] = kind;
      return {at.p + 2, at.o + 2};
    }
    if (kind == '/') {
      *at.o = '/';
      return {at.p + 2, at.o + 1};
    }
    return {nullptr, nullptr};
  }
  if (static_cast<unsigned char>(c) < 0x80) return {nullptr, nullptr};
  // The zero bytes after the body fail any sequence cut short by its end.
  const size_t length = digest_text::Utf8Length(at.p, 4);
  if (length == 0) return {nullptr, nullptr};
  std::memcpy(at.o, at.p, 4);
  return {at.p + length, at.o + length};
}

// A number without an exponent: its significant digits and the power of ten after them, as the
// general scanner writes it (request_digest.h); zero is "0" whatever its sign.
bool Scan::Number(const char*& p, char*& o) const {
  const char* q = p;
  char* const start = o;
  if (*q == '-') *o++ = *q++;
  char* const digits = o;
  if (*q == '0') {
    ++q;
  } else if (IsDigit(*q)) {
    do {
      *o++ = *q++;
    } while (IsDigit(*q));
  } else {
    return false;
  }
  int exponent = 0;
  if (*q == '.') {
    const char* const fraction = ++q;
    while (IsDigit(*q)) *o++ = *q++;
    if (q == fraction) return false;
    exponent = -static_cast<int>(q - fraction);
  }
  if (*q == 'e' || *q == 'E' || IsDigit(*q)) return false;  // an exponent, or "01"
  p = q;
  char* first = digits;  // leading zeros: only a fraction's, after "0."
  while (first != o && *first == '0') ++first;
  if (first == o) {
    o = start;
    *o++ = '0';
    return true;
  }
  while (o[-1] == '0') {
    --o;
    ++exponent;
  }
  if (first != digits) {
    std::memmove(digits, first, static_cast<size_t>(o - first));
    o -= first - digits;
  }
  if (exponent == 0) return true;
  *o++ = 'e';
  o = std::to_chars(o, o + 8, exponent).ptr;
  // The text grew: keep the room for the rest of the body, else the general path takes it.
  return static_cast<size_t>(text_ + kTextBytes - o) >= static_cast<size_t>(end_ - p) + kSlack;
}

// A member's name and colon from its opening quote, the comma before it written if a member
// was kept before it; its record is the count-th.
bool Scan::Name(const char*& p, char*& o, const Frame& frame, size_t& count, const Stops& stops) {
  Member& member = members_[count];
  member.rewind = o;
  if (count > frame.base) *o++ = ',';
  member.name = o + 1;
  if (!String<true>(p, o, stops)) return false;
  member.name_size = static_cast<size_t>(o - 1 - member.name);
  ++count;
  if (Next(p) != ':') return false;
  ++p;
  *o++ = ':';
  return true;
}

// After a member's value: dropped if it is excluded, else checked against the one before.
void Scan::EndMember(char*& o, Frame& frame, bool top_level, size_t& count) {
  Member& member = members_[count - 1];
  if (top_level && Excluded(member.name, member.name_size)) {
    o = member.rewind;
    --count;
    return;
  }
  member.end = o;
  if (count - 1 > frame.base) {
    const Member& previous = members_[count - 2];
    if (CompareNames(member.name, member.name_size, previous.name, previous.name_size) < 0) {
      frame.in_order = false;
    }
  }
}

bool Scan::Excluded(const char* name, size_t size) const {
  if ((excluded_bits_ & NameBit(name, size)) == 0) return false;
  for (std::string_view excluded : excluded_) {
    if (excluded.size() == size && BytesEqual(name, excluded.data(), size)) return true;
  }
  return false;
}

// An object whose members came out of order, at its '}' (not yet written): its member records
// sorted by name (by insertion: stable, so duplicates keep their order; the objects in it are
// in order already), then its members' text copied aside and back in that order, in place.
void Scan::Order(const Frame& frame, size_t count, const char* o) {
  Member* const members = members_ + frame.base;
  const size_t size = count - frame.base;
  for (size_t next = 1; next < size; ++next) {
    const Member member = members[next];
    size_t at = next;
    for (; at > 0 && CompareNames(member.name, member.name_size, members[at - 1].name,
                                  members[at - 1].name_size) < 0;
         --at) {
      members[at] = members[at - 1];
    }
    members[at] = member;
  }
  char* const from = frame.open + 1;
  std::memcpy(aside_, from, static_cast<size_t>(o - from));
  char* w = from;
  for (size_t i = 0; i < size; ++i) {
    if (i != 0) *w++ = ',';
    const char* const begin = members[i].name - 1;
    const size_t bytes = static_cast<size_t>(members[i].end - begin);
    std::memcpy(w, aside_ + (begin - from), bytes);
    w += bytes;
  }
}

// The main loop, as the general scanner's: a value, then the punctuation after it up to the
// next value (closing every container that ends there).
size_t Scan::Run() {
  const Stops stops;
  const char* p = begin_;
  char* o = text_;
  Frame stack[kMaxDepth];
  Frame* open = stack;  // past the innermost open container's frame
  size_t count = 0;     // records in members_
  for (;;) {
    const char first = Next(p);
    switch (first) {
      case '"':
        if (!String<false>(p, o, stops)) return 0;
        break;
      case '{':
      case '[': {
        if (open == stack + kMaxDepth) return 0;
        const bool object = first == '{';
        Frame& frame = *open++;
        frame = {o, count, object, true};
        *o++ = *p++;
        const char next = Next(p);
        if (next == (object ? '}' : ']')) {
          *o++ = *p++;
          --open;
          break;
        }
        if (object && (next != '"' || !Name(p, o, frame, count, stops))) return 0;
        continue;
      }
      case 't':
        if (std::memcmp(p, "true", 4) != 0) return 0;
        std::memcpy(o, "true", 4);
        p += 4;
        o += 4;
        break;
      case 'f':
        if (std::memcmp(p, "false", 5) != 0) return 0;
        std::memcpy(o, "false", 5);
        p += 5;
        o += 5;
        break;
      case 'n':
        if (std::memcmp(p, "null", 4) != 0) return 0;
        std::memcpy(o, "null", 4);
        p += 4;
        o += 4;
        break;
      default:
        if (!Number(p, o)) return 0;
    }
    for (;;) {  // after a value
      if (open == stack) {
        Next(p);
        return p == end_ ? static_cast<size_t>(o - text_) : 0;
      }
      Frame& frame = open[-1];
      if (frame.object) EndMember(o, frame, open == stack + 1, count);
      const char next = Next(p);
      if (next == ',') {
        ++p;
        if (!frame.object) {
          *o++ = ',';
        } else if (Next(p) != '"' || !Name(p, o, frame, count, stops)) {
          return 0;
        }
        break;
      }
      if (next != (frame.object ? '}' : ']')) return 0;
      if (frame.object) {
        if (!frame.in_order) Order(frame, count, o);
        count = frame.base;
      }
      *o++ = *p++;
      --open;
    }
  }
}
#endif

}  // namespace

size_t Canonical(std::string_view body, std::span<const std::string_view> excluded, char* scratch) {
#if defined(__SSE2__)
  return Scan(body, excluded, scratch).Run();
#else
  return 0;  // the strings' scan is SSE2's
#endif
}

Digest128 Hash(std::string_view text, uint64_t seed) {
  const XXH128_hash_t hash = XXH3_128bits_withSeed(text.data(), text.size(), seed);
  XXH128_canonical_t bytes;
  XXH128_canonicalFromHash(&bytes, hash);
  Digest128 digest;
  std::memcpy(digest.data(), bytes.digest, digest.size());
  return digest;
}

}  // namespace turnpike::cache::small_digest
