// AccessLogSink and AccessLogBuffer from access_log.h.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "common/thread_name.h"
#include "observability/access_log.h"

namespace turnpike::observability {
namespace {

constexpr mode_t kLogFileMode = 0644;
// Room for one more line past flush_bytes, so the batch being built rarely reallocates.
constexpr size_t kLineHeadroom = 4096;

uint64_t CountLines(std::string_view text) {
  return static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

std::unique_ptr<AccessLogSink> AccessLogSink::Open(const std::string& path,
                                                   AccessLogSinkOptions options) {
  if (path == "-") return std::make_unique<AccessLogSink>(STDOUT_FILENO, false, options);
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, kLogFileMode);
  if (fd < 0) {
    throw std::system_error(errno, std::generic_category(), "cannot open access log " + path);
  }
  return std::make_unique<AccessLogSink>(fd, true, options);
}

AccessLogSink::AccessLogSink(int fd, bool owns_fd, AccessLogSinkOptions options)
    : fd_(fd), owns_fd_(owns_fd), options_(options), writer_([this] { Run(); }) {}

AccessLogSink::~AccessLogSink() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_one();
  writer_.join();
  if (owns_fd_) ::close(fd_);
}

void AccessLogSink::Submit(std::string&& batch) {
  if (batch.empty()) return;
  bool accepted = false;
  bool wake_writer = false;
  {
    std::lock_guard lock(mu_);
    if (unwritten_bytes_ + batch.size() <= options_.max_pending_bytes) {
      accepted = true;
      // The writer only sleeps while pending_ is empty, so only that transition needs a wake.
      wake_writer = pending_.empty();
      unwritten_bytes_ += batch.size();
      ++accepted_batches_;
      pending_.push_back(std::move(batch));
    }
  }
  if (!accepted) {
    dropped_lines_.fetch_add(CountLines(batch), std::memory_order_relaxed);
    return;
  }
  if (wake_writer) work_cv_.notify_one();
}

void AccessLogSink::Flush() {
  std::unique_lock lock(mu_);
  const uint64_t target = accepted_batches_;
  written_cv_.wait(lock, [&] { return written_batches_ >= target; });
}

void AccessLogSink::Run() {
  SetThreadName("tp-access-log");
  std::vector<std::string> batches;
  std::unique_lock lock(mu_);
  while (true) {
    work_cv_.wait(lock, [&] { return stop_ || !pending_.empty(); });
    if (pending_.empty()) return;  // stopping, and everything is written
    batches.swap(pending_);
    lock.unlock();

    size_t bytes = 0;
    for (const std::string& batch : batches) {
      WriteBatch(batch);
      bytes += batch.size();
    }
    const size_t count = batches.size();
    batches.clear();  // frees the strings outside the lock; keeps the vector's capacity

    lock.lock();
    unwritten_bytes_ -= bytes;
    written_batches_ += count;
    written_cv_.notify_all();
  }
}

void AccessLogSink::WriteBatch(const std::string& batch) {
  size_t offset = 0;
  while (offset < batch.size()) {
    const ssize_t n = ::write(fd_, batch.data() + offset, batch.size() - offset);
    if (n >= 0) {
      offset += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      // A non-blocking fd (e.g. an inherited stdout): this is the writer thread, so wait.
      pollfd pfd{fd_, POLLOUT, 0};
      ::poll(&pfd, 1, -1);
      continue;
    }
    write_errors_.fetch_add(1, std::memory_order_relaxed);
    dropped_lines_.fetch_add(CountLines(std::string_view(batch).substr(offset)),
                             std::memory_order_relaxed);
    return;
  }
}

AccessLogBuffer::AccessLogBuffer(AccessLogSink& sink, size_t flush_bytes)
    : sink_(sink), flush_bytes_(flush_bytes) {
  buffer_.reserve(flush_bytes_ + kLineHeadroom);
}

AccessLogBuffer::~AccessLogBuffer() { FlushNow(); }

void AccessLogBuffer::Append(const AccessRecord& record) {
  AppendAccessLogLine(record, buffer_);
  if (buffer_.size() >= flush_bytes_) FlushNow();
}

void AccessLogBuffer::FlushNow() {
  if (buffer_.empty()) return;
  sink_.Submit(std::move(buffer_));
  buffer_ = std::string();
  buffer_.reserve(flush_bytes_ + kLineHeadroom);
}

}  // namespace turnpike::observability
