// RequestDigester (request_digest.h). One file of over 800 lines, on purpose: the scanner's
// per-token functions (strings, numbers, members, objects) must inline into its one loop, which
// is what keeps a 6 KB body under the 2 us bar; split across translation units they would be
// calls. The sections: character helpers, the member records, the scanner's loop, objects put in
// order, strings, numbers.
#include "cache/request_digest.h"

#include <xxhash.h>
#if defined(__x86_64__)
// Makes XXH3_128bits_withSeed the library's run-time dispatched version: AVX2 or AVX-512 where
// the CPU has them (3 times faster over a chat body here), the same digest everywhere.
#include <immintrin.h>
#include <xxh_x86dispatch.h>
#endif

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>

#include "cache/request_digest_small.h"
#include "cache/request_digest_text.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace turnpike::cache {
namespace {

using digest_text::BytesEqual;
using digest_text::CompareNames;
using digest_text::IsDigit;
using digest_text::IsVerbatimEscape;
using digest_text::LengthBit;
using digest_text::LengthMask;

// Room kept in the text buffer beyond the body bytes still to read: a number may write up to 22
// bytes more than it read ("1.1" -> "11e-1", an exponent's digits), and block copies read and
// write up to 63 bytes past their end.
constexpr size_t kSlack = 128;
constexpr size_t kBlock = 16;
constexpr size_t kCopyStep = 64;
constexpr size_t kPage = 4096;
constexpr size_t kLookAhead = 64;         // bytes in the look-ahead window
constexpr size_t kLookAheadRefresh = 40;  // a string starting further in reloads it
constexpr size_t kInitialRecords = 64;
constexpr size_t kMaxSortedByIndex = 32;   // more members are sorted as records
constexpr size_t kMaxExponentDigits = 18;  // |exponent| < 10^18: exact in int64 with any body
// A body shorter than this is scanned from a copy followed by kPadding zero bytes, so that the
// look-ahead window and the block copies, which read up to 120 bytes ahead, work up to its last
// string (else the window is empty in the last 128 bytes, and a small body's strings all go
// the long way, their last 16 bytes one call per byte). A zero byte is a stop in the window and
// a special byte in a block, never a quote, so no string can end in the padding.
constexpr size_t kPadBelow = 4096;
constexpr size_t kPadding = 2 * kLookAhead;
constexpr char kHex[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(c | 0x20);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Copies `size` bytes by 64-byte steps: may read and write up to 63 bytes past the end.
[[gnu::always_inline]] inline char* CopyBlocks(char* to, const char* from, size_t size) {
#if defined(__SSE2__)
  for (size_t i = 0; i < size; i += kCopyStep) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i + 48));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i), a);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i + 16), b);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i + 32), c);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i + 48), d);
  }
#else
  std::memcpy(to, from, size);
#endif
  return to + size;
}

#if defined(__SSE2__)
// The bytes of `block` that are a backslash, a control character or a byte >= 0x80 (negative
// in a signed compare, so below ' ' too): with quotes, the bytes that are not plain.
[[gnu::always_inline]] inline __m128i SpecialBytes(__m128i block) {
  return _mm_or_si128(_mm_cmpeq_epi8(block, _mm_set1_epi8('\\')),
                      _mm_cmplt_epi8(block, _mm_set1_epi8(' ')));
}
#endif

// The canonical escape of byte `c` (see the header), or 0 bytes if it is written as it is.
size_t EscapeOf(unsigned char c, char (&escape)[6]) {
  if (c >= 0x20 && c != '"' && c != '\\') return 0;
  escape[0] = '\\';
  switch (c) {
    case '"':
    case '\\':
      escape[1] = static_cast<char>(c);
      return 2;
    case '\n':
      escape[1] = 'n';
      return 2;
    case '\r':
      escape[1] = 'r';
      return 2;
    case '\t':
      escape[1] = 't';
      return 2;
    case '\b':
      escape[1] = 'b';
      return 2;
    case '\f':
      escape[1] = 'f';
      return 2;
    default:
      std::memcpy(escape + 1, "u00", 3);
      escape[4] = kHex[c >> 4];
      escape[5] = kHex[c & 0xf];
      return 6;
  }
}

// Whether a member name in canonical form is `name` (decoded): byte for byte, but where the
// canonical name has an escape, which must be the escape of `name`'s byte.
bool SameName(std::string_view canonical, std::string_view name) {
  if (canonical.size() < name.size()) return false;
  size_t at = 0;
  for (char c : name) {
    if (at == canonical.size()) return false;
    if (canonical[at] != '\\') {
      if (canonical[at++] != c) return false;
      continue;
    }
    char escape[6];
    const size_t n = EscapeOf(static_cast<unsigned char>(c), escape);
    if (n == 0 || canonical.size() - at < n || !BytesEqual(canonical.data() + at, escape, n)) {
      return false;
    }
    at += n;
  }
  return at == canonical.size();
}

