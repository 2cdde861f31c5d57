#include "stream/chunk_scan.h"

#include <cstdint>
#include <cstring>

#include "stream/byte_scan.h"
#include "stream/json_string.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace turnpike::stream {
namespace {

// simdjson's default is 1024; real chunks nest about 8 deep (logprobs a little more). Deeper
// input is left to ParseChunk.
constexpr int kMaxDepth = 64;
// Up to 18 decimal digits always fit an int64; longer literals are left to ParseChunk.
constexpr int kMaxIntDigits = 18;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool AboveSpace(char c) { return static_cast<unsigned char>(c) > ' '; }

// Every function returns false to mean "leave this payload to ParseChunk"; the position is then
// meaningless.
class Scanner {
 public:
  // `plain_from`: the bytes before it are known to be plain (a chunk's lead).
  Scanner(std::string_view json, std::string& unescaped, size_t plain_from = 0)
      : begin_(json.data()),
        p_(json.data()),
        end_(json.data() + json.size()),
        unescaped_(unescaped) {
    plain_ = IsPlain(p_ + plain_from, end_);
  }

  // A whole chunk; with `lead`, also its lead (chunk_scan.h), or none.
  bool Chunk(ParsedChunk& out, ChunkLead* lead);
  // A chunk that starts with `lead`'s bytes, scanned from where they end.
  bool ChunkAfterLead(ParsedChunk& out, const ChunkLead& lead);
  bool BodyUsage(stream::Usage& usage);
  bool Escaped(stream::EscapedChunk& out);
  bool plain() const { return plain_; }

 private:
  // The next byte that is not whitespace ('\0' at the end).
  char Peek() {
    if (p_ < end_ && AboveSpace(*p_)) return *p_;
    while (p_ < end_ && IsSpace(*p_)) ++p_;
    return p_ < end_ ? *p_ : '\0';
  }
  // A payload with no backslash, no byte below 0x20 (so no whitespace but spaces) and no byte
  // above 0x7F is "plain": a string in it ends at the next quote and needs no checking.
  static bool IsPlain(const char* begin, const char* end);
  bool Literal(std::string_view word);
  bool SkipUtf8();
  bool SkipEscape();
  // A string whose opening quote is at p_: `raw` is its bytes between the quotes.
  bool RawString(std::string_view& raw, bool& escaped) {
    escaped = false;
    if (!plain_) return CheckedString(raw, escaped);
    const char* begin = p_ + 1;
    const char* close = FindEither(begin, end_, '"', '"');
    if (close == end_) return false;
    raw = std::string_view(begin, static_cast<size_t>(close - begin));
    p_ = close + 1;
    return true;
  }
  bool CheckedString(std::string_view& raw, bool& escaped);
  bool Unescape(std::string_view raw, std::string_view& out);
  bool Number();
  bool SkipValue(int depth);
  bool OptionalString(std::string_view& out);
  // A string's escaped bytes, checked as ReadEscaped checks them (escapes decoded into
  // unescaped_, then dropped); null reads as empty.
  bool EscapedString(std::string_view& out);
  bool OptionalInt(int64_t& out);
  // Object members (null counts as empty): on_member(raw key) must read the value.
  template <typename F>
  bool Members(F&& on_member);
  // Members from the first key on (the '{' read, the object not empty).
  template <typename F>
  bool MembersFrom(F&& on_member);
  // The rest of an object after one of its members' values (a ',' and more members, or '}').
  template <typename F>
  bool MembersAfterValue(F&& on_member);
  // Array elements (null counts as empty): on_element(position) must read the element.
  template <typename F>
  bool Elements(F&& on_element);
  // The elements of an array whose '[' has been read.
  template <typename F>
  bool ElementsAfterOpen(F&& on_element);

  bool Usage(stream::Usage& usage);
  bool ToolCall(ToolCallDelta& call);
  bool Delta(size_t slot, ParsedChunk& out);
  bool Choice(int64_t position, ParsedChunk& out);
  bool ChunkMember(std::string_view key, ParsedChunk& out);
  bool Error(ParsedChunk& out);
  bool EscapedChoice(int64_t position, stream::EscapedChunk& out);
  bool EscapedTool(int64_t position, stream::EscapedChunk& out);

