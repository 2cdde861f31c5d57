// An on-demand simdjson parser with its own padded input buffer (for stream/ and providers/).
//
// simdjson reads up to SIMDJSON_PADDING bytes past the end of its input, and bytes handed to
// us by the network layer carry no such guarantee, so every document is first copied into a
// buffer owned here and reused across documents (one allocation per growth, none in steady
// state). Owns the parser's buffers; not thread-safe; the document returned by Iterate and every
// view taken from it are valid until the next Iterate.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <memory>
#include <string_view>

namespace turnpike::stream {

class PaddedJsonParser {
 public:
  PaddedJsonParser() = default;
  PaddedJsonParser(const PaddedJsonParser&) = delete;
  PaddedJsonParser& operator=(const PaddedJsonParser&) = delete;

  simdjson::simdjson_result<simdjson::ondemand::document> Iterate(std::string_view json);

  // The copy of the last document iterated: offset of a token = token.data() - data().
  const char* data() const { return buffer_.get(); }

 private:
  simdjson::ondemand::parser parser_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;  // bytes in buffer_, padding included
};

}  // namespace turnpike::stream
