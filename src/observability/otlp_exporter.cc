#include "observability/otlp_exporter.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

#include "observability/otlp_encoding.h"

namespace turnpike::observability {
namespace {
constexpr std::string_view kScheme = "http://";
constexpr size_t kMaxAnswerBytes = 64 * 1024;  // a collector's answer is read up to this

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

// Whether the peer closed (or wrote unasked to) an idle kept connection.
bool PeerClosed(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) != 0;
}

// The value of header `name` (lowercase) in an answer's head, or empty.
std::string_view HeaderValue(std::string_view head, std::string_view name) {
  size_t at = head.find("\r\n");
  while (at != std::string_view::npos && at + 2 < head.size()) {
    const size_t start = at + 2;
    const size_t end = head.find("\r\n", start);
    const std::string_view line =
        head.substr(start, (end == std::string_view::npos ? head.size() : end) - start);
    if (line.size() > name.size() && line[name.size()] == ':') {
      bool same = true;
      for (size_t i = 0; i < name.size() && same; ++i) {
        same = (line[i] | 0x20) == name[i];
      }
      if (same) {
        std::string_view value = line.substr(name.size() + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
          value.remove_prefix(1);
        }
        return value;
      }
    }
    at = end;
  }
  return {};
}

bool EqualsLower(std::string_view value, std::string_view lower) {
  if (value.size() != lower.size()) return false;
  for (size_t i = 0; i < value.size(); ++i) {
    if ((value[i] | 0x20) != lower[i]) return false;
  }
  return true;
}

// The clocks' offset: steady-clock nanoseconds + this = unix nanoseconds.
int64_t UnixOffsetNs() {
  const auto unix_now = std::chrono::system_clock::now().time_since_epoch();
  const auto steady_now = std::chrono::steady_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(unix_now).count() -
         std::chrono::duration_cast<std::chrono::nanoseconds>(steady_now).count();
}
}  // namespace

OtlpExporter::OtlpExporter(OtlpExporterOptions options)
    : options_(std::move(options)), queue_(options_.queue_size) {
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
  head_ =
      "POST " + path_ + " HTTP/1.1\r\nHost: " + authority + "\r\nContent-Type: " +
      (options_.protocol == OtlpProtocol::kJson ? "application/json" : "application/x-protobuf") +
      "\r\n";
  for (const auto& [name, value] : options_.headers) head_ += name + ": " + value + "\r\n";
  head_ += "Content-Length: ";
  thread_ = std::thread([this] { Run(); });
}

OtlpExporter::~OtlpExporter() { Stop(); }