  const char* const begin_;
  const char* p_;
  const char* const end_;
  std::string& unescaped_;
  bool plain_ = false;
  // Recording a lead: where it ends (0: none), and whether the members so far allow one.
  size_t lead_size_ = 0;
  bool lead_open_ = false;
  std::string_view lead_id_, lead_model_;  // id and model as the lead ends
};

bool Scanner::IsPlain(const char* begin, const char* end) {
  const char* p = begin;
#if defined(__SSE2__)
  constexpr long kLanes = 16;
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  __m128i special = _mm_setzero_si128();
  const auto check = [&](const char* at) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    special = _mm_or_si128(
        special, _mm_or_si128(_mm_cmpeq_epi8(bytes, backslash), _mm_cmplt_epi8(bytes, space)));
  };
  for (; end - p >= kLanes; p += kLanes) check(p);
  // The last few bytes as the last 16 (some checked twice), when there are 16.
  if (p != end && end - begin >= kLanes) {
    check(end - kLanes);
    p = end;
  }
  if (_mm_movemask_epi8(special) != 0) return false;
#endif
  for (; p < end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '\\' || c < 0x20 || c >= 0x80) return false;
  }
  return true;
}

bool Scanner::Literal(std::string_view word) {
  if (static_cast<size_t>(end_ - p_) < word.size() ||
      std::memcmp(p_, word.data(), word.size()) != 0) {
    return false;
  }
  p_ += word.size();
  return true;
}

bool Scanner::SkipUtf8() {
  const int length = Utf8SequenceLength(p_, end_);
  p_ += length;
  return length != 0;
}

// An escape at p_ (the backslash): grammar only; Unescape judges surrogates.
bool Scanner::SkipEscape() {
  if (end_ - p_ < 2) return false;
  switch (p_[1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      p_ += 2;
      return true;
    case 'u':
      if (end_ - p_ < 6 || Hex4(p_ + 2) < 0) return false;
      p_ += 6;
      return true;
    default:
      return false;
  }
}

bool Scanner::CheckedString(std::string_view& raw, bool& escaped) {
  const char* begin = ++p_;
  for (;;) {
    p_ = FindStringSpecial(p_, end_);
    if (p_ == end_) return false;
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      raw = std::string_view(begin, static_cast<size_t>(p_ - begin));
      ++p_;
      return true;
    }
    if (c == '\\') {
      escaped = true;
      if (!SkipEscape()) return false;
    } else if (c < 0x20 || !SkipUtf8()) {
      return false;
    }
  }
}

// Decodes an escaped string's raw bytes (already checked by RawString) into unescaped_.
bool Scanner::Unescape(std::string_view raw, std::string_view& out) {
  // Nothing decodes longer than its escaped form, so reserving the whole payload once keeps
  // every earlier view into unescaped_ valid.
  const size_t payload = static_cast<size_t>(end_ - raw.data());
  if (unescaped_.capacity() < unescaped_.size() + payload) {
    if (!unescaped_.empty()) return false;  // cannot happen: reserved at the first escape
    unescaped_.reserve(payload);
  }
  const size_t start = unescaped_.size();
  if (!AppendDecodedStringBody(raw, unescaped_)) return false;
  out = std::string_view(unescaped_.data() + start, unescaped_.size() - start);
  return true;
}

// A number at p_, by the JSON grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool Scanner::Number() {
  if (p_ < end_ && *p_ == '-') ++p_;
  if (p_ == end_ || !IsDigit(*p_)) return false;
  if (*p_ == '0') {
    ++p_;
  } else {
    while (p_ < end_ && IsDigit(*p_)) ++p_;
  }
  if (p_ < end_ && *p_ == '.') {
    ++p_;
    if (p_ == end_ || !IsDigit(*p_)) return false;
    while (p_ < end_ && IsDigit(*p_)) ++p_;
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ == end_ || !IsDigit(*p_)) return false;
    while (p_ < end_ && IsDigit(*p_)) ++p_;
  }
  return true;
}