// Writes a decoded code point: escaped if JSON requires it, else as UTF-8 (never longer than
// the escape it came from).
char* WriteCodePoint(char* o, uint32_t code) {
  if (code < 0x80) {
    char escape[6];
    const size_t n = EscapeOf(static_cast<unsigned char>(code), escape);
    if (n == 0) {
      *o++ = static_cast<char>(code);
    } else {
      std::memcpy(o, escape, n);
      o += n;
    }
  } else if (code < 0x800) {
    *o++ = static_cast<char>(0xc0 | (code >> 6));
    *o++ = static_cast<char>(0x80 | (code & 0x3f));
  } else if (code < 0x10000) {
    *o++ = static_cast<char>(0xe0 | (code >> 12));
    *o++ = static_cast<char>(0x80 | ((code >> 6) & 0x3f));
    *o++ = static_cast<char>(0x80 | (code & 0x3f));
  } else {
    *o++ = static_cast<char>(0xf0 | (code >> 18));
    *o++ = static_cast<char>(0x80 | ((code >> 12) & 0x3f));
    *o++ = static_cast<char>(0x80 | ((code >> 6) & 0x3f));
    *o++ = static_cast<char>(0x80 | (code & 0x3f));
  }
  return o;
}

#if defined(__x86_64__)
// The dispatched XXH3 returns with the upper halves of the vector registers in use, and legacy
// SSE code after it (this file's, or the worker's) then ran 1.6 times slower here; VZEROUPPER
// clears them. Only where the CPU has AVX (else XXH3 used none).
__attribute__((target("avx"))) void ClearUpperVectorState() { _mm256_zeroupper(); }

void AfterDispatchedHash() {
  static const bool has_avx = (__builtin_cpu_init(), __builtin_cpu_supports("avx"));
  if (has_avx) ClearUpperVectorState();
}
#else
void AfterDispatchedHash() {}
#endif

// Where the scan is: the next body byte to read and the next text byte to write. The
// out-of-line steps take and return it by value (p null: failed), so that the main loop keeps
// both in registers: a cursor whose address escaped would live in memory, reloaded after every
// byte written through it.
struct Cursor {
  const char* p;
  char* o;
};

// Where to start writing in a buffer at `to` that a copy reads `from` (kPage spare bytes at its
// start): half a page apart modulo the page. A store whose address matches an earlier load's
// modulo 4096 makes the CPU wait on a false dependency ("4K aliasing"); with the scanner's
// reads and writes advancing together, a text buffer a few bytes after the body modulo 4096
// made the digest a fifth to two fifths slower.
size_t Skew(const char* to, const char* from) {
  const size_t apart =
      (reinterpret_cast<uintptr_t>(to) - reinterpret_cast<uintptr_t>(from)) % kPage;
  return (kPage / 2 - apart) % kPage;
}

// A vector of records in use from index 0, its data and size kept at hand (a vector's are
// loaded and subtracted on each use).
template <typename T>
class Records {
 public:
  explicit Records(std::vector<T>& records) : records_(records) { Take(); }

  // The record at `index`, growing the vector (by doubling) if it is one past the end.
  [[gnu::always_inline]] T& Slot(size_t index) {
    if (index == size_) {
      records_.resize(std::max(kInitialRecords, 2 * records_.size()));
      Take();
    }
    return data_[index];
  }
  T& operator[](size_t index) const { return data_[index]; }
  T* data() const { return data_; }

 private:
  void Take() {
    data_ = records_.data();
    size_ = records_.size();
  }

  std::vector<T>& records_;
  T* data_;
  size_t size_;
};

// Records hold 32-bit offsets into the text and indexes (Of() refuses bodies over kMaxBody):
// half the size of size_t ones, so more of them per cache line.
using Index = uint32_t;

}  // namespace

// A member of an object in the text: offsets into it.
struct RequestDigester::Member {
  Index name_begin;    // after the name's opening quote
  Index name_size;     // up to its closing quote
  Index begin;         // the name's opening quote
  Index end;           // after the value
  Index first_object;  // the first object opened after it began, an index into objects_
  bool reordered;      // an object in its value has members out of order
};

// An object in the text. Objects are recorded when opened, so in the order of their '{': the
// objects inside one follow it, up to subtree_end.
struct RequestDigester::Object {
  Index begin;  // its '{'
  Index end;    // after its '}'
  Index subtree_end;
  Index placed_begin;  // if out of order, its members in order: placed_[placed_begin, placed_end)
  Index placed_end;
  bool in_order;          // its members came in name order
  bool subtree_in_order;  // and so did those of every object in it
};

