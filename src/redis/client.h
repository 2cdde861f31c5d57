// A small pipelined Redis client over Turnpike's own Asio socket, on its own thread.
//
// The client owns one io_context and one thread ("redis"), and one TCP connection to the
// server. Commands submitted from any thread are queued on that thread; everything queued is
// written in one batch (pipelined) and the replies are read in order. Every batch has a
// deadline (`command_timeout`): when it passes the connection is closed and every command in
// flight fails. A lost connection is re-dialled with exponential backoff (50 ms .. 1 s); on
// every (re)connect the client selects the database and loads its Lua scripts (SCRIPT LOAD), so
// EVALSHA works after a server restart too, then runs the OnConnected hook.
//
// No worker thread ever waits for Redis: Submit only posts, and callbacks run on the client's
// thread. While disconnected, a submitted command fails at once (callers keep what they hold
// and retry later: the lease engine's failure policy, README "Fleet: Redis leases").
//
// Metrics: every command written is counted in turnpike_redis_commands_total{op}, and
// turnpike_redis_up is 1 while connected.
//
// Ownership: the owner keeps the Client alive until Stop() returned; callbacks must not outlive
// what they capture. Thread safety: Submit, connected(), last_error() and RenderMetrics from any
// thread; Start and Stop from the owning thread, once each.
// Errors: a callback gets kUnavailable (not connected, connection lost, timeout) or the
// server's error reply as a Reply of type kError.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "redis/resp.h"

namespace boost::asio {
class io_context;
}
namespace turnpike::observability {
class PrometheusWriter;
}

namespace turnpike::redis {

// The metrics label of a command; one slot each.
// kCache*: the response cache's L2 (cache/redis/redis_l2_store.h): MGET, SET PX, INCR.
// kPublish: PUBLISH channel payload (the receiving side is subscriber.h).
// kAgent*: agent turns in fleet mode (agent_scripts.h): the claim before a turn's first token,
// its release at the end, the owner key of a turn outside a conversation (SET, DEL), the renewal
// of running turns, a cancel, the cancel flags read after a reconnect (MGET), a conversation's
// version bumped by a write outside a turn (SET), the sweep of orphaned turns.
enum class Op : uint8_t {
  kPing,
  kSelect,
  kScriptLoad,
  kRefill,
  kRenew,
  kReturn,
  kRateRefill,
  kRateReturn,
  kCacheGet,
  kCachePut,
  kCacheBump,
  kPublish,
  kAgentClaim,
  kAgentRelease,
  kAgentOwn,
  kAgentRenew,
  kAgentCancel,
  kAgentFlags,
  kAgentBump,
  kAgentSweep,
  kCount
};

struct ClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 6379;
  int db = 0;
  std::chrono::milliseconds command_timeout{1'000};
  std::vector<std::string> scripts;  // Lua sources loaded on every connect; see Client::Sha
};

using Callback = std::function<void(Result<Reply>)>;

class Client {
 public:
  explicit Client(ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Starts the thread, which dials at once (and keeps re-dialling).
  void Start();
  // Fails queued commands, closes the connection and joins the thread. Idempotent.
  void Stop();

  // Runs `hook` on the client's thread after every successful (re)connect (the lease engine
  // re-registers its leases at once). Any thread; replaces the previous hook.
  void OnConnected(std::function<void()> hook);

  // Start-up only (blocks the caller): waits until connected or `timeout` passes.
  Status WaitConnected(std::chrono::milliseconds timeout) const;

  // Any thread: queues `args` (a whole command); `done` runs on the client's thread.
  void Submit(Op op, std::vector<std::string> args, Callback done);

  // The SHA1 of scripts[i] as the server answered SCRIPT LOAD (valid once connected).
  std::string Sha(size_t i) const;
  boost::asio::io_context& context();
  bool connected() const { return connected_.load(std::memory_order_acquire); }
  uint64_t commands(Op op) const {
    return commands_[static_cast<size_t>(op)].load(std::memory_order_relaxed);
  }
  void RenderMetrics(observability::PrometheusWriter& w) const;

 private:
  struct Impl;
  friend struct Impl;
  void Count(Op op);

  const ClientOptions options_;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  std::atomic<bool> connected_{false};
  std::array<std::atomic<uint64_t>, static_cast<size_t>(Op::kCount)> commands_{};
  mutable std::mutex mu_;  // guards the two below (written on connect, read anywhere)
  std::vector<std::string> shas_;
  std::string last_error_ = "not connected yet";
};

}  // namespace turnpike::redis
