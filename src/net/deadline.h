// A lazy I/O deadline for a connection: when it passes, the connection's pending operations
// are cancelled (not the socket closed, so an HTTP server can still answer 408).
//
// Arming only records a due time; one timer wait stays pending and, when it fires early,
// re-arms itself for the current due time. So a busy connection that arms before every read
// or write costs no timer operation per I/O (Beast's tcp_stream arms and cancels a timer on
// every operation; measured in docs/BENCHMARKS.md).
//
// Ownership: `Conn` is held by shared_ptr; the pending wait holds a reference until it fires
// or Close() cancels it, so the owner calls CloseDeadline() when it is done with the
// connection. Single-threaded: the connection's worker only.
//
// `Conn` provides: `Deadline deadline;` and `void CancelIo();`.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>

namespace turnpike::net {

struct Deadline {
  using Clock = std::chrono::steady_clock;
  explicit Deadline(const boost::asio::any_io_executor& executor) : timer(executor) {}

  boost::asio::steady_timer timer;
  Clock::time_point due = Clock::time_point::max();        // when the current I/O times out
  Clock::time_point scheduled = Clock::time_point::max();  // when the pending wait fires
  bool hit = false;                                        // the last armed deadline passed
};

template <typename Conn>
void ScheduleDeadline(const std::shared_ptr<Conn>& conn, Deadline::Clock::time_point at);

template <typename Conn>
void OnDeadline(const std::shared_ptr<Conn>& conn, boost::system::error_code ec) {
  if (ec) return;  // superseded by an earlier wait, or closed
  Deadline& d = conn->deadline;
  d.scheduled = Deadline::Clock::time_point::max();
  if (d.due == Deadline::Clock::time_point::max()) return;  // disarmed meanwhile
  if (Deadline::Clock::now() < d.due) {
    ScheduleDeadline(conn, d.due);
    return;
  }
  d.hit = true;
  d.due = Deadline::Clock::time_point::max();
  conn->CancelIo();
}

template <typename Conn>
void ScheduleDeadline(const std::shared_ptr<Conn>& conn, Deadline::Clock::time_point at) {
  Deadline& d = conn->deadline;
  d.scheduled = at;
  d.timer.expires_at(at);  // cancels a later wait, whose handler then returns
  d.timer.async_wait([conn](boost::system::error_code ec) { OnDeadline(conn, ec); });
}

// Bounds the next I/O of `conn` to `timeout` from now.
template <typename Conn>
void ArmDeadline(const std::shared_ptr<Conn>& conn, std::chrono::milliseconds timeout) {
  Deadline& d = conn->deadline;
  d.hit = false;
  d.due = Deadline::Clock::now() + timeout;
  if (d.scheduled <= d.due) return;  // a pending wait fires first and re-checks
  ScheduleDeadline(conn, d.due);
}

inline void DisarmDeadline(Deadline& d) { d.due = Deadline::Clock::time_point::max(); }

inline void CloseDeadline(Deadline& d) {
  d.due = Deadline::Clock::time_point::max();
  d.timer.cancel();
}

}  // namespace turnpike::net
