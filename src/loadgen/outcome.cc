#include "loadgen/outcome.h"

namespace turnpike::loadgen {
namespace {

constexpr int kFirstSuccess = 200;
constexpr int kFirstNonSuccess = 300;

bool IsSuccess(int status) { return status >= kFirstSuccess && status < kFirstNonSuccess; }

}  // namespace

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kConnectError:
      return "connect_error";
    case Outcome::kWriteError:
      return "write_error";
    case Outcome::kReadError:
      return "read_error";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kHttpStatus:
      return "http_status";
    case Outcome::kStreamMissingDone:
      return "stream_missing_done";
    case Outcome::kStreamTruncated:
      return "stream_truncated";
    case Outcome::kBadResponse:
      return "bad_response";
  }
  return "unknown";
}

Outcome ClassifyResponse(const ResponseParser& parser, ParseResult last, bool streaming,
                         StreamEnd end) {
  switch (last) {
    case ParseResult::kBadResponse:
      return Outcome::kBadResponse;
    case ParseResult::kNeedMore:
      // Cut short. A stream that had started successfully was truncated; anything else
      // (nothing read, headers cut, a plain body cut) is a read error.
      if (streaming && parser.headers_done() && IsSuccess(parser.status())) {
        return Outcome::kStreamTruncated;
      }
      return Outcome::kReadError;
    case ParseResult::kComplete:
      break;
  }
  if (!IsSuccess(parser.status())) return Outcome::kHttpStatus;
  const bool ended = end == StreamEnd::kDoneMarker ? parser.saw_done() : parser.saw_completed();
  if (streaming && !ended) return Outcome::kStreamMissingDone;
  return Outcome::kOk;
}

}  // namespace turnpike::loadgen
