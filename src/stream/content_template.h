// The bytes of the last OpenAI chunk that carried nothing but one choice's content, split around
// that content's string body: the content-only fast path of the chat accumulator and of the
// providers' OpenAI stream decoder.
//
// A stream's chunks are mostly the same bytes with other text (same id, created, model,
// fingerprint). A chunk whose bytes before and after the content equal the template's, with a
// content that is a valid JSON string body, reads exactly as the template did but for the
// content: the caller applies it as such without scanning it again. Checking that the body is
// valid is the caller's (IsUnescapedStringBody, or AppendDecodedStringBody for one with escapes).
//
// Framing: a template may also keep the bytes that frame its chunk on the wire (the chat
// accumulator's: "data: " before, "\n\n" after, an SSE event). MatchAtStart then finds the
// framed chunk at the start of a read, before anything has framed it.
//
// Value type; one per stream; no allocation once its string has grown.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "stream/byte_scan.h"

namespace turnpike::stream {

class ContentTemplate {
 public:
  // The bytes where the template's content stands in `data`, if `data` is the template's bytes
  // around them (without the framing).
  std::optional<std::string_view> Match(std::string_view data) const {
    const size_t size = bytes_.size() - before_ - after_;
    if (!valid_ || data.size() < size) return std::nullopt;
    const size_t prefix = prefix_ - before_;
    const size_t suffix = size - prefix;
    if (std::memcmp(data.data(), bytes_.data() + before_, prefix) != 0 ||
        std::memcmp(data.data() + data.size() - suffix, bytes_.data() + prefix_, suffix) != 0) {
      return std::nullopt;
    }
    return data.substr(prefix, data.size() - size);
  }

  // For a template remembered with its framing, and bytes that may go on after the framed
  // chunk's: when `input` starts with the framed template's bytes around a content, that content
  // and the size of the whole match, framing included. The content ends where a JSON string body
  // would, at its first quote not escaped by a backslash; a control character or a byte that
  // starts no UTF-8 character ends the search (no valid JSON string holds one). Whether the
  // content is a valid string body is still the caller's check, unless `plain`: then it is
  // printable ASCII without a backslash, a valid string body as it stands.
  struct StartMatch {
    std::string_view content;
    size_t size = 0;
    bool plain = true;
  };
  std::optional<StartMatch> MatchAtStart(std::string_view input) const {
    if (!valid_ || before_ + after_ == 0 || input.size() < bytes_.size() ||
        std::memcmp(input.data(), bytes_.data(), prefix_) != 0) {
      return std::nullopt;
    }
    const char* const content = input.data() + prefix_;
    const char* const end = input.data() + input.size();
    const char* p = content;
    bool plain = true;
    for (;;) {
      p = FindStringSpecial(p, end);
      if (p == end) return std::nullopt;
      const auto c = static_cast<unsigned char>(*p);
      if (c == '"') break;
      plain = false;
      if (c == '\\') {
        if (end - p < 2) return std::nullopt;
        p += 2;
      } else if (c < 0x20) {
        return std::nullopt;
      } else {
        const int length = Utf8SequenceLength(p, end);
        if (length == 0) return std::nullopt;
        p += length;
      }
    }
    const size_t suffix = bytes_.size() - prefix_;
    if (static_cast<size_t>(end - p) < suffix ||
        std::memcmp(p, bytes_.data() + prefix_, suffix) != 0) {
      return std::nullopt;
    }
    return StartMatch{std::string_view(content, static_cast<size_t>(p - content)),
                      static_cast<size_t>(p - input.data()) + suffix, plain};
  }

  // Takes `data` as the template, `content` being a view into it strictly between two quotes (a
  // string's raw body: not null, not a decoded copy), and `before` and `after` as its framing
  // (none: MatchAtStart never matches). Otherwise there is no template.
  bool Remember(std::string_view data, std::string_view content, std::string_view before = {},
                std::string_view after = {}) {
    valid_ = false;
    const char* begin = data.data();
    const char* end = data.data() + data.size();
    if (content.data() <= begin || content.data() + content.size() >= end ||
        content.data()[-1] != '"' || content.data()[content.size()] != '"') {
      return false;
    }
    const size_t at = static_cast<size_t>(content.data() - begin);
    const size_t rest = static_cast<size_t>(end - (content.data() + content.size()));
    bytes_.resize(before.size() + at + rest + after.size());
    char* out = bytes_.data();
    out = Put(out, before.data(), before.size());
    out = Put(out, data.data(), at);
    out = Put(out, content.data() + content.size(), rest);
    Put(out, after.data(), after.size());
    before_ = before.size();
    after_ = after.size();
    prefix_ = before_ + at;
    valid_ = true;
    return true;
  }

  void Forget() { valid_ = false; }

 private:
  static char* Put(char* out, const char* from, size_t size) {
    if (size != 0) std::memcpy(out, from, size);
    return out + size;
  }

  std::string bytes_;  // the framing before, the bytes before the content, those after, framing
  size_t prefix_ = 0;  // bytes_[0, prefix_) come before the content, framing included
  size_t before_ = 0;  // the framing's sizes in bytes_
  size_t after_ = 0;
  bool valid_ = false;
};

}  // namespace turnpike::stream