// One pass over the body writes the text: its tokens in canonical form, members where the body
// has them, and every object's record. If an object's members were out of order, a second
// pass copies the text into sorted_ with each such object's members in order. Invariant
// between tokens: text_ has room for the body bytes left + kSlack after the cursor. Every token
// writes at most what it reads (an escape's canonical form is never longer than the escape),
// but a number, which restores the room after it.
class RequestDigester::Scanner {
 public:
  // `readable`: bytes after the body that may be read (padding: kPadBelow).
  Scanner(RequestDigester& digester, std::string_view body, size_t readable,
          std::span<const std::string_view> excluded)
      : d_(digester),
        begin_(body.data()),
        end_(body.data() + body.size()),
        readable_end_(end_ + readable),
        excluded_(excluded),
        excluded_lengths_(LengthMask(excluded)),
        open_(digester.open_),
        objects_(digester.objects_) {
    LookAhead(begin_);
  }

  // Scans the body: true with canonical() set (in d_.text_ or d_.sorted_), or false with
  // error() set.
  bool Run();

  std::string_view canonical() const { return canonical_; }
  const char* error() const { return error_; }
  size_t error_offset() const { return error_offset_; }

 private:
  // An open array or object, and for an object the member being read.
  struct Frame {
    bool object;
    bool in_order;            // its members so far came in name order
    Index open_base;          // its first member's index in open_
    Index object_index;       // its record in objects_
    Index reordered_at_open;  // reordered_ when it opened
    // The member being read:
    Index rewind;  // where it starts, its comma included
    Index begin;   // where its name starts
    Index name_size;
    bool name_plain;            // its name has no escape (read by ShortString)
    Index first_object;         // the object count when it began
    Index reordered_at_member;  // reordered_ when it began
  };
  enum class Opened { kFailed, kEmpty, kNeedsValue };

  // Failure: records what and where; returns a failed cursor.
  Cursor Fail(const char* p, const char* what) {
    error_ = what;
    error_offset_ = static_cast<size_t>(p - begin_);
    return {nullptr, nullptr};
  }

  // Restores the invariant's room after `o`, growing the buffer if needed; returns the cursor
  // in the (possibly moved) buffer.
  char* Reserve(const char* p, char* o) {
    const size_t used = o ? static_cast<size_t>(o - base_) : 0;
    const size_t need = kPage + used + static_cast<size_t>(end_ - p) + kSlack;
    if (d_.text_.size() < need) d_.text_.resize(std::max(need, d_.text_.size() * 2));
    if (o == nullptr) skew_ = Skew(d_.text_.data(), begin_);
    base_ = d_.text_.data() + skew_;
    return base_ + used;
  }

  Index Offset(const char* o) const { return static_cast<Index>(o - base_); }

  // Moves `p` past whitespace; returns the byte there, or 0 at the body's end (a 0 byte in the
  // body is invalid wherever this is asked, so the two need not be told apart but at the end).
  [[gnu::always_inline]] inline char Next(const char*& p) const {
    for (;; ++p) {
      if (p == end_) return 0;
      const char c = *p;
      if (static_cast<unsigned char>(c) > ' ' ||
          (c != ' ' && c != '\n' && c != '\r' && c != '\t')) {
        return c;
      }
    }
  }

  [[gnu::always_inline]] inline Opened Open(const char*& p, char*& o, Frame* stack, int& depth);
  [[gnu::always_inline]] inline void Close(const char*& p, char*& o, Frame& frame);
  [[gnu::always_inline]] inline bool MemberName(const char*& p, char*& o, Frame& frame);
  [[gnu::always_inline]] inline void EndMember(char*& o, Frame& frame, int depth);
  [[gnu::always_inline]] inline bool String(const char*& p, char*& o);
  [[gnu::always_inline]] inline bool LongString(const char*& p, char*& o);
  [[gnu::always_inline]] inline bool ShortString(const char*& p, char*& o);
  void LookAhead(const char* p);
  [[gnu::always_inline]] inline bool CopyPlainBlocks(const char*& p, char*& o) const;
  [[gnu::always_inline]] inline bool Scalar(const char*& p, char*& o, char first);
  template <size_t N>
  [[gnu::always_inline]] inline bool Literal(const char*& p, char*& o, const char (&word)[N]);
  [[gnu::always_inline]] inline bool Integer(const char*& p, char*& o);

  Cursor StringSpecial(Cursor at);
  Cursor UnicodeEscape(Cursor at);
  Cursor Utf8Sequence(Cursor at);
  Cursor Number(Cursor at);
  bool IsExcluded(Index name_begin, Index name_size, bool plain) const;
  void Place(Object& object, Index open_base);
  void SortIndexes(const Member* open, Index count, uint8_t* order) const;
  [[gnu::always_inline]] inline bool MemberLess(const Member& a, const Member& b) const;
  std::string_view Sorted(size_t size);
  char* Emit(Index from, Index to, Index index, char* out) const;

