#include "app/restart.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "common/thread_name.h"

extern char** environ;

namespace turnpike::app {
namespace {

constexpr const char* kListenFdsVar = "TURNPIKE_LISTEN_FDS";
constexpr const char* kReadyFdVar = "TURNPIKE_READY_FD";
constexpr const char* kCountersFdVar = "TURNPIKE_COUNTERS_FD";
constexpr char kReadyByte = 'R';

// "3,4,5" -> {3, 4, 5}; empty on any malformed part.
std::vector<int> ParseFds(const char* text) {
  std::vector<int> fds;
  const char* p = text;
  while (*p != '\0') {
    char* end = nullptr;
    const long fd = std::strtol(p, &end, 10);
    if (end == p || fd < 0 || fd > 1'000'000) return {};
    fds.push_back(static_cast<int>(fd));
    p = end;
    if (*p == ',') ++p;
  }
  return fds;
}

void SetCloseOnExec(int fd) { ::fcntl(fd, F_SETFD, FD_CLOEXEC); }

// systemd's sd_notify, without libsystemd: one datagram to $NOTIFY_SOCKET ("@" = abstract).
void Notify(const std::string& message) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') return;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const size_t length = std::strlen(path);
  if (length >= sizeof(address.sun_path)) return;
  std::memcpy(address.sun_path, path, length);
  if (address.sun_path[0] == '@') address.sun_path[0] = '\0';
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  const socklen_t size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
  ::sendto(fd, message.data(), message.size(), MSG_NOSIGNAL,
           reinterpret_cast<const sockaddr*>(&address), size);
  ::close(fd);
}

std::vector<std::string> ReadCmdline() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  size_t start = 0;
  while (start < all.size()) {
    const size_t end = all.find('\0', start);
    args.push_back(all.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return args;
}

std::string ReadExe() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return "/proc/self/exe";
  return std::string(buffer, static_cast<size_t>(n));
}

bool IsHandoverVar(const char* entry) {
  for (const char* name :
       {kListenFdsVar, kReadyFdVar, kCountersFdVar, "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"}) {
    const size_t n = std::strlen(name);
    if (std::strncmp(entry, name, n) == 0 && entry[n] == '=') return true;
  }
  return false;
}

std::string JoinFds(const std::vector<int>& fds) {
  std::string out;
  for (int fd : fds) out += (out.empty() ? "" : ",") + std::to_string(fd);
  return out;
}

}  // namespace

InheritedListeners TakeInheritedListeners() {
  InheritedListeners inherited;
  if (const char* fds = std::getenv(kListenFdsVar)) {
    inherited.fds = ParseFds(fds);
    inherited.source = "restart";
    if (const char* ready = std::getenv(kReadyFdVar)) {
      const std::vector<int> one = ParseFds(ready);
      if (one.size() == 1) inherited.ready_fd = one[0];
    }
    if (const char* counters = std::getenv(kCountersFdVar)) {
      const std::vector<int> one = ParseFds(counters);
      if (one.size() == 1) inherited.counters_fd = one[0];
    }
  } else if (const char* count = std::getenv("LISTEN_FDS")) {
    const char* pid = std::getenv("LISTEN_PID");
    if (pid != nullptr && std::strtol(pid, nullptr, 10) == ::getpid()) {
      const long n = std::strtol(count, nullptr, 10);
      for (long i = 0; i < n && i < 1024; ++i) inherited.fds.push_back(3 + static_cast<int>(i));
      inherited.source = "systemd";
    }
  }
  if (!inherited.source.empty() && inherited.fds.empty()) {
    std::fprintf(stderr, "turnpike: ignoring malformed inherited listeners (%s)\n",
                 inherited.source.c_str());
    inherited.source.clear();
  }
  for (int fd : inherited.fds) SetCloseOnExec(fd);
  if (inherited.ready_fd >= 0) SetCloseOnExec(inherited.ready_fd);
  if (inherited.counters_fd >= 0) SetCloseOnExec(inherited.counters_fd);
  for (const char* name :
       {kListenFdsVar, kReadyFdVar, kCountersFdVar, "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"}) {
    ::unsetenv(name);
  }
  return inherited;
}

void AnnounceReady(InheritedListeners& inherited) {
  if (inherited.ready_fd >= 0) {
    const ssize_t written = ::write(inherited.ready_fd, &kReadyByte, 1);
    (void)written;  // the old process gone: nobody waits, nothing to do
    ::close(inherited.ready_fd);
    inherited.ready_fd = -1;
  }
  Notify("READY=1\nMAINPID=" + std::to_string(::getpid()) + "\n");
}

