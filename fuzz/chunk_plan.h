// How a fuzz target splits its input into reads (fuzz/ only): the input's last byte b says that
// the b % 16 bytes before it are chunk sizes (each byte + 1, so 1 to 256); the rest, from the
// front, is the payload. Chunks take those sizes in turn, cycling, until the payload is used up;
// no size bytes means one chunk of the whole payload. A seed that is plain text loses its last
// few bytes to the plan, which only leaves its last event or line incomplete.
//
// Plain value over the caller's bytes; no allocation beyond the size list.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace turnpike::fuzz {

class ChunkPlan {
 public:
  explicit ChunkPlan(std::string_view input) {
    if (input.empty()) return;
    const size_t count =
        std::min<size_t>(static_cast<uint8_t>(input.back()) % 16, input.size() - 1);
    const size_t sizes_at = input.size() - 1 - count;
    for (size_t i = 0; i < count; ++i) {
      sizes_.push_back(static_cast<size_t>(static_cast<uint8_t>(input[sizes_at + i])) + 1);
    }
    payload_ = input.substr(0, sizes_at);
  }

  std::string_view payload() const { return payload_; }

  // The payload's chunks in order, each passed to on_chunk(std::string_view); at least one call
  // (an empty payload is one empty chunk).
  template <typename F>
  void ForEachChunk(F&& on_chunk) const {
    size_t at = 0;
    size_t turn = 0;
    do {
      const size_t n = ChunkSize(turn++, payload_.size() - at);
      on_chunk(payload_.substr(at, n));
      at += n;
    } while (at < payload_.size());
  }

  // The size of chunk number `turn` (0, 1, ...) when `remaining` payload bytes are left.
  size_t ChunkSize(size_t turn, size_t remaining) const {
    if (sizes_.empty()) return remaining;
    return std::min(sizes_[turn % sizes_.size()], remaining);
  }

 private:
  std::string_view payload_;
  std::vector<size_t> sizes_;
};

}  // namespace turnpike::fuzz