  RequestDigester& d_;
  const char* begin_;
  const char* end_;
  const char* readable_end_;  // end_, or past it when the body is padded
  std::span<const std::string_view> excluded_;
  uint64_t excluded_lengths_;  // LengthMask(excluded_)
  Records<Member> open_;       // the open objects' members, innermost last
  Records<Object> objects_;    // every object, in the order of their '{'
  char* base_ = nullptr;       // d_.text_.data() + skew_
  size_t skew_ = 0;
  Index open_count_ = 0;
  Index placed_count_ = 0;
  Index object_count_ = 0;
  Index reordered_ = 0;  // objects found with members out of order (and placed)
  // The look-ahead window: 64 body bytes from window_, a bit per byte that ends a plain run (a
  // quote, backslash, control or non-ASCII byte).
  const char* window_ = nullptr;
  uint64_t window_stops_ = 0;
  std::string_view canonical_;
  const char* error_ = nullptr;
  size_t error_offset_ = 0;
};

// The main loop: a value, then the punctuation after it up to the next value (closing every
// container that ends there). Open containers are frames on a fixed stack, not recursion.
bool RequestDigester::Scanner::Run() {
  const char* p = begin_;
  char* o = Reserve(p, nullptr);
  Frame stack[kMaxDepth];
  int depth = 0;
  for (;;) {
    const char first = Next(p);
    if (first == '{' || first == '[') {
      const Opened opened = Open(p, o, stack, depth);
      if (opened == Opened::kFailed) return false;
      if (opened == Opened::kNeedsValue) continue;
    } else if (!Scalar(p, o, first)) {
      return false;
    }
    for (;;) {  // after a value
      if (depth == 0) {
        if (Next(p) != 0 || p != end_) return Fail(p, "unexpected bytes after the JSON value").p;
        canonical_ = reordered_ == 0 ? std::string_view(base_, Offset(o)) : Sorted(Offset(o));
        return true;
      }
      Frame& frame = stack[depth - 1];
      if (frame.object) EndMember(o, frame, depth);
      const char next = Next(p);
      if (next == ',') {
        ++p;
        if (!frame.object) {
          *o++ = ',';
        } else if (!MemberName(p, o, frame)) {
          return false;
        }
        break;
      }
      if (next != (frame.object ? '}' : ']')) {
        if (p == end_) {
          return Fail(p, frame.object ? "unterminated object" : "unterminated array").p;
        }
        return Fail(p, frame.object ? "expected ',' or '}'" : "expected ',' or ']'").p;
      }
      Close(p, o, frame);
      --depth;
    }
  }
}

// At '{' or '[': pushes a frame (and an object's record); for an object, reads the first
// member's name too. An empty container is a whole value.
RequestDigester::Scanner::Opened RequestDigester::Scanner::Open(const char*& p, char*& o,
                                                                Frame* stack, int& depth) {
  if (depth == kMaxDepth) {
    Fail(p, "arrays and objects nested too deep");
    return Opened::kFailed;
  }
  Frame& frame = stack[depth++];
  frame.object = *p == '{';
  if (frame.object) {
    frame.in_order = true;
    frame.open_base = open_count_;
    frame.object_index = object_count_;
    frame.reordered_at_open = reordered_;
    objects_.Slot(object_count_++).begin = Offset(o);
  }
  *o++ = *p++;
  if (Next(p) == (frame.object ? '}' : ']')) {
    Close(p, o, frame);
    --depth;
    return Opened::kEmpty;
  }
  if (frame.object && !MemberName(p, o, frame)) return Opened::kFailed;
  return Opened::kNeedsValue;
}

// At '}' or ']': an object's record is completed, its members placed in order if they were not.
void RequestDigester::Scanner::Close(const char*& p, char*& o, Frame& frame) {
  *o++ = *p++;
  if (!frame.object) return;
  Object& object = objects_[frame.object_index];
  object.end = Offset(o);
  object.subtree_end = object_count_;
  object.in_order = frame.in_order;
  object.subtree_in_order = frame.in_order && reordered_ == frame.reordered_at_open;
  if (!frame.in_order) Place(object, frame.open_base);
  open_count_ = frame.open_base;
}

// A member's name and colon, the comma before it written if a member was kept before it.
bool RequestDigester::Scanner::MemberName(const char*& p, char*& o, Frame& frame) {
  if (Next(p) != '"') return Fail(p, "expected a member name").p;
  frame.rewind = Offset(o);
  if (open_count_ > frame.open_base) *o++ = ',';
  frame.begin = Offset(o);
  frame.first_object = object_count_;
  frame.reordered_at_member = reordered_;
  frame.name_plain = ShortString(p, o);
  if (!frame.name_plain && !LongString(p, o)) return false;
  frame.name_size = Offset(o) - frame.begin - 2;
  if (Next(p) != ':') return Fail(p, "expected ':'").p;
  ++p;
  *o++ = ':';
  return true;
}