Restarter::Restarter(std::function<std::vector<int>()> listeners, std::function<void()> on_ready,
                     int counters_fd)
    : listeners_(std::move(listeners)),
      on_ready_(std::move(on_ready)),
      counters_fd_(counters_fd),
      exe_(ReadExe()),
      argv_(ReadCmdline()) {}

Restarter::~Restarter() {
  if (thread_.joinable()) thread_.join();
}

void Restarter::Start() {
  if (handed_over_.load()) {
    std::fprintf(stderr, "turnpike: SIGUSR2: already handed over; draining\n");
    return;
  }
  if (busy_.exchange(true)) {
    std::fprintf(stderr, "turnpike: SIGUSR2: a restart is already under way\n");
    return;
  }
  if (thread_.joinable()) thread_.join();  // the last, failed restart's: finished
  thread_ = std::thread([this] {
    SetThreadName("tp-restart");
    Run();
    busy_.store(false);
  });
}

void Restarter::Run() {
  const std::vector<int> fds = listeners_();
  if (fds.empty() || argv_.empty()) {
    std::fprintf(stderr, "turnpike: restart failed: nothing to hand over; still serving\n");
    return;
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "turnpike: restart failed: pipe: %s; still serving\n",
                 std::strerror(errno));
    return;
  }
  const int ready_read = pipe_fds[0];
  const int ready_write = pipe_fds[1];
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!IsHandoverVar(*e)) env_strings.emplace_back(*e);
  }
  env_strings.push_back(std::string(kListenFdsVar) + "=" + JoinFds(fds));
  env_strings.push_back(std::string(kReadyFdVar) + "=" + std::to_string(ready_write));
  if (counters_fd_ >= 0) {
    env_strings.push_back(std::string(kCountersFdVar) + "=" + std::to_string(counters_fd_));
  }
  const int counters_fd = counters_fd_;
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv_;
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  const char* exe = exe_.c_str();
  sigset_t none;
  sigemptyset(&none);

  const long max_fd = ::sysconf(_SC_OPEN_MAX);

  const pid_t child = ::fork();
  if (child == 0) {
    // Every descriptor but the listeners and the pipe closes on exec (connections, the store's
    // files: a client socket held by the child would never see its close here). A kernel
    // before 5.11 has no CLOSE_RANGE_CLOEXEC: one fcntl per descriptor number then.
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
      for (long fd = 3; fd < max_fd; ++fd) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    }
    for (int fd : fds) ::fcntl(fd, F_SETFD, 0);
    ::fcntl(ready_write, F_SETFD, 0);
    if (counters_fd >= 0) ::fcntl(counters_fd, F_SETFD, 0);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // the child blocks its own (signals.h)
    ::execve(exe, argv.data(), envp.data());
    static constexpr char kFailed[] = "turnpike: restart: exec failed\n";
    const ssize_t ignored = ::write(STDERR_FILENO, kFailed, sizeof(kFailed) - 1);
    (void)ignored;
    ::_exit(127);
  }
  ::close(ready_write);
  if (child < 0) {
    std::fprintf(stderr, "turnpike: restart failed: fork: %s; still serving\n",
                 std::strerror(errno));
    ::close(ready_read);
    return;
  }
  std::fprintf(stderr, "turnpike: SIGUSR2: started process %d to take over %zu listeners\n",
               static_cast<int>(child), fds.size());
  pollfd wait{ready_read, POLLIN, 0};
  int polled = 0;
  do {
    polled = ::poll(&wait, 1, static_cast<int>(kRestartTimeout.count() * 1000));
  } while (polled < 0 && errno == EINTR);
  char byte = 0;
  const ssize_t got = polled > 0 ? ::read(ready_read, &byte, 1) : -1;
  ::close(ready_read);
  if (got == 1 && byte == kReadyByte) {
    handed_over_.store(true);
    std::fprintf(stderr, "turnpike: process %d serves; this process (%d) drains and exits\n",
                 static_cast<int>(child), static_cast<int>(::getpid()));
    on_ready_();
    return;
  }
  if (polled == 0) ::kill(child, SIGKILL);  // not ready in time: it must not serve later
  int status = 0;
  ::waitpid(child, &status, 0);
  std::string why =
      polled == 0
          ? "was not ready within " + std::to_string(kRestartTimeout.count()) + " s (killed)"
      : WIFEXITED(status)   ? "exited with status " + std::to_string(WEXITSTATUS(status))
      : WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                            : "ended";
  std::fprintf(stderr, "turnpike: restart failed: process %d %s; still serving\n",
               static_cast<int>(child), why.c_str());
}

}  // namespace turnpike::app
