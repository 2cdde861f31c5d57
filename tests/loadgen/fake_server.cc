#include "fake_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace turnpike::loadgen::testing_support {
namespace {

constexpr std::string_view kContentLength = "Content-Length: ";
constexpr size_t kReadChunk = 4096;

}  // namespace

FakeServer::FakeServer(std::string plain, std::string stream)
    : plain_(std::move(plain)), stream_(std::move(stream)) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, SOMAXCONN) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("fake server: cannot listen");
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread(&FakeServer::AcceptLoop, this);
}

FakeServer::~FakeServer() { Stop(); }

void FakeServer::Stop() {
  if (listen_fd_ < 0) return;
  shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  acceptor_.join();
  close(listen_fd_);
  listen_fd_ = -1;
  const std::lock_guard lock(mu_);
  for (auto& t : servers_) t.join();
}

void FakeServer::AcceptLoop() {
  while (true) {
    const int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    connections_.fetch_add(1);
    const std::lock_guard lock(mu_);
    servers_.emplace_back(&FakeServer::Serve, this, fd);
  }
}

void FakeServer::Serve(int fd) {
  std::string in;
  char buf[kReadChunk];
  while (true) {
    const size_t header_end = in.find("\r\n\r\n");
    if (header_end != std::string::npos) {
      const size_t cl = in.find(kContentLength);
      const size_t length =
          cl < header_end ? std::strtoul(in.c_str() + cl + kContentLength.size(), nullptr, 10) : 0;
      if (in.size() >= header_end + 4 + length) {
        const std::string body = in.substr(header_end + 4, length);
        in.erase(0, header_end + 4 + length);
        const bool streaming = body.find("\"stream\":true") != std::string::npos;
        requests_.fetch_add(1);
        if (streaming) stream_requests_.fetch_add(1);
        const std::string& reply = streaming ? stream_ : plain_;
        if (write(fd, reply.data(), reply.size()) != static_cast<ssize_t>(reply.size())) break;
        if (reply.find("Connection: close") != std::string::npos) break;
        continue;
      }
    }
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  close(fd);
}

}  // namespace turnpike::loadgen::testing_support
