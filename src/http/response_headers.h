// Headers a handler adds to its response, kept as the "Name: value\r\n" lines they are sent
// as: adding one is an append into one buffer (no node per header, no ordered search), and the
// response head copies the block once. The first kInlineBytes live inside the object (the
// governed path's six x-ratelimit-* lines fit), so a typical response allocates nothing here.
// A name is added at most once per response (each handler path adds its headers once); Add
// does not look for an earlier one.
//
// Thread safety: one exchange, one thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace turnpike::http {

class ResponseHeaders {
 public:
  ResponseHeaders() = default;
  ResponseHeaders(const ResponseHeaders&) = delete;
  ResponseHeaders& operator=(const ResponseHeaders&) = delete;

  void Add(std::string_view name, std::string_view value);
  void Add(std::string_view name, int64_t value);
  // Appends already formatted lines ("Name: value\r\n" each), for callers that format many.
  void AddLines(std::string_view lines);

  // The lines added so far, each ending in CRLF.
  std::string_view lines() const {
    return spilled_ ? std::string_view(spill_) : std::string_view(inline_.data(), size_);
  }
  bool empty() const { return lines().empty(); }
  // The value of `name` (ASCII case-insensitive), empty if it was not added.
  std::string_view Find(std::string_view name) const;

  static constexpr size_t kInlineBytes = 448;

 private:
  void Append(std::string_view name, std::string_view value);
  void Append(std::string_view text);
  // Moves the lines to spill_ (once), with room for `more` bytes.
  void Spill(size_t more);

  std::array<char, kInlineBytes> inline_;
  size_t size_ = 0;
  bool spilled_ = false;
  std::string spill_;  // all lines, once they outgrew inline_
};

}  // namespace turnpike::http
