// One HTTP exchange with an upstream origin: connect (or reuse a pooled connection), send the
// request, read the response head, then the body piece by piece as it arrives.
//
// Ownership: a Call borrows its worker's Pool and the Origin (both outlive it) and owns the
// connection while it runs. When the body has been read to the end on a keep-alive response,
// the connection goes back to the pool; in every other case (error, cancel, early destruction)
// it is closed. Thread safety: the owning worker's thread only.
//
// Timeouts: connect (incl. TLS handshake), first byte (the response head), and idle between
// body reads. There is no total deadline: a stream may run as long as it keeps talking.
//
// Cancel() may be called at any time (e.g. when the client disconnects): it closes the socket,
// so a pending operation completes at once with an error and nothing more is read.
//
// A Call holds one of its origin's pool slots from Start() until the body is complete or the
// Call is destroyed. At the origin's active cap (upstream.pool.max_active_per_origin) Start()
// first waits for a slot, at most the connect timeout (kUpstreamTimeout after that).
//
// An origin with `http2` is spoken to over HTTP/2 (h2_call.h): the same calls, a stream on a
// shared connection instead of a connection of its own; Cancel() resets the stream.
#pragma once

#include <array>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "net/http_read.h"
#include "upstream/origin.h"
#include "upstream/pool.h"

