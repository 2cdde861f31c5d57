// How one request of the load generator ended, and the rule that decides it.
//
// Every request that was sent in the measured window ends in exactly one Outcome: success or
// one failure kind. The connection loop reports I/O failures (connect, write, read, timeout)
// itself; everything decided by what the server sent goes through ClassifyResponse(), which
// the tests drive with canned byte streams.
//
// Threads: pure functions and plain enums.
#pragma once

#include <string_view>

#include "loadgen/response_parser.h"

namespace turnpike::loadgen {

enum class Outcome {
  kOk,                 // 2xx, body fully read (and, for a stream, `data: [DONE]` seen)
  kConnectError,       // TCP connect failed or was refused
  kWriteError,         // the request could not be written
  kReadError,          // the connection failed or closed before a complete response
  kTimeout,            // no complete response within --timeout of sending
  kHttpStatus,         // a complete response with a non-2xx status (counted by code)
  kStreamMissingDone,  // a complete 2xx stream without its end (see StreamEnd)
  kStreamTruncated,    // a 2xx stream whose connection ended before the body did
  kBadResponse,        // bytes that are not an HTTP/1.x response
};
inline constexpr int kOutcomeCount = static_cast<int>(Outcome::kBadResponse) + 1;

// What ends a successful stream: a chat stream's `data: [DONE]`, or a Responses stream's
// `event: response.completed` (an agent turn's; a failed, incomplete or cancelled turn's
// stream ends with another event and is kStreamMissingDone).
enum class StreamEnd { kDoneMarker, kResponseCompleted };

// A short stable name ("connect_error", "stream_missing_done", ...) for reports and JSON.
std::string_view OutcomeName(Outcome outcome);

// Decides the outcome from the parser's state. `last` is the last result Feed()/FeedEof()
// returned; kNeedMore means the connection ended (EOF or read error) before the response did.
// `streaming` says whether the request asked for a stream, `end` what ends it.
Outcome ClassifyResponse(const ResponseParser& parser, ParseResult last, bool streaming,
                         StreamEnd end = StreamEnd::kDoneMarker);

}  // namespace turnpike::loadgen
