// JSON string bodies (the bytes between a string's quotes): checking that one needs no
// unescaping, and decoding one. Used by the chunk scanner and the accumulator's template path, and
// by providers/response_events.h to unescape a stream's strings into a whole answer.
//
// Pure functions over caller-owned memory; thread-safe; no allocation beyond growing `to`.
#pragma once

#include <string>
#include <string_view>

namespace turnpike::stream {

// Whether `bytes` can stand between two quotes as a JSON string that needs no unescaping: valid
// UTF-8 with no quote, backslash or control character (< 0x20).
bool IsUnescapedStringBody(std::string_view bytes);

// Decodes a JSON string body (the bytes between its quotes) onto the end of `to`. False, with
// `to` then holding a partial decode, when it is not a valid body: an unescaped quote or control
// character, a bad escape, an unpaired surrogate escape, invalid UTF-8.
bool AppendDecodedStringBody(std::string_view body, std::string& to);

}  // namespace turnpike::stream
