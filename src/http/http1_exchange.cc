#include "http/http1_exchange.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/status.hpp>
#include <cerrno>
#include <charconv>

#include "common/text_writer.h"
#include "http/connection.h"

namespace turnpike::http {
namespace {

namespace net = boost::asio;
constexpr auto kTuple = net::as_tuple(net::use_awaitable);
constexpr std::string_view kCrlf = "\r\n";
constexpr std::string_view kLastChunk = "0\r\n\r\n";

// "<size in hex>\r\n": the line that opens a chunk (snprintf cost ~700 instructions a chunk).
class ChunkSizeLine {
 public:
  explicit ChunkSizeLine(size_t size) {
    constexpr char kHex[] = "0123456789abcdef";
    char* p = bytes_ + sizeof(bytes_);
    *--p = '\n';
    *--p = '\r';
    do {
      *--p = kHex[size & 0xf];
      size >>= 4;
    } while (size != 0);
    begin_ = p;
  }
  std::string_view view() const {
    return std::string_view(begin_, static_cast<size_t>(bytes_ + sizeof(bytes_) - begin_));
  }

 private:
  char bytes_[2 * sizeof(size_t) + kCrlf.size()];
  const char* begin_;
};

// Drops the first `n` bytes of `buffers`.
template <size_t N>
void Advance(std::array<net::const_buffer, N>& buffers, size_t n) {
  for (net::const_buffer& b : buffers) {
    const size_t used = std::min(n, b.size());
    b += used;
    n -= used;
  }
}

template <size_t N>
size_t TotalSize(const std::array<net::const_buffer, N>& buffers) {
  size_t total = 0;
  for (const net::const_buffer& b : buffers) total += b.size();
  return total;
}

template <typename Conn>
void ArmWatch(const std::shared_ptr<Conn>& conn);

// A readiness wait costs no read syscall: the common completion (the client's next request
// arriving after this exchange ended) is dismissed without one. Only a completion while an
// exchange is watching peeks, to tell end-of-stream from pipelined bytes. (Over TLS the bytes
// peeked may be a record the client sent before closing, a close_notify alert: the watch ends
// there as for pipelined bytes, and the close is seen at the next read.)
template <typename Conn>
void OnWatchComplete(const std::shared_ptr<Conn>& conn, boost::system::error_code ec) {
  conn->peek_pending = false;
  if (!conn->watching || ec == net::error::operation_aborted) return;
  char byte;
  const ssize_t n = ::recv(conn->socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) {
    conn->watching = false;  // pipelined bytes: the client is there (and can't be watched)
    return;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    ArmWatch(conn);  // spurious wake-up
    return;
  }
  conn->watching = false;
  conn->peer_gone = true;
  auto on_gone = std::move(conn->on_gone);
  conn->on_gone = nullptr;
  if (on_gone) on_gone();
}

template <typename Conn>
void ArmWatch(const std::shared_ptr<Conn>& conn) {
  conn->peek_pending = true;
  conn->socket().async_wait(net::socket_base::wait_read,
                            [conn](boost::system::error_code ec) { OnWatchComplete(conn, ec); });
}

}  // namespace

template <typename Stream>
BasicHttp1Exchange<Stream>::BasicHttp1Exchange(std::shared_ptr<BasicConnection<Stream>> connection,
                                               Request& request, Clock::time_point started,
                                               bool draining)
    : Http1ExchangeBase(request, started, draining), connection_(std::move(connection)) {}

template <typename Stream>
BasicHttp1Exchange<Stream>::~BasicHttp1Exchange() {
  StopWatching();
}

template <typename Stream>
std::string BasicHttp1Exchange<Stream>::client_address() const {
  boost::system::error_code ec;
  auto ep = connection_->socket().remote_endpoint(ec);
  if (ec) return {};
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

template <typename Stream>
bool BasicHttp1Exchange<Stream>::client_gone() const {
  return connection_->peer_gone;
}

template <typename Stream>
bool BasicHttp1Exchange<Stream>::keep_alive() const {
  return !draining_ && !connection_->peer_gone && state_ == State::kDone && request_keep_alive_;
}

template <typename Stream>
void BasicHttp1Exchange<Stream>::WatchClient(std::function<void()> on_gone) {
  BasicConnection<Stream>& c = *connection_;
  if (c.peer_gone) {
    if (on_gone) on_gone();
    return;
  }
  c.on_gone = std::move(on_gone);
  c.watching = true;
  if (!c.peek_pending) ArmWatch(connection_);
}

template <typename Stream>
void BasicHttp1Exchange<Stream>::StopWatching() {
  connection_->watching = false;
  connection_->on_gone = nullptr;
}

void Http1ExchangeBase::SerializeHead(std::string& head, unsigned status,
                                      std::string_view content_type, bool chunked,
                                      size_t content_length) {
  using namespace std::string_view_literals;
  response_status_ = status;
  std::string_view reason = "OK"sv;
  if (status != 200) {
    const auto named =
        boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(status));
    reason = std::string_view(named.data(), named.size());
  }
  // The fixed text below is 98 bytes at most (its longer choices); then two decimals and the
  // variable parts. (Too little room would cost a second writing, not an overflow.)
  constexpr size_t kFixed = 98;
  const size_t bound = kFixed + 2 * TextWriter::kMaxDecimal + reason.size() + content_type.size() +
                       request_id_.size() + response_headers_.lines().size();
  const bool keep = !draining_ && request_keep_alive_;
  WriteText(head, bound, [&](TextWriter& w) {
    w.Put("HTTP/1.1 "sv);
    w.PutDecimal(status);
    w.Put(' ');
    w.Put(reason);
    w.Put("\r\n"sv);
    if (!content_type.empty()) {
      w.Put("Content-Type: "sv);
      w.Put(content_type);
      w.Put("\r\n"sv);
    }
    if (chunked) {
      w.Put("Transfer-Encoding: chunked\r\n"sv);
    } else {
      w.Put("Content-Length: "sv);
      w.PutDecimal(content_length);
      w.Put("\r\n"sv);
    }
    w.Put("x-request-id: "sv);
    w.Put(request_id_);
    w.Put("\r\n"sv);
    w.Put(response_headers_.lines());
    w.Put(keep ? "Connection: keep-alive\r\n\r\n"sv : "Connection: close\r\n\r\n"sv);
  });
}

template <typename Stream>
template <size_t N>
typename BasicHttp1Exchange<Stream>::Sent BasicHttp1Exchange<Stream>::TryWrite(
    std::array<net::const_buffer, N>& buffers) {
  BasicConnection<Stream>& c = *connection_;
  if (writing_ || queued_writes_ > 0) return Sent::kLater;  // keep the call order
  if (c.peer_gone) return Sent::kFailed;
  boost::system::error_code ec;
  if (!c.socket().non_blocking()) {
    c.socket().non_blocking(true, ec);  // once per connection; async operations are unaffected
    if (ec) return Sent::kLater;
  }
  const size_t total = TotalSize(buffers);
  const size_t n = c.stream.write_some(buffers, ec);
  if (ec == net::error::would_block || ec == net::error::try_again) return Sent::kLater;
  if (ec) {
    c.peer_gone = true;
    return Sent::kFailed;
  }
  if (n == total) return Sent::kDone;
  Advance(buffers, n);
  return Sent::kLater;
}

template <typename Stream>
net::awaitable<bool> BasicHttp1Exchange<Stream>::Send(std::array<net::const_buffer, 3> buffers) {
  const Sent sent = TryWrite(buffers);
  if (sent != Sent::kLater) co_return sent == Sent::kDone;
  const bool written = co_await WriteBuffers(buffers);
  co_return written;
}

template <typename Stream>
template <size_t N>
net::awaitable<bool> BasicHttp1Exchange<Stream>::WriteBuffers(
    std::array<net::const_buffer, N> buffers) {
  BasicConnection<Stream>& c = *connection_;
  ++queued_writes_;
  while (writing_) {
    if (!write_done_) {
      // Armed once, never re-armed (re-arming would cancel other waiters); cancel() wakes all.
      write_done_ = std::make_unique<net::steady_timer>(c.stream.get_executor());
      write_done_->expires_at(net::steady_timer::time_point::max());
    }
    co_await write_done_->async_wait(kTuple);
  }
  --queued_writes_;
  if (c.peer_gone) co_return false;
  writing_ = true;
  c.Arm(c.write_timeout);
  auto [ec, n] = co_await net::async_write(c.stream, buffers, kTuple);
  c.Disarm();
  writing_ = false;
  if (write_done_) write_done_->cancel();
  if (ec) {
    c.peer_gone = true;
    co_return false;
  }
  co_return true;
}

template <typename Stream>
net::awaitable<bool> BasicHttp1Exchange<Stream>::Respond(unsigned status,
                                                         std::string_view content_type,
                                                         std::string body) {
  if (state_ != State::kNew) co_return false;
  state_ = State::kDone;
  std::string& head = connection_->response_head;
  SerializeHead(head, status, content_type, false, body.size());
  head_sent_at_ = Clock::now();
  bytes_sent_ += body.size();
  const std::array<net::const_buffer, 3> buffers{net::buffer(head), net::buffer(body),
                                                 net::const_buffer()};
  const bool written = co_await Send(buffers);
  co_return written;
}

template <typename Stream>
net::awaitable<bool> BasicHttp1Exchange<Stream>::StartStream(unsigned status,
                                                             std::string_view content_type) {
  if (state_ != State::kNew) co_return false;
  state_ = State::kStreaming;
  std::string& head = connection_->response_head;
  SerializeHead(head, status, content_type, true, 0);
  head_sent_at_ = Clock::now();
  const std::array<net::const_buffer, 3> buffers{net::buffer(head), net::const_buffer(),
                                                 net::const_buffer()};
  const bool written = co_await Send(buffers);
  co_return written;
}

template <typename Stream>
net::awaitable<bool> BasicHttp1Exchange<Stream>::Write(std::string_view data) {
  if (state_ != State::kStreaming) co_return false;
  if (data.empty()) co_return !connection_->peer_gone;
  const ChunkSizeLine size_line(data.size());
  bytes_sent_ += data.size();
  std::array<net::const_buffer, 3> buffers{net::buffer(size_line.view()), net::buffer(data),
                                           net::buffer(kCrlf)};
  // Inline here rather than through Send: one coroutine frame less per chunk.
  const Sent sent = TryWrite(buffers);
  if (sent != Sent::kLater) co_return sent == Sent::kDone;
  const bool written = co_await WriteBuffers(buffers);
  co_return written;
}

template <typename Stream>
net::awaitable<bool> BasicHttp1Exchange<Stream>::WritePieces(
    std::span<const std::string_view> pieces) {
  if (pieces.size() > kMaxPieces) {
    net::awaitable<bool> joined = Exchange::WritePieces(pieces);
    const bool written = co_await std::move(joined);
    co_return written;
  }
  if (state_ != State::kStreaming) co_return false;
  size_t size = 0;
  for (std::string_view piece : pieces) size += piece.size();
  if (size == 0) co_return !connection_->peer_gone;
  const ChunkSizeLine size_line(size);
  bytes_sent_ += size;
  // One chunk, gathered: its size line, the pieces, its CRLF (unused entries stay empty).
  std::array<net::const_buffer, kMaxPieces + 2> buffers{};
  buffers[0] = net::buffer(size_line.view());
  size_t at = 1;
  for (std::string_view piece : pieces) buffers[at++] = net::buffer(piece);
  buffers[at] = net::buffer(kCrlf);
  const Sent sent = TryWrite(buffers);
  if (sent != Sent::kLater) co_return sent == Sent::kDone;
  const bool written = co_await WriteBuffers(buffers);
  co_return written;
}

template <typename Stream>
net::awaitable<bool> BasicHttp1Exchange<Stream>::EndStream() {
  if (state_ != State::kStreaming) co_return false;
  state_ = State::kDone;
  const std::array<net::const_buffer, 3> buffers{net::buffer(kLastChunk), net::const_buffer(),
                                                 net::const_buffer()};
  const bool written = co_await Send(buffers);
  co_return written;
}

template <typename Stream>
void BasicHttp1Exchange<Stream>::Abort() {
  state_ = State::kDone;
  BasicConnection<Stream>& c = *connection_;
  boost::system::error_code ec;
  c.socket().set_option(net::socket_base::linger(true, 0), ec);
  c.Close();
  c.peer_gone = true;
}

template class BasicHttp1Exchange<PlainStream>;
template class BasicHttp1Exchange<TlsStream>;

}  // namespace turnpike::http
