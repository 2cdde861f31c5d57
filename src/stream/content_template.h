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
// Value type; one per stream; no allocation once its string has grown.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace turnpike::stream {

class ContentTemplate {
 public:
  // The bytes where the template's content stands in `data`, if `data` is the template's bytes
  // around them.
  std::optional<std::string_view> Match(std::string_view data) const {
    if (!valid_ || data.size() < bytes_.size()) return std::nullopt;
    const size_t suffix = bytes_.size() - prefix_;
    if (std::memcmp(data.data(), bytes_.data(), prefix_) != 0 ||
        std::memcmp(data.data() + data.size() - suffix, bytes_.data() + prefix_, suffix) != 0) {
      return std::nullopt;
    }
    return data.substr(prefix_, data.size() - bytes_.size());
  }

  // Takes `data` as the template, `content` being a view into it strictly between two quotes (a
  // string's raw body: not null, not a decoded copy). Otherwise there is no template.
  bool Remember(std::string_view data, std::string_view content) {
    valid_ = false;
    const char* begin = data.data();
    const char* end = data.data() + data.size();
    if (content.data() <= begin || content.data() + content.size() >= end ||
        content.data()[-1] != '"' || content.data()[content.size()] != '"') {
      return false;
    }
    prefix_ = static_cast<size_t>(content.data() - begin);
    bytes_.assign(data.substr(0, prefix_));
    bytes_.append(data.substr(prefix_ + content.size()));
    valid_ = true;
    return true;
  }

  void Forget() { valid_ = false; }

 private:
  std::string bytes_;  // the bytes before the content, then those after it
  size_t prefix_ = 0;  // bytes_[0, prefix_) come before the content
  bool valid_ = false;
};

}  // namespace turnpike::stream
