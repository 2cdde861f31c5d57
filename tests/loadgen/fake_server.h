// A scriptable HTTP/1.1 server for the load generator's tests, on plain blocking sockets.
//
// Binds 127.0.0.1 on port 0, accepts on its own thread and serves each connection on another
// thread: reads a request (headers plus Content-Length body) and answers with `plain` or, if
// the body contains "stream":true, with `stream`. Counts what it saw. Stop() (or the
// destructor) closes the listener and joins every thread once the client has hung up.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace turnpike::loadgen::testing_support {

class FakeServer {
 public:
  FakeServer(std::string plain, std::string stream);
  ~FakeServer();

  int port() const { return port_; }
  int requests() const { return requests_.load(); }
  int stream_requests() const { return stream_requests_.load(); }
  int connections() const { return connections_.load(); }
  void Stop();

 private:
  void AcceptLoop();
  void Serve(int fd);

  const std::string plain_;
  const std::string stream_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::atomic<int> stream_requests_{0};
  std::atomic<int> connections_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> servers_;  // guarded by mu_
};

}  // namespace turnpike::loadgen::testing_support