bool Scanner::SkipValue(int depth) {
  if (depth > kMaxDepth) return false;
  switch (Peek()) {
    case '"': {
      std::string_view raw;
      bool escaped;
      return RawString(raw, escaped);
    }
    case '{':
      return Members([&](std::string_view) { return SkipValue(depth + 1); });
    case '[':
      return Elements([&](int64_t) { return SkipValue(depth + 1); });
    case 't':
      return Literal("true");
    case 'f':
      return Literal("false");
    case 'n':
      return Literal("null");
    default:
      return Number();
  }
}

template <typename F>
bool Scanner::Members(F&& on_member) {
  const char first = Peek();
  if (first == 'n') return Literal("null");
  if (first != '{') return false;
  ++p_;
  if (Peek() == '}') {
    ++p_;
    return true;
  }
  return MembersFrom(on_member);
}

template <typename F>
bool Scanner::MembersFrom(F&& on_member) {
  for (;;) {
    if (Peek() != '"') return false;
    std::string_view key;
    bool escaped;
    // Keys are compared raw, as ParseChunk does: an escaped key matches no known name.
    if (!RawString(key, escaped) || Peek() != ':') return false;
    ++p_;
    if (!on_member(key)) return false;
    const char next = Peek();
    if (next == '}') {
      ++p_;
      return true;
    }
    if (next != ',') return false;
    ++p_;
  }
}

template <typename F>
bool Scanner::MembersAfterValue(F&& on_member) {
  const char next = Peek();
  if (next == '}') {
    ++p_;
    return true;
  }
  if (next != ',') return false;
  ++p_;
  return MembersFrom(on_member);
}

template <typename F>
bool Scanner::Elements(F&& on_element) {
  const char first = Peek();
  if (first == 'n') return Literal("null");
  if (first != '[') return false;
  ++p_;
  return ElementsAfterOpen(on_element);
}

template <typename F>
bool Scanner::ElementsAfterOpen(F&& on_element) {
  if (Peek() == ']') {
    ++p_;
    return true;
  }
  for (int64_t position = 0;; ++position) {
    if (!on_element(position)) return false;
    const char next = Peek();
    if (next == ']') {
      ++p_;
      return true;
    }
    if (next != ',') return false;
    ++p_;
  }
}

bool Scanner::OptionalString(std::string_view& out) {
  const char first = Peek();
  if (first == 'n') return Literal("null");
  if (first != '"') return false;
  std::string_view raw;
  bool escaped;
  if (!RawString(raw, escaped)) return false;
  if (!escaped) {
    out = raw;
    return true;
  }
  return Unescape(raw, out);
}

bool Scanner::EscapedString(std::string_view& out) {
  const char first = Peek();
  if (first == 'n') {
    out = {};
    return Literal("null");
  }
  if (first != '"') return false;
  bool escaped;
  if (!RawString(out, escaped)) return false;
  if (!escaped) return true;
  unescaped_.clear();
  std::string_view decoded;
  return Unescape(out, decoded);
}

bool Scanner::OptionalInt(int64_t& out) {
  const char first = Peek();
  if (first == 'n') return Literal("null");
  const bool negative = first == '-';
  if (negative) ++p_;
  if (p_ == end_ || !IsDigit(*p_)) return false;
  if (*p_ == '0' && p_ + 1 < end_ && IsDigit(p_[1])) return false;  // a leading zero
  int64_t value = 0;
  int digits = 0;
  for (; p_ < end_ && IsDigit(*p_); ++p_) {
    if (++digits > kMaxIntDigits) return false;
    value = value * 10 + (*p_ - '0');
  }
  if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;  // not an integer
  out = negative ? -value : value;
  return true;
}

bool Scanner::Usage(stream::Usage& usage) {
  return Members([&](std::string_view key) {
    if (key == "prompt_tokens") return OptionalInt(usage.prompt_tokens);
    if (key == "completion_tokens") return OptionalInt(usage.completion_tokens);
    if (key == "total_tokens") return OptionalInt(usage.total_tokens);
    if (key == "completion_tokens_details") {
      return Members([&](std::string_view detail) {
        return detail == "reasoning_tokens" ? OptionalInt(usage.reasoning_tokens) : SkipValue(4);
      });
    }
    if (key != "prompt_tokens_details") return SkipValue(3);
    return Members([&](std::string_view detail) {
      return detail == "cached_tokens" ? OptionalInt(usage.cached_tokens) : SkipValue(4);
    });
  });
}

