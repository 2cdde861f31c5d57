#include "model_call/fan_out.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace turnpike::model_call {

namespace net = boost::asio;

// Shared by a Follower and the LiveAnswer; whoever is last frees it. The timer is touched only
// on the follower's executor.
struct LiveAnswer::FollowerState {
  FollowerState(const net::any_io_executor& executor, size_t buffer)
      : timer(executor), buffer_bytes(buffer) {}
  net::steady_timer timer;
  const size_t buffer_bytes;
  // Guarded by LiveAnswer::mu_.
  bool waiting = false;       // suspended in Next until a wake-up
  bool wake_pending = false;  // a wake-up is posted and has not run
  bool detached = false;      // off the live feed: woken only at the end
  size_t consumed_bytes = 0;  // the recording's size when it last took everything there was
  uint64_t wakeups = 0;
};

std::shared_ptr<LiveAnswer> LiveAnswer::Make(size_t max_bytes) {
  return std::make_shared<LiveAnswer>(MakeTag{}, max_bytes);
}

LiveAnswer::~LiveAnswer() = default;

std::unique_ptr<Follower> LiveAnswer::Join(const FollowerOptions& options,
                                           net::any_io_executor executor) {
  auto state = std::make_shared<FollowerState>(executor, options.buffer_bytes);
  // What is recorded before it joined is its own catch-up, not lag on the live feed.
  state->consumed_bytes = recording_.progress().bytes;
  {
    std::lock_guard lock(mu_);
    followers_.push_back(state);
  }
  return std::make_unique<Follower>(shared_from_this(), std::move(state), options);
}

size_t LiveAnswer::followers() const {
  std::lock_guard lock(mu_);
  return followers_.size();
}

void LiveAnswer::Publish(bool end) {
  {
    // Most calls have no follower: then a publish is only counted (a follower that joins
    // later reads the recording from its start).
    std::lock_guard lock(mu_);
    if (followers_.empty()) {
      ++publishes_;
      return;
    }
  }
  const size_t recorded = recording_.progress().bytes;
  std::lock_guard lock(mu_);
  ++publishes_;
  for (const std::shared_ptr<FollowerState>& follower : followers_) {
    // One that waits has taken everything: it does not lag, whatever this read's size.
    if (!follower->waiting && !follower->detached && recorded > follower->consumed_bytes &&
        recorded - follower->consumed_bytes > follower->buffer_bytes) {
      follower->detached = true;
    }
    if (follower->waiting && !follower->wake_pending && (end || !follower->detached)) {
      Wake(follower);
    }
  }
}

void LiveAnswer::Wake(const std::shared_ptr<FollowerState>& follower) {
  follower->waiting = false;
  follower->wake_pending = true;
  ++follower->wakeups;
  net::post(follower->timer.get_executor(), [self = shared_from_this(), follower] {
    {
      std::lock_guard lock(self->mu_);
      follower->wake_pending = false;
    }
    // Cancels the wait (it started before this was posted).
    follower->timer.expires_at(net::steady_timer::time_point::min());
  });
}

void LiveAnswer::Remove(const FollowerState* follower) {
  std::lock_guard lock(mu_);
  std::erase_if(followers_, [follower](const auto& f) { return f.get() == follower; });
}

Follower::Follower(std::shared_ptr<LiveAnswer> live,
                   std::shared_ptr<LiveAnswer::FollowerState> state, const FollowerOptions& options)
    : live_(std::move(live)),
      state_(std::move(state)),
      replay_(live_->recording(), options.replay),
      buffer_bytes_(options.buffer_bytes) {}

Follower::~Follower() { Leave(); }

void Follower::Leave() {
  if (left_) return;
  left_ = true;
  live_->Remove(state_.get());
}

bool Follower::detached() const {
  std::lock_guard lock(live_->mu_);
  return state_->detached;
}

uint64_t Follower::wakeups() const {
  std::lock_guard lock(live_->mu_);
  return state_->wakeups;
}

net::awaitable<FollowerRead> Follower::Next() {
  for (;;) {
    uint64_t seen = 0;
    {
      std::lock_guard lock(live_->mu_);
      seen = live_->publishes_;
    }
    const ReplayStep step = replay_.Next(buffer_bytes_);
    if (step.drained) {
      std::lock_guard lock(live_->mu_);
      state_->consumed_bytes = std::max(state_->consumed_bytes, step.recorded_bytes);
    }
    if (!step.frames.empty() || step.end) {
      co_return FollowerRead{step.frames, step.end, step.error};
    }
    // Nothing new: wait for the next publish, unless one came while this read ran.
    state_->timer.expires_at(net::steady_timer::time_point::max());
    {
      std::lock_guard lock(live_->mu_);
      if (live_->publishes_ != seen) continue;
      state_->waiting = true;
    }
    boost::system::error_code ec;
    auto wait = state_->timer.async_wait(net::redirect_error(net::use_awaitable, ec));
    co_await std::move(wait);
  }
}

FanOut::FanOut(std::shared_ptr<LiveAnswer> live)
    : live_(std::move(live)), recorder_(live_->writable_recording()) {}

FanOut::~FanOut() {
  if (ended_) return;
  const Error error{ErrorCode::kUnavailable, "the call ended without finishing its answer", {}};
  recorder_.OnEnd(&error);
  live_->Publish(true);
}

net::awaitable<bool> FanOut::Flush() { co_return *FlushAtOnce(); }

std::optional<bool> FanOut::FlushAtOnce() {
  live_->Publish(false);
  return true;
}

void FanOut::OnEnd(const Error* error) {
  ended_ = true;
  recorder_.OnEnd(error);
  live_->Publish(true);
}

}  // namespace turnpike::model_call
