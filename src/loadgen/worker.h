// One load generator thread: an event loop, its share of the connections and its statistics.
//
// The Plan is built once by the driver and shared read-only by every worker. A Worker is
// created on the driver thread, then Run() on the thread that owns it for its whole life; all
// of its members except the progress counters are touched only by that thread. Connections
// are closed loops (see connection.h): each sends its next request when the previous
// response has been fully read.
//
// An --http2 plan runs connections × streams_per_connection stream slots (h2_stream_loop.h)
// over the worker's own upstream::Pool instead of its socket slots.
//
// A worker stops when the plan's end time comes (requests in flight are dropped, not counted)
// or when all of its connections have run out of requests (--requests); then Run() returns.
// Timeouts are enforced by one watchdog timer per worker rather than a timer per request.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loadgen/request_template.h"
#include "loadgen/run_stats.h"
#include "upstream/origin.h"

namespace turnpike::upstream {
class Pool;
class TlsContexts;
}  // namespace turnpike::upstream

namespace turnpike::loadgen {

using Clock = std::chrono::steady_clock;

// An agent-turn run's requests (agent_template.h): each connection creates a conversation,
// then sends `turns` turns on it, then creates the next.
struct AgentPlan {
  std::string create_request;  // the full bytes of POST .../conversations
  Target turn_target;          // its path is the responses path
  std::string agent;
  std::string input;
  std::vector<std::string> headers;  // -H, on every request
  int turns = 0;
};

// An --http2 run's requests (h2_stream_loop.h): bodies and headers apart, for HTTP/2 streams.
struct Http2Plan {
  upstream::Origin origin;  // the URL's, with http2 set
  std::string path;
  std::vector<std::string> plain_bodies;   // one per --distinct variant
  std::vector<std::string> stream_bodies;  // ... if stream_every > 0
  std::string content_type = "application/json";
  std::string extra_headers;  // -H lines joined by CRLF (no trailing CRLF)
  int streams_per_connection = 1;
};

// Everything a worker needs to know about the run; immutable once the workers start.
struct Plan {
  std::vector<boost::asio::ip::tcp::endpoint> endpoints;  // tried in order on connect
  // The full request bytes, one per --distinct variant (at least one); the streaming ones are
  // used if stream_every > 0.
  std::vector<std::string> plain_requests;
  std::vector<std::string> stream_requests;
  int stream_every = 0;             // every K-th request streams
  Clock::time_point measure_start;  // permitted before: warm-up
  Clock::time_point end;            // the measured window closes
  Clock::duration timeout{};        // connect or send-to-complete limit
  uint64_t max_requests = 0;        // measured requests; 0 = no limit
  std::optional<AgentPlan> agent;   // an agent-turn run; plain_requests are unused then
  std::optional<Http2Plan> http2;   // an --http2 run: streams instead of connections
};

// Whether a connection may send another request, and whether that one will be measured.
enum class Permit {
  kStop,      // no more requests: the run is over or --requests is used up
  kWarmUp,    // send it, but do not record it
  kMeasured,  // send it and record it; it counts against --requests
};

// How one request ended, as the connection reports it.
struct Completion {
  bool measured = false;  // its Permit was kMeasured
  Outcome outcome = Outcome::kOk;
  int status = 0;  // HTTP status, 0 if none was read
  bool streaming = false;
  Clock::time_point sent_at;  // after connecting, just before the write
  // First SSE `data:` line (an agent turn's: first response.output_text.delta), streams only.
  std::optional<Clock::time_point> first_data_at;
  Clock::time_point done_at;
  uint64_t body_bytes = 0;
};

class Worker {
 public:
  // One connection's socket and the state the watchdog shares with it.
  struct Slot {
    explicit Slot(boost::asio::io_context& io) : socket(io), retry_timer(io) {}
    boost::asio::ip::tcp::socket socket;
    boost::asio::steady_timer retry_timer;  // back-off after a failed connect
    Clock::time_point deadline = Clock::time_point::max();
    bool timed_out = false;  // set by the watchdog when it closed the socket
  };

  // `tickets` is shared by all workers and counts measured requests against max_requests.
  Worker(const Plan& plan, std::atomic<uint64_t>& tickets, int connections);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs the event loop until the worker stops. Call once.
  void Run();

  // Valid after Run() returned.
  const RunStats& stats() const { return stats_; }
  bool ended_early() const { return ended_early_; }  // ran out of requests before `end`
  Clock::time_point last_done_at() const { return last_done_at_; }

  // Any thread, for the progress line.
  uint64_t ok_so_far() const { return ok_progress_.load(std::memory_order_relaxed); }
  uint64_t failed_so_far() const { return failed_progress_.load(std::memory_order_relaxed); }

  // For the connection loops, on the worker thread.
  const Plan& plan() const { return plan_; }
  bool stopping() const { return stopping_; }
  // Asked before each request (before connecting, if needed).
  Permit NextRequest();
  bool NextIsStream();
  // Which --distinct variant the next request sends (cycles over the plan's variants).
  size_t NextVariant();
  void Record(const Completion& completion);
  // An agent-turn run's connection created a conversation (for a permit `measured`).
  void RecordConversation(bool measured);
  void ConnectionExited();

 private:
  void RunHttp2();
  void ArmWatchdog();
  void OnWatchdog();
  void Stop();

  const Plan& plan_;
  std::atomic<uint64_t>& tickets_;
  boost::asio::io_context io_;
  boost::asio::steady_timer end_timer_;
  boost::asio::steady_timer watchdog_;
  std::vector<std::unique_ptr<Slot>> slots_;
  int live_connections_ = 0;
  bool stopping_ = false;
  bool ended_early_ = false;
  uint64_t request_sequence_ = 0;
  uint64_t next_variant_ = 0;
  Clock::time_point last_done_at_{};
  RunStats stats_;
  // An --http2 run's connections (after io_: they hold its sockets).
  std::unique_ptr<upstream::TlsContexts> tls_;
  std::unique_ptr<upstream::Pool> pool_;
  std::atomic<uint64_t> ok_progress_{0};
  std::atomic<uint64_t> failed_progress_{0};
};

}  // namespace turnpike::loadgen
