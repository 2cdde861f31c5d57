// RESP: the Redis serialization protocol (https://redis.io/docs/reference/protocol-spec/).
// Commands are encoded as arrays of bulk strings (RESP2, what every server accepts); replies
// are parsed in RESP2 and the RESP3 scalar/aggregate types a server may send after HELLO 3
// (null `_`, boolean `#`, double `,`, map `%` read as a flat array, set `~`, push `>`).
//
// Pure functions, no I/O, safe from any thread. Used only off the request path (the Redis
// client's own thread), so replies are plain owning values.
// Errors: ParseReply answers kIncomplete until a whole reply is buffered, kMalformed for bytes
// that are not RESP (the client then drops the connection); a server error reply (`-ERR ...`)
// is a Reply of type kError, not a parse failure.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace turnpike::redis {

struct Reply {
  enum class Type : uint8_t { kNil, kStatus, kError, kInteger, kString, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;       // kInteger (also RESP3 booleans: 0/1)
  std::string text;          // kStatus, kError, kString (also RESP3 doubles, as text)
  std::vector<Reply> items;  // kArray

  bool is_error() const { return type == Type::kError; }
};

// Appends `*N\r\n$len\r\narg\r\n...` for one command.
void AppendCommand(std::string& out, std::initializer_list<std::string_view> args);
void AppendCommand(std::string& out, const std::vector<std::string>& args);

enum class ParseStatus : uint8_t { kDone, kIncomplete, kMalformed };

// Parses one reply from the front of `in`. kDone: `reply` is set and `consumed` bytes belong
// to it.
ParseStatus ParseReply(std::string_view in, Reply& reply, size_t& consumed);

}  // namespace turnpike::redis