// After a member's value: the member joins the object's open members, unless it is excluded
// (then its text and the records of the objects in it are dropped).
void RequestDigester::Scanner::EndMember(char*& o, Frame& frame, int depth) {
  const Index name_begin = frame.begin + 1;
  if (depth == 1 && IsExcluded(name_begin, frame.name_size, frame.name_plain)) {
    o = base_ + frame.rewind;
    object_count_ = frame.first_object;
    return;
  }
  if (open_count_ > frame.open_base) {
    const Member& previous = open_[open_count_ - 1];
    if (CompareNames(base_ + name_begin, frame.name_size, base_ + previous.name_begin,
                     previous.name_size) < 0) {
      frame.in_order = false;
    }
  }
  Member& member = open_.Slot(open_count_++);
  member.name_begin = name_begin;
  member.name_size = frame.name_size;
  member.begin = frame.begin;
  member.end = Offset(o);
  member.first_object = frame.first_object;
  member.reordered = reordered_ != frame.reordered_at_member;
}

// A name in canonical form spells an excluded name byte for byte unless it holds an escape (a
// quote, backslash or control character; the canonical text escapes nothing else). A name read
// by ShortString has none: it is excluded only if an excluded name has its length (one bit of
// the mask, for most names the whole check) and its bytes. Any other name is decoded against
// each (SameName).
bool RequestDigester::Scanner::IsExcluded(Index name_begin, Index name_size, bool plain) const {
  const std::string_view name(base_ + name_begin, name_size);
  if (!plain) {
    for (std::string_view excluded : excluded_) {
      if (SameName(name, excluded)) return true;
    }
    return false;
  }
  if ((excluded_lengths_ & LengthBit(name_size)) == 0) return false;
  for (std::string_view excluded : excluded_) {
    if (excluded.size() == name_size && BytesEqual(name.data(), excluded.data(), name_size)) {
      return true;
    }
  }
  return false;
}

// Name order; equal names keep their order in the body.
bool RequestDigester::Scanner::MemberLess(const Member& a, const Member& b) const {
  const int order =
      CompareNames(base_ + a.name_begin, a.name_size, base_ + b.name_begin, b.name_size);
  return order != 0 ? order < 0 : a.begin < b.begin;
}

// The order of `count` members by name (equal names keep their order), as indexes: by
// insertion (an object's members rarely number more than a dozen; at most kMaxSortedByIndex).
void RequestDigester::Scanner::SortIndexes(const Member* open, Index count, uint8_t* order) const {
  for (Index next = 0; next < count; ++next) {
    Index at = next;
    for (; at > 0 && MemberLess(open[next], open[order[at - 1]]); --at) order[at] = order[at - 1];
    order[at] = static_cast<uint8_t>(next);
  }
}

// Sorts an out-of-order object's open members into placed_, for the second pass. Two are out of
// order only one way; a few more are sorted as indexes, then copied once.
void RequestDigester::Scanner::Place(Object& object, Index open_base) {
  ++reordered_;
  const Index count = open_count_ - open_base;
  if (d_.placed_.size() < placed_count_ + count) {
    d_.placed_.resize(std::max<size_t>(placed_count_ + count, 2 * d_.placed_.size()));
  }
  const Member* open = open_.data() + open_base;
  Member* placed = d_.placed_.data() + placed_count_;
  if (count == 2) {
    placed[0] = open[1];
    placed[1] = open[0];
  } else if (count <= kMaxSortedByIndex) {
    uint8_t order[kMaxSortedByIndex];
    SortIndexes(open, count, order);
    for (Index i = 0; i < count; ++i) placed[i] = open[order[i]];
  } else {
    std::copy_n(open, count, placed);
    std::sort(placed, placed + count,
              [this](const Member& a, const Member& b) { return MemberLess(a, b); });
  }
  object.placed_begin = placed_count_;
  object.placed_end = placed_count_ + count;
  placed_count_ += count;
}

// The text with every object's members in order, in sorted_.
std::string_view RequestDigester::Scanner::Sorted(size_t size) {
  if (d_.sorted_.size() < kPage + size + kSlack) d_.sorted_.resize(kPage + size + kSlack);
  char* const sorted = d_.sorted_.data() + Skew(d_.sorted_.data(), base_);
  char* end = Emit(0, static_cast<Index>(size), 0, sorted);
  return {sorted, static_cast<size_t>(end - sorted)};
}