bool Scanner::ToolCall(ToolCallDelta& call) {
  return Members([&](std::string_view key) {
    if (key == "index") return OptionalInt(call.index);
    if (key == "id") return OptionalString(call.id);
    if (key == "type") return OptionalString(call.type);
    if (key != "function") return SkipValue(7);
    return Members([&](std::string_view field) {
      if (field == "name") return OptionalString(call.name);
      if (field == "arguments") return OptionalString(call.arguments);
      return SkipValue(8);
    });
  });
}

bool Scanner::Delta(size_t slot, ParsedChunk& out) {
  return Members([&](std::string_view key) {
    ChoiceDelta& choice = out.choices[slot];  // re-fetched: tool calls do not touch `choices`
    if (key == "content") return OptionalString(choice.content);
    if (key == "role") return OptionalString(choice.role);
    if (key != "tool_calls") return SkipValue(5);
    return Elements([&](int64_t position) {
      ToolCallDelta& call = out.tool_calls.emplace_back();
      call.choice_slot = slot;
      call.index = position;
      return ToolCall(call);
    });
  });
}

bool Scanner::Choice(int64_t position, ParsedChunk& out) {
  const size_t slot = out.choices.size();
  out.choices.emplace_back().index = position;
  return Members([&](std::string_view key) {
    if (key == "index") return OptionalInt(out.choices[slot].index);
    if (key == "delta") return Delta(slot, out);
    if (key == "finish_reason") return OptionalString(out.choices[slot].finish_reason);
    return SkipValue(4);
  });
}

bool Scanner::Error(ParsedChunk& out) {
  out.is_error = true;
  if (Peek() == '"') return OptionalString(out.error_message);
  return Members([&](std::string_view key) {
    return key == "message" ? OptionalString(out.error_message) : SkipValue(3);
  });
}

bool Scanner::ChunkMember(std::string_view key, ParsedChunk& out) {
  if (key == "choices") {
    // A lead ends at the first choices' '[', when nothing before it had to be read but id and
    // model (views into the input: the chunk is plain).
    if (lead_open_ && plain_ && Peek() == '[') {
      lead_size_ = static_cast<size_t>(p_ + 1 - begin_);
      lead_id_ = out.id;
      lead_model_ = out.model;
    }
    lead_open_ = false;
    return Elements([&](int64_t position) { return Choice(position, out); });
  }
  if (key == "usage") {
    lead_open_ = false;
    out.has_usage = Peek() == '{';
    return Usage(out.usage);
  }
  if (key == "id") return OptionalString(out.id);
  if (key == "model") return OptionalString(out.model);
  if (key == "error") {
    lead_open_ = false;
    return Error(out);
  }
  return SkipValue(2);
}

bool Scanner::Chunk(ParsedChunk& out, ChunkLead* lead) {
  if (Peek() != '{') return false;
  lead_open_ = lead != nullptr;
  const bool members = Members([&](std::string_view key) { return ChunkMember(key, out); });
  if (!members || Peek() != '\0' || p_ != end_) return false;
  if (lead != nullptr) lead->Learn(std::string_view(begin_, lead_size_), lead_id_, lead_model_);
  return true;
}

bool Scanner::ChunkAfterLead(ParsedChunk& out, const ChunkLead& lead) {
  // As a whole scan stands after the lead: id and model read, inside "choices" at its first
  // element, nothing else read.
  out.id = lead.Id(begin_);
  out.model = lead.Model(begin_);
  p_ = begin_ + lead.size();
  const auto member = [&](std::string_view key) { return ChunkMember(key, out); };
  return ElementsAfterOpen([&](int64_t position) { return Choice(position, out); }) &&
         MembersAfterValue(member) && Peek() == '\0' && p_ == end_;
}

bool Scanner::EscapedTool(int64_t position, stream::EscapedChunk& out) {
  EscapedToolDelta& tool = out.tools.emplace_back();
  tool.index = position;
  return Members([&](std::string_view key) {
    if (key == "index") return OptionalInt(tool.index);
    if (key == "id") return EscapedString(tool.id);
    if (key != "function") return SkipValue(7);
    return Members([&](std::string_view field) {
      if (field == "name") return EscapedString(tool.name);
      if (field == "arguments") return EscapedString(tool.arguments);
      return SkipValue(8);
    });
  });
}

