// HTTP/2 to an upstream origin (`Origin::http2`): one connection's coroutines, and a worker's
// set of such connections per origin.
//
// H2Connection owns the socket (an UpstreamConnection: plain TCP, or TLS offering ALPN
// "h2,http/1.1") and an H2Session. Start() spawns its coroutine, which connects (resolve,
// TCP, TLS handshake) and then runs a reader (socket -> session) and a writer (session ->
// socket, woken by the session's work signal). Requests may be submitted before the connect
// completes: their frames wait in the session. A failed connect, a read or write error or the
// end of the session ends every open stream of this connection only (`lost`). Over TLS, a
// server that does not select "h2" makes the connection end at once with `h1_selected()`:
// the caller then speaks HTTP/1.1 to that origin (H2Pool remembers it for the worker).
// While no stream is open the connection closes after the pool's idle_ttl.
//
// H2Pool (one per worker, owned by its Pool): Pick() returns a connection of the origin with
// room for one more stream (below the server's SETTINGS_MAX_CONCURRENT_STREAMS and
// PoolOptions::h2_max_streams_per_connection), or starts a new one. Connections that ended or
// received GOAWAY are dropped from the set (their open streams finish on them).
//
// Ownership: connections are held by shared_ptr by the H2Pool, by their coroutines and by the
// calls whose streams they carry; they borrow the Pool (which outlives them: Pool::Shutdown()
// closes them before the worker's event loop goes). Thread safety: the owning worker only.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "upstream/h2_session.h"
#include "upstream/origin.h"
#include "upstream/pool.h"

namespace turnpike::upstream {

class H2Connection : public std::enable_shared_from_this<H2Connection> {
 public:
  H2Connection(Pool& pool, const Origin& origin, uint32_t max_streams);
  H2Connection(const H2Connection&) = delete;
  H2Connection& operator=(const H2Connection&) = delete;

  // Spawns the connection's coroutine on the pool's executor.
  static void Start(std::shared_ptr<H2Connection> self, std::chrono::milliseconds connect_timeout,
                    std::chrono::milliseconds idle_ttl);

  H2Session& session() { return session_; }
  // A stream was added: the idle deadline no longer applies.
  void Busy();
  void Close();

  bool connected() const { return connected_; }
  bool ended() const { return ended_; }
  bool h1_selected() const { return h1_selected_; }
  const std::string& failure() const { return failure_; }  // why the connection ended early
  Clock::time_point connected_at() const { return connected_at_; }

 private:
  static boost::asio::awaitable<void> Run(std::shared_ptr<H2Connection> self,
                                          std::chrono::milliseconds connect_timeout,
                                          std::chrono::milliseconds idle_ttl);
  static boost::asio::awaitable<void> WriteLoop(std::shared_ptr<H2Connection> self);
  boost::asio::awaitable<bool> Connect(std::chrono::milliseconds timeout);
  void End(std::string why);

  Pool& pool_;
  const Origin& origin_;
  std::shared_ptr<UpstreamConnection> socket_;
  H2Session session_;
  Clock::time_point connected_at_{};
  std::string failure_;
  bool connected_ = false;
  bool ended_ = false;
  bool reader_done_ = false;
  bool h1_selected_ = false;
};

class H2Pool {
 public:
  explicit H2Pool(Pool& pool) : pool_(pool) {}
  H2Pool(const H2Pool&) = delete;
  H2Pool& operator=(const H2Pool&) = delete;

  // A connection with room for one more stream (a new one when none has).
  std::shared_ptr<H2Connection> Pick(const Origin& origin,
                                     std::chrono::milliseconds connect_timeout);
  // Over TLS the origin did not select h2: this worker speaks HTTP/1.1 to it from now on.
  void MarkHttp1(const Origin& origin) { http1_only_.insert(origin.key); }
  bool SpeaksHttp2(const Origin& origin) const { return !http1_only_.contains(origin.key); }
  // Connections of `origin` in the set (tests and the bench).
  size_t ConnectionCount(const Origin& origin) const;
  // Closes every connection (their streams end `lost`).
  void Shutdown();

 private:
  Pool& pool_;
  std::unordered_map<std::string, std::vector<std::shared_ptr<H2Connection>>> origins_;
  std::unordered_set<std::string> http1_only_;
  bool shut_down_ = false;
};

}  // namespace turnpike::upstream