namespace turnpike::upstream {

struct CallOptions {
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds first_byte_timeout{60'000};
  std::chrono::milliseconds idle_timeout{60'000};
  size_t read_buffer_bytes = 16 * 1024;  // the most one ReadSome() returns
};

struct OutgoingRequest {
  std::string_view method = "POST";
  std::string_view target;  // origin-form, e.g. "/v1/chat/completions"
  std::string_view body;
  std::string_view content_type = "application/json";
  std::string_view accept;         // omitted when empty
  std::string_view authorization;  // the whole header value ("Bearer ..."); omitted when empty
  std::string_view request_id;     // sent as x-request-id; omitted when empty
  std::string_view traceparent;    // W3C Trace Context (tracing on only); omitted when empty
  // More header lines, pre-rendered once per deployment ("x-api-key: ...\r\nanthropic-version:
  // 2023-06-01", no trailing CRLF); omitted when empty.
  std::string_view extra_headers;
};

class H2Call;

class Call {
 public:
  Call(Pool& pool, const Origin& origin, const CallOptions& options);
  ~Call();
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  // Sends the request and reads the response head. Errors: kUpstreamUnavailable (connect,
  // reset, cancelled), kUpstreamTimeout (incl. no slot within the connect timeout),
  // kUpstreamBadResponse (unparseable head).
  boost::asio::awaitable<Status> Start(const OutgoingRequest& request);

  unsigned status() const;
  // A response header's value, or "" if absent.
  std::string_view header(std::string_view name) const;
  // The response's Content-Type, or "": read once with the head (every answer's consumer asks
  // for it; header() searches the fields by name each time).
  std::string_view content_type() const { return content_type_; }

  // The next piece of the body; an empty view means the body is complete. The view is valid
  // until the next call.
  boost::asio::awaitable<Result<std::string_view>> ReadSome();
  // Like ReadSome, but waits at most `wait` (less than the idle timeout) for bytes: nullopt
  // means nothing arrived in that time and the connection is still good (the stream relay
  // sends a keep-alive comment then). Once the silence reaches the idle timeout it is an error.
  // A zero `wait` means no soft wait: exactly ReadSome. Bytes already received (in the
  // connection's buffer or the socket's) are returned without suspending, up to a few reads in
  // a row; then it suspends once so that other connections of the worker get their turn.
  boost::asio::awaitable<Result<std::optional<std::string_view>>> ReadSomeWithin(
      std::chrono::milliseconds wait);
  // ReadSomeWithin without a coroutine, when the next piece needs no wait: over HTTP/1.1, bytes
  // in the connection's buffer or waiting in the socket (within the same budget of reads in a
  // row), or the body's end. nullopt otherwise: ReadSomeWithin then.
  std::optional<Result<std::optional<std::string_view>>> ReadSomeNow();
  // The whole body; kUpstreamBadResponse if it is larger than `max_bytes`.
  boost::asio::awaitable<Result<std::string>> ReadAll(size_t max_bytes);
  // ReadAll without a coroutine, when the body needs no read: over HTTP/1.1, a Content-Length
  // body (at most `max_bytes`) that arrived whole with the head, as a small answer usually does.
  // nullopt otherwise (nothing consumed): ReadAll then.
  std::optional<Result<std::string>> ReadAllBuffered(size_t max_bytes);

  void Cancel();
  bool cancelled() const { return cancelled_; }

  // Phase timings (steady clock); default-constructed until reached.
  bool reused() const { return reused_; }
  Clock::time_point connected_at() const { return connected_at_; }
  Clock::time_point request_sent_at() const { return request_sent_at_; }
  Clock::time_point head_received_at() const { return head_received_at_; }
  // Whether the exchange runs over HTTP/2 (after Start()).
  bool http2() const { return h2_ != nullptr; }

 private:
  using Parser = net::BodyParser;
  boost::asio::awaitable<Status> Connect();
  // A new exchange on connection_: the response's parser set up, the first-byte deadline armed.
  void BeginExchange();
  // Writes what the socket takes of the request now, without waiting: returns the rest (empty
  // when it took it all; over TLS at most a 16 KB record is written here), or `ec` for a
  // failed write.
  std::array<boost::asio::const_buffer, 2> WriteNow(std::string_view head, std::string_view body,
                                                    boost::system::error_code& ec);
  Error Failure(boost::system::error_code ec, std::string_view during) const;
  // The error to report for a failed operation: a passed deadline reads as a timeout.
  boost::system::error_code Classify(boost::system::error_code ec) const;
  // Reads body bytes under a deadline of `wait` (ReadAll, once ReadBuffered found none).
  boost::asio::awaitable<Result<size_t>> ReadInto(char* out, size_t size,
                                                  std::chrono::milliseconds wait);
  // ReadInto without I/O: the body bytes the connection's buffer holds (at most `size`), the
  // body's end, or what is wrong with the buffered bytes; nullopt when a network read must come
  // first.
  std::optional<Result<size_t>> ReadBuffered(char* out, size_t size);
  void Finish();
  // Takes the origin's slot, waiting in its queue at the active cap; TryEnter takes one only if
  // it is free now (or held already).
  boost::asio::awaitable<Status> Enter();
  bool TryEnter();
  void LeaveSlot();
  // The head has been read: its time and Content-Type.
  void HeadReceived();
  // Start() over HTTP/2; false in `fell_back` when the origin selected HTTP/1.1 (ALPN).
  boost::asio::awaitable<Status> StartHttp2(const OutgoingRequest& request, bool& fell_back);

  Pool& pool_;
  const Origin& origin_;
  const CallOptions& options_;
  std::shared_ptr<UpstreamConnection> connection_;
  net::HeaderArena arena_;  // the response header's fields; outlives parser_ (declared first)
  std::optional<Parser> parser_;
  std::unique_ptr<H2Call> h2_;           // set while the exchange runs over HTTP/2
  std::unique_ptr<char[]> read_buffer_;  // for ReadSome: taken on first use, kept at the end
  SlotWaiter* waiting_ = nullptr;        // while Enter() waits, so that Cancel() reaches it
  bool entered_ = false;                 // holds a slot of the origin
  bool cancelled_ = false;
  bool reused_ = false;
  bool done_ = false;
  Clock::time_point connected_at_{};
  Clock::time_point request_sent_at_{};
  Clock::time_point head_received_at_{};
  Clock::time_point last_bytes_at_{};  // for the idle timeout across ReadSomeWithin calls
  std::string_view content_type_;      // a view into parser_'s fields
  int inline_reads_ = 0;               // reads in a row that completed without suspending
  bool socket_empty_ = false;  // an inline read found nothing: the next read waits, no retry
};

}  // namespace turnpike::upstream