bool Scanner::EscapedChoice(int64_t position, stream::EscapedChunk& out) {
  int64_t index = position;  // one per choice, as the decoder's read keeps it
  return Members([&](std::string_view key) {
    if (key == "index") {
      if (!OptionalInt(index)) return false;
      if (index != 0) out.other_choice = true;
      return true;
    }
    if (key == "finish_reason") return EscapedString(out.finish_reason);
    if (key != "delta") return SkipValue(4);
    return Members([&](std::string_view field) {
      if (field == "content") return EscapedString(out.content);
      if (field == "refusal") return EscapedString(out.refusal);
      if (field == "reasoning_content" || field == "reasoning") {
        return EscapedString(out.reasoning);
      }
      if (field != "tool_calls") return SkipValue(5);
      return Elements([&](int64_t at) { return EscapedTool(at, out); });
    });
  });
}

bool Scanner::Escaped(stream::EscapedChunk& out) {
  if (Peek() != '{') return false;
  const bool members = Members([&](std::string_view key) {
    if (key == "choices") {
      return Elements([&](int64_t position) { return EscapedChoice(position, out); });
    }
    if (key == "usage") {
      out.has_usage = Peek() == '{';
      return Usage(out.usage);
    }
    if (key == "id") return EscapedString(out.id);
    if (key == "model") return EscapedString(out.model);
    if (key == "error") return false;  // an upstream error: the decoder's own read
    return SkipValue(2);
  });
  return members && Peek() == '\0' && p_ == end_;
}

bool Scanner::BodyUsage(stream::Usage& usage) {
  if (Peek() != '{') return false;
  const bool members =
      Members([&](std::string_view key) { return key == "usage" ? Usage(usage) : SkipValue(2); });
  return members && Peek() == '\0' && p_ == end_;
}

}  // namespace

bool ScanBodyUsage(std::string_view json, Usage& usage) {
  std::string unescaped;  // Usage reads no string: never grows
  Scanner scanner(json, unescaped);
  if (!scanner.plain() && json.size() > kScanBodyBytes) return false;
  return scanner.BodyUsage(usage);
}

bool ScanChunk(std::string_view json, ParsedChunk& out, std::string& unescaped) {
  unescaped.clear();
  Scanner scanner(json, unescaped);
  out.plain = scanner.plain();
  return scanner.Chunk(out, nullptr);
}

void ChunkLead::Learn(std::string_view bytes, std::string_view id, std::string_view model) {
  bytes_.assign(bytes);
  // Views into the lead (or empty: absent or null), kept as offsets.
  const auto offset = [&](std::string_view v) {
    return v.empty() ? 0 : static_cast<uint32_t>(v.data() - bytes.data());
  };
  id_at_ = offset(id);
  id_size_ = static_cast<uint32_t>(id.size());
  model_at_ = offset(model);
  model_size_ = static_cast<uint32_t>(model.size());
}

bool ScanChunk(std::string_view json, ParsedChunk& out, std::string& unescaped, ChunkLead& lead) {
  unescaped.clear();
  const size_t lead_size = lead.size();
  if (lead_size != 0 && json.size() > lead_size &&
      std::memcmp(json.data(), lead.bytes().data(), lead_size) == 0) {
    Scanner scanner(json, unescaped, lead_size);
    out.plain = scanner.plain();
    return scanner.ChunkAfterLead(out, lead);
  }
  Scanner scanner(json, unescaped);
  out.plain = scanner.plain();
  if (scanner.Chunk(out, &lead)) return true;
  lead.Forget();
  return false;
}

void EscapedChunk::Clear() {
  id = model = content = refusal = reasoning = finish_reason = {};
  has_usage = other_choice = plain = false;
  usage = Usage{};
  tools.clear();
}

bool ScanEscapedChunk(std::string_view json, EscapedChunk& out, std::string& scratch) {
  Scanner scanner(json, scratch);
  out.plain = scanner.plain();
  return scanner.Escaped(out);
}

}  // namespace turnpike::stream
