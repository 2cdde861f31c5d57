// An http::Server with one worker on a loopback port 0, running on its own thread for the
// lifetime of this object: the scripted upstreams and in-process gateways of the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "http/server.h"

namespace turnpike::http::testing {

class RunningServer {
 public:
  explicit RunningServer(HandlerFactory factory, ServerOptions options = Options())
      : server_(std::move(options), std::move(factory)) {
    // As the turnpike executable does: a TLS connection's socket BIO writes with write(2),
    // which raises SIGPIPE when the client has gone (net/tls_socket.h).
    std::signal(SIGPIPE, SIG_IGN);
    EXPECT_TRUE(server_.Bind().ok());
    thread_ = std::thread([this] { server_.Run(); });
  }
  ~RunningServer() {
    server_.Stop();
    thread_.join();
  }
  RunningServer(const RunningServer&) = delete;
  RunningServer& operator=(const RunningServer&) = delete;

  uint16_t port() const { return server_.port(); }
  Server& server() { return server_; }

 private:
  static ServerOptions Options() {
    ServerOptions o;
    o.workers = 1;
    return o;
  }
  Server server_;
  std::thread thread_;
};

}  // namespace turnpike::http::testing
