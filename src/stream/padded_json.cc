#include "stream/padded_json.h"

#include <cstring>

namespace turnpike::stream {

simdjson::simdjson_result<simdjson::ondemand::document> PaddedJsonParser::Iterate(
    std::string_view json) {
  const size_t needed = json.size() + simdjson::SIMDJSON_PADDING;
  if (needed > capacity_) {
    // Grow geometrically so a stream of slowly growing documents reallocates O(log n) times.
    capacity_ = needed > 2 * capacity_ ? needed : 2 * capacity_;
    buffer_ = std::make_unique_for_overwrite<char[]>(capacity_);
  }
  if (!json.empty()) std::memcpy(buffer_.get(), json.data(), json.size());  // data() may be null
  std::memset(buffer_.get() + json.size(), 0, simdjson::SIMDJSON_PADDING);
  return parser_.iterate(buffer_.get(), json.size(), capacity_);
}

}  // namespace turnpike::stream