void OtlpExporter::Stop() {
  {
    std::lock_guard<QueueLock> lock(queue_lock_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  Wake();
  if (thread_.joinable()) thread_.join();
}

void OtlpExporter::Wake() {
  { std::lock_guard<std::mutex> lock(wake_mu_); }
  wake_.notify_one();
}

void OtlpExporter::Run() {
  Slots batch(options_.queue_size);
  OtlpBuffer body;
  for (;;) {
    bool stop = false;
    {
      std::unique_lock<std::mutex> wait(wake_mu_);
      wake_.wait_for(wait, options_.export_interval, [this] {
        std::lock_guard<QueueLock> lock(queue_lock_);
        return stopping_ || queue_.size >= options_.batch_size;
      });
      std::lock_guard<QueueLock> lock(queue_lock_);
      stop = stopping_;
      std::swap(batch, queue_);
    }
    const int64_t unix_offset = UnixOffsetNs();
    // Sent in batch_size pieces; the records hold nothing to free.
    for (size_t at = 0; at < batch.size; at += options_.batch_size) {
      const size_t n = std::min(options_.batch_size, batch.size - at);
      const std::string_view encoded =
          EncodeOtlp(options_.protocol, std::span<const SpanRecord>(batch.records() + at, n),
                     options_.service_name, unix_offset, body);
      exports_.fetch_add(1, std::memory_order_relaxed);
      if (Send(encoded)) {
        exported_.fetch_add(n, std::memory_order_relaxed);
      } else {
        failed_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    batch.size = 0;
    if (stop) {
      CloseConnection();
      return;
    }
  }
}

void OtlpExporter::CloseConnection() {
  if (connection_ >= 0) ::close(connection_);
  connection_ = -1;
}

bool OtlpExporter::Send(std::string_view body) {
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  if (connection_ >= 0 && PeerClosed(connection_)) CloseConnection();
  const bool reused = connection_ >= 0;
  if (!reused) {
    connection_ = Connect(host_, port_, deadline);
    if (connection_ < 0) return false;
  }
  bool answered = false;
  int status = Exchange(body, deadline, answered);
  if (status < 0 && reused && !answered) {
    // The collector closed the kept connection under us: once more on a new one.
    CloseConnection();
    connection_ = Connect(host_, port_, deadline);
    if (connection_ < 0) return false;
    status = Exchange(body, deadline, answered);
  }
  return status >= 200 && status < 300;
}

int OtlpExporter::Exchange(std::string_view body, std::chrono::steady_clock::time_point deadline,
                           bool& answered) {
  const int fd = connection_;
  char length[24];
  const auto length_end = std::to_chars(length, length + sizeof length, body.size()).ptr;
  request_head_.assign(head_);
  request_head_.append(length, length_end);
  request_head_.append("\r\n\r\n");
  if (!SendAll(fd, request_head_, deadline) || !SendAll(fd, body, deadline)) {
    CloseConnection();
    return -1;
  }
  // The answer's head, then its body by Content-Length or chunks (else up to the close).
  answer_.clear();
  char buf[4096];
  size_t head_end = std::string::npos;
  size_t body_end = std::string::npos;  // npos: read until the collector closes
  bool keep = true;
  bool closed = false;
  for (;;) {
    if (head_end == std::string::npos) {
      head_end = answer_.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const std::string_view head(answer_.data(), head_end);
        const std::string_view content_length = HeaderValue(head, "content-length");
        if (!content_length.empty()) {
          size_t n = 0;
          const auto r = std::from_chars(content_length.data(),
                                         content_length.data() + content_length.size(), n);
          if (r.ec == std::errc{}) body_end = head_end + 4 + n;
        } else if (!EqualsLower(HeaderValue(head, "transfer-encoding"), "chunked")) {
          keep = false;
        }
        if (EqualsLower(HeaderValue(head, "connection"), "close")) keep = false;
      }
    }
    if (head_end != std::string::npos) {
      if (body_end != std::string::npos && answer_.size() >= body_end) break;
      if (body_end == std::string::npos && keep && answer_.size() >= head_end + 9 &&
          answer_.compare(answer_.size() - 5, 5, "0\r\n\r\n") == 0) {
        break;  // the last chunk
      }
    }
    if (closed || answer_.size() > kMaxAnswerBytes) {
      keep = false;
      break;
    }
    if (!WaitFor(fd, POLLIN, deadline)) {
      CloseConnection();
      return -1;
    }
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) {
      closed = true;
      continue;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      CloseConnection();
      return -1;
    }
    answered = true;
    answer_.append(buf, static_cast<size_t>(n));
  }
  if (!keep) CloseConnection();
  // "HTTP/1.1 200 OK"
  const size_t space = answer_.find(' ');
  if (head_end == std::string::npos || answer_.rfind("HTTP/1.", 0) != 0 ||
      space == std::string::npos || answer_.size() < space + 4) {
    CloseConnection();
    return -1;
  }
  int status = 0;
  for (size_t i = space + 1; i < space + 4; ++i) {
    if (answer_[i] < '0' || answer_[i] > '9') {
      CloseConnection();
      return -1;
    }
    status = status * 10 + (answer_[i] - '0');
  }
  return status;
}

}  // namespace turnpike::observability