// Copies text [from, to) to `out`, the out-of-order objects in it (the records from `index` on
// that begin before `to`) with their members in order. Returns the end. A block copy's bytes
// past its end are overwritten by the next copy, or land in sorted_'s room.
char* RequestDigester::Scanner::Emit(Index from, Index to, Index index, char* out) const {
  const Object* objects = objects_.data();
  while (index < object_count_ && objects[index].begin < to) {
    const Object& object = objects[index];
    if (object.subtree_in_order) {  // copied as it is, with every object in it
      index = object.subtree_end;
      continue;
    }
    if (object.in_order) {  // copied as it is; the objects in it come next
      ++index;
      continue;
    }
    out = CopyBlocks(out, base_ + from, object.begin + 1 - from);
    for (Index i = object.placed_begin; i < object.placed_end; ++i) {
      if (i != object.placed_begin) *out++ = ',';
      const Member& member = d_.placed_[i];
      out = member.reordered ? Emit(member.begin, member.end, member.first_object, out)
                             : CopyBlocks(out, base_ + member.begin, member.end - member.begin);
    }
    *out++ = '}';
    from = object.end;
    index = object.subtree_end;
  }
  return CopyBlocks(out, base_ + from, to - from);
}

// A string, from its opening quote: runs of plain bytes (no quote, backslash, control or
// non-ASCII byte) are copied 16 at a time, and the escapes whose canonical form is themselves
// as they are; the rest is StringSpecial's.
bool RequestDigester::Scanner::String(const char*& p, char*& o) {
  return ShortString(p, o) || LongString(p, o);
}

// A string that ShortString left, from its opening quote.
bool RequestDigester::Scanner::LongString(const char*& p, char*& o) {
  ++p;
  *o++ = '"';
  for (;;) {
    if (CopyPlainBlocks(p, o)) return true;
    if (p != end_) {
      if (*p == '"') {
        ++p;
        *o++ = '"';
        return true;
      }
      if (*p == '\\' && end_ - p >= 2 && IsVerbatimEscape(p[1])) {
        o[0] = '\\';
        o[1] = p[1];
        o += 2;
        p += 2;
        continue;
      }
    }
    const Cursor next = StringSpecial({p, o});
    if (next.p == nullptr) return false;
    p = next.p;
    o = next.o;
  }
}

// A string that ends within the look-ahead window with no escape or non-ASCII byte: found from
// the window's bits, and copied 16 bytes at a time. Finding a string's end from the block at
// hand instead (load, compare, mask, count) put all that latency between one token and the
// next. False leaves the string to String().
bool RequestDigester::Scanner::ShortString(const char*& p, char*& o) {
#if defined(__SSE2__)
  if (static_cast<size_t>(p + 1 - window_) > kLookAheadRefresh) LookAhead(p);
  const size_t shift = static_cast<size_t>(p + 1 - window_);
  const uint64_t stops = window_stops_ >> shift;
  if (stops == 0) return false;
  const unsigned plain = static_cast<unsigned>(__builtin_ctzll(stops));
  if (p[1 + plain] != '"') return false;  // an escape or a byte to check first
  const size_t length = plain + 2;        // with the quotes
  for (size_t i = 0; i < length; i += kBlock) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
  }
  p += length;
  o += length;
  return true;
#else
  return false;
#endif
}

// Loads the window at `p`, if the body has 128 bytes from there (the copies from it read up to
// 120); else leaves it empty: no bits, strings go the long way.
void RequestDigester::Scanner::LookAhead(const char* p) {
  window_ = p;
  window_stops_ = 0;
#if defined(__SSE2__)
  if (readable_end_ - p < static_cast<std::ptrdiff_t>(2 * kLookAhead)) return;
  for (size_t i = 0; i < kLookAhead; i += kBlock) {
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i stops =
        _mm_or_si128(_mm_cmpeq_epi8(block, _mm_set1_epi8('"')), SpecialBytes(block));
    window_stops_ |= static_cast<uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(stops))) << i;
  }
#endif
}

// Copies 16-byte blocks while they hold only plain bytes, then the plain bytes of the block
// that does not, and its first byte if that is the closing quote: then returns true. The store
// may write past those: the invariant's room covers it, and the next write overwrites them.
bool RequestDigester::Scanner::CopyPlainBlocks(const char*& p, char*& o) const {
#if defined(__SSE2__)
  // readable_end_ (a local: it would be reloaded after every store): a block past end_ is in the
  // padding, whose zero bytes stop the copy there.
  const char* const end = readable_end_;
  while (end - p >= static_cast<std::ptrdiff_t>(kBlock)) {
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o), block);
    const __m128i quote_bytes = _mm_cmpeq_epi8(block, _mm_set1_epi8('"'));
    const unsigned special =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(quote_bytes, SpecialBytes(block))));
    if (special != 0) {
      const unsigned quotes = static_cast<unsigned>(_mm_movemask_epi8(quote_bytes));
      const unsigned plain = static_cast<unsigned>(__builtin_ctz(special));
      const unsigned closed = (quotes >> plain) & 1;
      p += plain + closed;
      o += plain + closed;
      return closed != 0;
    }
    p += kBlock;
    o += kBlock;
  }
#endif
  return false;
}

