// Rolling restart (SIGUSR2) and inherited listening sockets (docs/adr/0003-rolling-restart.md).
//
// The old process forks and execs its own binary with the same arguments; the child inherits
// the listening sockets themselves (not new ones bound to the same port: SO_REUSEPORT would
// drop what is queued on a closing listener), named in TURNPIKE_LISTEN_FDS, and a pipe named in
// TURNPIKE_READY_FD. The child starts as usual, takes the sockets (http::ServerOptions::
// inherited_listeners), and writes one byte to the pipe just before it serves. Only then does
// the old process drain (http::Server::Drain: stop accepting, finish open exchanges, exit):
// both hold the same sockets in between, so a connection never waits on a listener nobody
// accepts from. A child that exits, or is not ready within kRestartTimeout (it is then
// killed), leaves the old process serving, which logs why.
//
// The in-process budget and rate counters are handed over too (TURNPIKE_COUNTERS_FD: a memfd
// both processes map, governance/counter_table.h), so that budgets hold while both serve.
//
// systemd socket activation (LISTEN_FDS, LISTEN_PID, descriptors from 3) is taken the same way.
//
// Threads: TakeInheritedListeners and AnnounceReady run on the main thread at start-up
// (TakeInheritedListeners before any other thread starts: it edits the environment).
// Restarter::Start is called from the signal thread; the restart runs on a thread of its own,
// which the destructor joins (it waits for the child's verdict, at most kRestartTimeout).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace turnpike::app {

inline constexpr std::chrono::seconds kRestartTimeout{60};

// What this process inherited: listening sockets, and the pipe to say it is ready on.
struct InheritedListeners {
  std::vector<int> fds;
  int ready_fd = -1;     // a restart's pipe; -1 for systemd or none
  int counters_fd = -1;  // a restart's counter table (governance/counter_table.h), or -1
  std::string source;    // "restart", "systemd", or empty
};

// Reads TURNPIKE_LISTEN_FDS, TURNPIKE_READY_FD and TURNPIKE_COUNTERS_FD, or else LISTEN_FDS for
// this LISTEN_PID, and removes them from the environment (so no later child misreads them). The
// descriptors are marked close-on-exec. Malformed values are ignored, with a log line.
InheritedListeners TakeInheritedListeners();

// Tells the process that started this one (if any) that it serves now: writes the ready
// byte, closes the pipe. Also NOTIFY_SOCKET's READY=1 and MAINPID for systemd Type=notify.
void AnnounceReady(InheritedListeners& inherited);

class Restarter {
 public:
  // `listeners` gives the descriptors to hand over; `on_ready` runs (on the restart thread)
  // once the child says it serves: the caller drains there. The binary and the arguments
  // are read now, from /proc/self, so that a binary replaced on disk later is the one started.
  // `counters_fd` (or -1): the in-process counters' table, handed over with the listeners.
  Restarter(std::function<std::vector<int>()> listeners, std::function<void()> on_ready,
            int counters_fd);
  ~Restarter();
  Restarter(const Restarter&) = delete;
  Restarter& operator=(const Restarter&) = delete;

  // Thread-safe. Starts a restart unless one is under way or has succeeded.
  void Start();

 private:
  void Run();

  const std::function<std::vector<int>()> listeners_;
  const std::function<void()> on_ready_;
  const int counters_fd_;
  std::string exe_;
  std::vector<std::string> argv_;
  std::atomic<bool> busy_{false};  // a restart is under way
  std::atomic<bool> handed_over_{false};
  std::thread thread_;  // the last restart's; joined before the next starts and at the end
};

}  // namespace turnpike::app
