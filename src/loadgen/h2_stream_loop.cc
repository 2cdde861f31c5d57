#include "loadgen/h2_stream_loop.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "upstream/call.h"

namespace turnpike::loadgen {
namespace {

constexpr std::string_view kDone = "data: [DONE]";

// Looks for `data:` and `data: [DONE]` in a stream read piece by piece: `tail` keeps the last
// bytes of the previous piece so that a marker split between two pieces is still found.
struct StreamScan {
  void Feed(std::string_view piece) {
    std::string joined = tail;
    joined.append(piece.substr(0, std::min(piece.size(), kDone.size())));
    if (!first_data && (piece.find("data:") != std::string_view::npos ||
                        joined.find("data:") != std::string::npos)) {
      first_data = true;
    }
    if (!done &&
        (piece.find(kDone) != std::string_view::npos || joined.find(kDone) != std::string::npos)) {
      done = true;
    }
    const size_t keep = std::min(piece.size(), kDone.size() - 1);
    tail.assign(piece.substr(piece.size() - keep));
  }
  std::string tail;
  bool first_data = false;
  bool done = false;
};

}  // namespace

boost::asio::awaitable<void> RunHttp2Slot(Worker& worker, upstream::Pool& pool) {
  const Plan& plan = worker.plan();
  const Http2Plan& h2 = *plan.http2;
  upstream::CallOptions options;
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(plan.timeout);
  options.connect_timeout = timeout;
  options.first_byte_timeout = timeout;
  options.idle_timeout = timeout;
  while (true) {
    const Permit permit = worker.NextRequest();
    if (permit == Permit::kStop) break;
    const bool streaming = worker.NextIsStream();
    const size_t variant = worker.NextVariant();
    upstream::OutgoingRequest request;
    request.target = h2.path;
    request.body = streaming ? h2.stream_bodies[variant] : h2.plain_bodies[variant];
    request.content_type = h2.content_type;
    request.extra_headers = h2.extra_headers;
    Completion c;
    c.measured = permit == Permit::kMeasured;
    c.streaming = streaming;
    c.sent_at = Clock::now();
    upstream::Call call(pool, h2.origin, options);
    const Status started = co_await call.Start(request);
    StreamScan scan;
    bool complete = false;
    if (started.ok()) {
      c.status = static_cast<int>(call.status());
      for (;;) {
        Result<std::string_view> piece = co_await call.ReadSome();
        if (!piece.ok()) break;
        const std::string_view bytes = piece.value();
        if (bytes.empty()) {
          complete = true;
          break;
        }
        c.body_bytes += bytes.size();
        if (streaming) {
          const bool had_data = scan.first_data;
          scan.Feed(bytes);
          if (!had_data && scan.first_data) c.first_data_at = Clock::now();
        }
      }
    }
    c.done_at = Clock::now();
    if (worker.stopping()) break;
    if (!started.ok()) {
      c.outcome = started.error().code == ErrorCode::kUpstreamTimeout ? Outcome::kTimeout
                                                                      : Outcome::kReadError;
    } else if (c.status < 200 || c.status >= 300) {
      c.outcome = complete ? Outcome::kHttpStatus : Outcome::kReadError;
    } else if (!complete) {
      c.outcome = streaming ? Outcome::kStreamTruncated : Outcome::kReadError;
    } else if (streaming && !scan.done) {
      c.outcome = Outcome::kStreamMissingDone;
    } else {
      c.outcome = Outcome::kOk;
    }
    worker.Record(c);
  }
  worker.ConnectionExited();
}

}  // namespace turnpike::loadgen