// Inside a string, at a byte the fast path left: the body's end, an escape to decode, a UTF-8
// sequence to validate, a control character, or (within 16 bytes of the body's end) a plain
// byte.
Cursor RequestDigester::Scanner::StringSpecial(Cursor at) {
  if (at.p == end_) return Fail(at.p, "unterminated string");
  const auto c = static_cast<unsigned char>(*at.p);
  if (c == '\\') {
    if (end_ - at.p < 2) return Fail(at.p, "unterminated string");
    if (at.p[1] == '/') {
      *at.o++ = '/';
      return {at.p + 2, at.o};
    }
    if (at.p[1] != 'u') return Fail(at.p, "invalid escape");
    return UnicodeEscape({at.p + 2, at.o});
  }
  if (c >= 0x80) return Utf8Sequence(at);
  if (c < 0x20) return Fail(at.p, "control character in a string");
  *at.o++ = static_cast<char>(c);
  return {at.p + 1, at.o};
}

// "\uXXXX" after its "\u": a code point, or a surrogate pair's two escapes.
Cursor RequestDigester::Scanner::UnicodeEscape(Cursor at) {
  auto hex4 = [&](const char* p) -> int32_t {
    if (end_ - p < 4) return -1;
    int32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const int digit = HexValue(p[i]);
      if (digit < 0) return -1;
      value = value * 16 + digit;
    }
    return value;
  };
  const int32_t unit = hex4(at.p);
  if (unit < 0) return Fail(at.p, "invalid \\u escape");
  if (unit < 0xd800 || unit > 0xdfff) {
    return {at.p + 4, WriteCodePoint(at.o, static_cast<uint32_t>(unit))};
  }
  if (unit > 0xdbff) return Fail(at.p, "lone low surrogate in a \\u escape");
  const char* low_at = at.p + 4;
  if (end_ - low_at < 2 || low_at[0] != '\\' || low_at[1] != 'u') {
    return Fail(at.p, "lone high surrogate in a \\u escape");
  }
  const int32_t low = hex4(low_at + 2);
  if (low < 0xdc00 || low > 0xdfff) return Fail(at.p, "lone high surrogate in a \\u escape");
  const uint32_t code = 0x10000 + ((static_cast<uint32_t>(unit) - 0xd800) << 10) +
                        (static_cast<uint32_t>(low) - 0xdc00);
  return {low_at + 6, WriteCodePoint(at.o, code)};
}

// One UTF-8 sequence starting with a byte >= 0x80, validated (Unicode's table 3-7: no overlong
// forms, no surrogates, nothing above U+10FFFF) and copied as it is.
Cursor RequestDigester::Scanner::Utf8Sequence(Cursor at) {
  const size_t length = digest_text::Utf8Length(at.p, static_cast<size_t>(end_ - at.p));
  if (length == 0) return Fail(at.p, "invalid UTF-8 in a string");
  std::memcpy(at.o, at.p, length);
  return {at.p + length, at.o + length};
}

// A string, literal or number.
bool RequestDigester::Scanner::Scalar(const char*& p, char*& o, char first) {
  if (p == end_) return Fail(p, "unexpected end of the body").p;
  switch (first) {
    case '"':
      return String(p, o);
    case 't':
      return Literal(p, o, "true");
    case 'f':
      return Literal(p, o, "false");
    case 'n':
      return Literal(p, o, "null");
    default:
      if (first != '-' && !IsDigit(first)) return Fail(p, "unexpected character").p;
      if (Integer(p, o)) return true;
      const Cursor next = Number({p, o});
      if (next.p == nullptr) return false;
      p = next.p;
      o = next.o;
      return true;
  }
}

template <size_t N>
bool RequestDigester::Scanner::Literal(const char*& p, char*& o, const char (&word)[N]) {
  constexpr size_t kLength = N - 1;
  if (static_cast<size_t>(end_ - p) < kLength || std::memcmp(p, word, kLength) != 0) {
    return Fail(p, "invalid literal").p;
  }
  std::memcpy(o, word, kLength);
  o += kLength;
  p += kLength;
  return true;
}

// The common number: an integer (no fraction or exponent; not 0 or -0), copied as it is but for
// its trailing zeros, which become the power of ten ("20" is "2e1", as Number() would write it).
// False leaves the cursor for Number().
bool RequestDigester::Scanner::Integer(const char*& p, char*& o) {
  const char* q = p + (*p == '-');
  if (q == end_ || *q < '1' || *q > '9') return false;
  while (q != end_ && IsDigit(*q)) ++q;
  if (q != end_ && (*q == '.' || *q == 'e' || *q == 'E')) return false;
  const char* significant_end = q;
  while (significant_end[-1] == '0') --significant_end;  // stops at the first digit, not 0
  const size_t length = static_cast<size_t>(significant_end - p);
  std::memcpy(o, p, length);
  o += length;
  if (significant_end != q) {
    *o++ = 'e';
    o = std::to_chars(o, o + 24, q - significant_end).ptr;
    o = Reserve(q, o);  // "20" to "2e1": one byte more than it read
  }
  p = q;
  return true;
}

