// A real redis-server (Debian's `redis-server`) for the L2 tests, started by the test itself
// on a free loopback port, without persistence, and stopped (SIGTERM, then waited for) when
// the object goes. The port is one the kernel handed out for a moment (bind to port 0, read
// it, close): if another process takes it first, the server exits and Start tries another.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace turnpike::cache::testing {

class RedisServer {
 public:
  // Null if no server could be started (redis-server missing, or no free port in 5 tries).
  static std::unique_ptr<RedisServer> Start() {
    for (int attempt = 0; attempt < 5; ++attempt) {
      const uint16_t port = FreePort();
      if (port == 0) continue;
      auto server = std::unique_ptr<RedisServer>(new RedisServer(port));
      if (server->Launch()) return server;
    }
    return nullptr;
  }

  ~RedisServer() { Stop(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  uint16_t port() const { return port_; }

  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  // Starts again on the same port, empty (no persistence).
  bool Restart() {
    Stop();
    return Launch();
  }

 private:
  explicit RedisServer(uint16_t port) : port_(port) {}

  static uint16_t FreePort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(addr);
    uint16_t port = 0;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size) == 0) {
      port = ntohs(addr.sin_port);
    }
    close(fd);
    return port;
  }

  bool Accepting() const {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port_);
    const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    close(fd);
    return ok;
  }

  bool Launch() {
    const std::string port = std::to_string(port_);
    pid_ = fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
      execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--loglevel", "warning", "--logfile", "/dev/null",
             static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 500; ++i) {  // up to ~5 s for the server to listen
      if (Accepting()) return true;
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {  // exited: port taken, or no server
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    Stop();
    return false;
  }

  const uint16_t port_;
  pid_t pid_ = -1;
};

}  // namespace turnpike::cache::testing
