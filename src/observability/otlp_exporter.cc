#include "observability/otlp_exporter.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "observability/otlp_json.h"

namespace turnpike::observability {
namespace {
constexpr std::string_view kScheme = "http://";
constexpr size_t kMaxAnswerBytes = 64 * 1024;  // a collector's answer is read up to this

// A socket closed when it goes out of scope.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Waits until `fd` is ready for `events` or `deadline` passes.
bool WaitFor(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// Connects a non-blocking socket to host:port before `deadline`; -1 on failure.
int Connect(const std::string& host, const std::string& port,
            std::chrono::steady_clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int result = -1;
  for (addrinfo* a = found; a != nullptr && result < 0; a = a->ai_next) {
    const int fd =
        ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS && WaitFor(fd, POLLOUT, deadline)) {
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
    }
    if (rc == 0) {
      result = fd;
    } else {
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  return result;
}

bool SendAll(int fd, std::string_view data, std::chrono::steady_clock::time_point deadline) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    if (!WaitFor(fd, POLLOUT, deadline)) return false;
  }
  return true;
}

// Reads the answer's status line: the status code, or -1.
int ReadStatus(int fd, std::chrono::steady_clock::time_point deadline) {
  std::string answer;
  char buf[4096];
  while (answer.find("\r\n") == std::string::npos && answer.size() < kMaxAnswerBytes) {
    if (!WaitFor(fd, POLLIN, deadline)) return -1;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return -1;
    }
    answer.append(buf, static_cast<size_t>(n));
  }
  // "HTTP/1.1 200 OK"
  const size_t space = answer.find(' ');
  if (answer.rfind("HTTP/1.", 0) != 0 || space == std::string::npos || answer.size() < space + 4) {
    return -1;
  }
  int status = 0;
  for (size_t i = space + 1; i < space + 4; ++i) {
    if (answer[i] < '0' || answer[i] > '9') return -1;
    status = status * 10 + (answer[i] - '0');
  }
  // Let the collector finish its answer before the close, so it sees no reset.
  while (WaitFor(fd, POLLIN, deadline)) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) break;
  }
  return status;
}
}  // namespace

OtlpExporter::OtlpExporter(OtlpExporterOptions options) : options_(std::move(options)) {
  const std::string& url = options_.endpoint;
  if (url.rfind(kScheme, 0) != 0) {
    throw std::invalid_argument("telemetry.otlp.endpoint: must start with http://");
  }
  const std::string rest = url.substr(kScheme.size());
  const size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  path_ = slash == std::string::npos ? "/v1/traces" : rest.substr(slash);
  const size_t colon = authority.rfind(':');
  if (authority.empty() || colon == 0) {
    throw std::invalid_argument("telemetry.otlp.endpoint: no host in " + url);
  }
  host_ = colon == std::string::npos ? authority : authority.substr(0, colon);
  port_ = colon == std::string::npos ? "80" : authority.substr(colon + 1);
  if (host_.size() > 2 && host_.front() == '[' && host_.back() == ']') {
    host_ = host_.substr(1, host_.size() - 2);
  }
  head_ = "POST " + path_ + " HTTP/1.1\r\nHost: " + authority +
          "\r\nContent-Type: application/json\r\nConnection: close\r\n";
  for (const auto& [name, value] : options_.headers) head_ += name + ": " + value + "\r\n";
  head_ += "Content-Length: ";
  queue_.reserve(options_.queue_size);
  thread_ = std::thread([this] { Run(); });
}

OtlpExporter::~OtlpExporter() { Stop(); }

bool OtlpExporter::Push(SpanRecord&& record) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || queue_.size() >= options_.queue_size) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    queue_.push_back(std::move(record));
    wake = queue_.size() == options_.batch_size;
  }
  if (wake) wake_.notify_one();
  return true;
}

void OtlpExporter::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void OtlpExporter::Run() {
  std::vector<SpanRecord> batch;
  batch.reserve(options_.queue_size);
  std::string body;
  for (;;) {
    bool stop = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait_for(lock, options_.export_interval,
                     [this] { return stopping_ || queue_.size() >= options_.batch_size; });
      stop = stopping_;
      batch.swap(queue_);
    }
    // Sent in batch_size pieces; the records are destroyed here, on this thread.
    for (size_t at = 0; at < batch.size(); at += options_.batch_size) {
      const size_t n = std::min(options_.batch_size, batch.size() - at);
      body.clear();
      EncodeOtlpJson(std::span<const SpanRecord>(batch.data() + at, n), options_.service_name,
                     body);
      exports_.fetch_add(1, std::memory_order_relaxed);
      if (Send(body)) {
        exported_.fetch_add(n, std::memory_order_relaxed);
      } else {
        failed_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    batch.clear();
    if (stop) return;
  }
}

bool OtlpExporter::Send(const std::string& body) {
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  Socket socket(Connect(host_, port_, deadline));
  if (socket.fd() < 0) return false;
  std::string head = head_;
  head += std::to_string(body.size());
  head += "\r\n\r\n";
  if (!SendAll(socket.fd(), head, deadline) || !SendAll(socket.fd(), body, deadline)) return false;
  const int status = ReadStatus(socket.fd(), deadline);
  return status >= 200 && status < 300;
}

}  // namespace turnpike::observability
