// Internal to http/: the coroutines that serve one HTTP/2 client connection, compiled once per
// transport (connection.h): over TLS when ALPN agreed on "h2", in cleartext when the client
// opened with the connection preface (prior knowledge) and `ServerOptions::http2` is on.
//
// Design: one reader coroutine per connection owns the socket's reads and feeds every byte to
// the connection's nghttp2 session (Http2Connection::Receive); one writer coroutine sends
// whatever the session has to send (SETTINGS, acks, response frames pulled from the streams'
// queues) and waits for a Wake() when there is nothing. Each request stream runs the handler
// in its own coroutine (ServeHttp2Stream, co_spawned on the worker's executor) with an
// Http2Exchange, so a slow stream never holds up the others.
//
// Timeouts: while no stream is open the connection ends after `idle_timeout` without input,
// with a GOAWAY NO_ERROR; a write that stalls for the connection's write timeout ends the
// connection; a stream whose response the client stops taking for `idle_timeout` (its window
// held shut) is reset with CANCEL, which cancels its upstream call. A stream waiting on its
// handler has no deadline here (the upstream call has its own).
//
// End: when the client closes, a write fails, or the session is finished (GOAWAY both ways),
// every open stream is gone (its on_gone fires, so upstream calls are cancelled) and the
// socket is closed (over TLS without close_notify: GOAWAY is HTTP/2's orderly close). When the
// server drains, every HTTP/2 connection gets a GOAWAY (NO_ERROR: Worker::GoAway, and again
// checked as streams end or frames arrive); open streams finish, then the connection closes.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string_view>

#include "http/connection.h"
#include "http/http2_connection.h"
#include "http/session.h"

namespace turnpike::http {

// The 24-byte client connection preface (RFC 9113 section 3.4).
inline constexpr std::string_view kHttp2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// Serves the connection until it ends, then closes it. Bytes already read into
// `connection->buffer` (the preface, peeked) are fed first.
template <typename Stream>
boost::asio::awaitable<void> RunHttp2Session(SessionContext ctx,
                                             std::shared_ptr<BasicConnection<Stream>> connection);

// An Http2Connection whose requests are served by `ctx.handler`, each in a coroutine on
// `executor` (ServeHttp2Stream). Also what the unit tests drive, without a socket.
std::shared_ptr<Http2Connection> MakeHttp2Connection(SessionContext ctx,
                                                     boost::asio::any_io_executor executor,
                                                     std::string client_address);

// Answers one stream: 413/431 in the handler's error shape when the request was over a limit,
// else the handler; a 500 if the handler left it unanswered.
boost::asio::awaitable<void> ServeHttp2Stream(SessionContext ctx,
                                              std::shared_ptr<Http2Connection> connection,
                                              std::shared_ptr<Http2Stream> stream);

}  // namespace turnpike::http