// Any number: its significant digits (integer and fraction digits as one sequence, without
// leading and trailing zeros) and the power of ten after them; zero is "0" whatever its sign.
Cursor RequestDigester::Scanner::Number(Cursor at) {
  const char* p = at.p;
  const bool negative = *p == '-';
  p += negative;
  auto digits = [&] {
    const char* start = p;
    while (p != end_ && IsDigit(*p)) ++p;
    return std::string_view(start, static_cast<size_t>(p - start));
  };
  if (p == end_ || !IsDigit(*p)) return Fail(p, "invalid number");
  const std::string_view integer = *p == '0' ? std::string_view(p++, 1) : digits();
  std::string_view fraction;
  if (p != end_ && *p == '.') {
    ++p;
    fraction = digits();
    if (fraction.empty()) return Fail(p, "invalid number");
  }
  int64_t exponent = 0;
  if (p != end_ && (*p == 'e' || *p == 'E')) {
    ++p;
    const bool negative_exponent = p != end_ && *p == '-';
    if (p != end_ && (*p == '+' || *p == '-')) ++p;
    if (p == end_ || !IsDigit(*p)) return Fail(p, "invalid number");
    while (p != end_ && *p == '0') ++p;
    const std::string_view significant = digits();
    if (significant.size() > kMaxExponentDigits) return Fail(p, "number exponent out of range");
    for (char digit : significant) exponent = exponent * 10 + (digit - '0');
    if (negative_exponent) exponent = -exponent;
  }
  const size_t total = integer.size() + fraction.size();
  auto digit = [&](size_t i) {
    return i < integer.size() ? integer[i] : fraction[i - integer.size()];
  };
  size_t first = 0;
  while (first < total && digit(first) == '0') ++first;
  char* o = at.o;
  if (first == total) {
    *o++ = '0';
  } else {
    size_t last = total;
    while (digit(last - 1) == '0') --last;
    if (negative) *o++ = '-';
    for (size_t i = first; i < last; ++i) *o++ = digit(i);
    exponent += static_cast<int64_t>(total - last) - static_cast<int64_t>(fraction.size());
    if (exponent != 0) {
      *o++ = 'e';
      o = std::to_chars(o, o + 24, exponent).ptr;
    }
  }
  return {p, Reserve(p, o)};  // a number may write more than it read
}

RequestDigester::RequestDigester(uint64_t seed) : seed_(seed) {}
RequestDigester::RequestDigester(RequestDigester&&) noexcept = default;
RequestDigester& RequestDigester::operator=(RequestDigester&&) noexcept = default;
RequestDigester::~RequestDigester() = default;

Result<Digest128> RequestDigester::Of(std::string_view body,
                                      std::span<const std::string_view> excluded) {
  canonical_ = {};
  if (body.size() > kMaxBody) {
    return Error{ErrorCode::kPayloadTooLarge, "request body too large to digest", ""};
  }
  took_small_path_ = false;
  size_t readable = 0;
  if (body.size() < kPadBelow) {
    if (padded_.size() < body.size() + kPadding) padded_.resize(kPadBelow + kPadding);
    char* const padding = padded_.data() + body.size();
    std::memcpy(padded_.data(), body.data(), body.size());
    body = std::string_view(padded_.data(), body.size());
    readable = kPadding;
    // The small path needs fewer zero bytes than the general one: a fixed-size memset, inlined.
    static_assert(kPadding > small_digest::kPadding && small_digest::kMaxBody < kPadBelow);
    std::memset(padding, 0, small_digest::kPadding);
    if (body.size() <= small_digest::kMaxBody && small_path_) {
      if (small_.empty()) small_.resize(small_digest::kScratchBytes);
      const size_t size = small_digest::Canonical(body, excluded, small_.data());
      if (size != 0) {
        took_small_path_ = true;
        canonical_ = std::string_view(small_.data(), size);
        return small_digest::Hash(canonical_, seed_);
      }
    }
    std::memset(padding + small_digest::kPadding, 0, kPadding - small_digest::kPadding);
  }
  Scanner scanner(*this, body, readable, excluded);
  if (!scanner.Run()) {
    return Error{ErrorCode::kInvalidRequest,
                 std::string("request body is not valid JSON: ") + scanner.error() + " at byte " +
                     std::to_string(scanner.error_offset()),
                 ""};
  }
  canonical_ = scanner.canonical();
  const XXH128_hash_t hash = XXH3_128bits_withSeed(canonical_.data(), canonical_.size(), seed_);
  AfterDispatchedHash();
  XXH128_canonical_t bytes;
  XXH128_canonicalFromHash(&bytes, hash);
  Digest128 digest;
  std::memcpy(digest.data(), bytes.digest, digest.size());
  return digest;
}

}  // namespace turnpike::cache
