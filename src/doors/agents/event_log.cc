#include "doors/agents/event_log.h"

namespace turnpike::agents {
namespace {

constexpr std::string_view kFrameEnd = "\n\n";

}  // namespace

void EventLog::Append(std::string_view frames) {
  if (frames.empty()) return;
  std::vector<std::function<void()>> waiters;
  {
    std::lock_guard lock(mu_);
    if (finished_ || overflowed_) return;
    if (text_.size() + frames.size() > kMaxBytes) {
      // Readers cannot be given a stream with a hole: the log stops here, and says so.
      overflowed_ = true;
      text_.clear();
      text_.shrink_to_fit();
      ends_.clear();
    } else {
      text_.append(frames);
      // A frame's data is one JSON line, so a blank line ends a frame and nothing else.
      size_t at = ends_.empty() ? 0 : ends_.back();
      while ((at = text_.find(kFrameEnd, at)) != std::string::npos) {
        at += kFrameEnd.size();
        ends_.push_back(at);
      }
    }
    waiters.swap(waiters_);
  }
  for (std::function<void()>& wake : waiters) wake();
}

void EventLog::Finish() {
  std::vector<std::function<void()>> waiters;
  {
    std::lock_guard lock(mu_);
    finished_ = true;
    waiters.swap(waiters_);
  }
  for (std::function<void()>& wake : waiters) wake();
}

EventLog::Read EventLog::After(int64_t after) const {
  std::lock_guard lock(mu_);
  Read read;
  read.finished = finished_;
  read.overflowed = overflowed_;
  read.last = after;
  const int64_t count = static_cast<int64_t>(ends_.size());
  if (after + 1 >= count) return read;
  const size_t from = after < 0 ? 0 : ends_[static_cast<size_t>(after)];
  read.frames = text_.substr(from, ends_.back() - from);
  read.last = count - 1;
  return read;
}

std::string EventLog::Text() const {
  std::lock_guard lock(mu_);
  if (overflowed_ || ends_.empty()) return std::string();
  return text_.substr(0, ends_.back());
}

bool EventLog::Wait(int64_t seen, std::function<void()> wake) {
  std::lock_guard lock(mu_);
  if (finished_ || overflowed_ || static_cast<int64_t>(ends_.size()) > seen + 1) return false;
  waiters_.push_back(std::move(wake));
  return true;
}

std::string_view EventLog::FramesAfter(std::string_view text, int64_t after) {
  size_t at = 0;
  for (int64_t n = 0; n <= after; ++n) {
    const size_t end = text.find(kFrameEnd, at);
    if (end == std::string_view::npos) return std::string_view();
    at = end + kFrameEnd.size();
  }
  return text.substr(at);
}

}  // namespace turnpike::agents
