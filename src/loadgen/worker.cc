#include "loadgen/worker.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "loadgen/agent_connection.h"
#include "loadgen/connection.h"
#include "loadgen/h2_stream_loop.h"
#include "upstream/pool.h"

namespace turnpike::loadgen {
namespace {

// The watchdog looks at every deadline this often: a tenth of the timeout, within bounds, so
// a timeout fires at most about 10% late.
constexpr Clock::duration kMinWatchdogTick = std::chrono::milliseconds(1);
constexpr Clock::duration kMaxWatchdogTick = std::chrono::milliseconds(100);
constexpr int kWatchdogTicksPerTimeout = 10;

}  // namespace

Worker::Worker(const Plan& plan, std::atomic<uint64_t>& tickets, int connections)
    : plan_(plan), tickets_(tickets), io_(1), end_timer_(io_), watchdog_(io_) {
  slots_.reserve(connections);
  for (int i = 0; i < connections; ++i) slots_.push_back(std::make_unique<Slot>(io_));
}

Worker::~Worker() {
  // Sockets and timers belong to io_; drop them first.
  slots_.clear();
  pool_.reset();
}

void Worker::Run() {
  if (plan_.http2) {
    RunHttp2();
    return;
  }
  live_connections_ = static_cast<int>(slots_.size());
  for (auto& slot : slots_) {
    if (plan_.agent) {
      boost::asio::co_spawn(io_, RunAgentConnection(*this, *slot), boost::asio::detached);
    } else {
      boost::asio::co_spawn(io_, RunConnection(*this, *slot), boost::asio::detached);
    }
  }
  if (slots_.empty()) return;
  end_timer_.expires_at(plan_.end);
  end_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) Stop();
  });
  ArmWatchdog();
  io_.run();
}

void Worker::RunHttp2() {
  if (slots_.empty()) return;
  tls_ = std::make_unique<upstream::TlsContexts>("", false);
  upstream::PoolOptions options;
  options.reap_interval = std::chrono::milliseconds(0);
  options.h2_max_streams_per_connection =
      static_cast<uint32_t>(plan_.http2->streams_per_connection);
  pool_ = std::make_unique<upstream::Pool>(io_, *tls_, options);
  const int streams = static_cast<int>(slots_.size()) * plan_.http2->streams_per_connection;
  live_connections_ = streams;
  for (int i = 0; i < streams; ++i) {
    boost::asio::co_spawn(io_, RunHttp2Slot(*this, *pool_), boost::asio::detached);
  }
  end_timer_.expires_at(plan_.end);
  end_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) Stop();
  });
  io_.run();
}

Permit Worker::NextRequest() {
  if (stopping_) return Permit::kStop;
  if (Clock::now() < plan_.measure_start) return Permit::kWarmUp;
  if (plan_.max_requests == 0) return Permit::kMeasured;
  if (tickets_.fetch_add(1, std::memory_order_relaxed) >= plan_.max_requests) return Permit::kStop;
  return Permit::kMeasured;
}

size_t Worker::NextVariant() { return next_variant_++ % plan_.plain_requests.size(); }

bool Worker::NextIsStream() {
  if (plan_.stream_every <= 0) return false;
  ++request_sequence_;
  return request_sequence_ % static_cast<uint64_t>(plan_.stream_every) == 0;
}

void Worker::Record(const Completion& c) {
  if (stopping_ || !c.measured || c.done_at > plan_.end) return;
  last_done_at_ = std::max(last_done_at_, c.done_at);
  ++stats_.outcomes[static_cast<int>(c.outcome)];
  stats_.body_bytes += c.body_bytes;
  if (c.outcome == Outcome::kHttpStatus) ++stats_.statuses[c.status];
  if (c.outcome != Outcome::kOk) {
    failed_progress_.store(stats_.failed(), std::memory_order_relaxed);
    return;
  }
  stats_.latency.Record(static_cast<uint64_t>((c.done_at - c.sent_at).count()));
  if (c.streaming) {
    ++stats_.streams_ok;
    if (c.first_data_at) {
      stats_.ttft.Record(static_cast<uint64_t>((*c.first_data_at - c.sent_at).count()));
    }
  }
  ok_progress_.store(stats_.ok(), std::memory_order_relaxed);
}

void Worker::RecordConversation(bool measured) {
  if (stopping_ || !measured) return;
  ++stats_.conversations;
}

void Worker::ConnectionExited() {
  --live_connections_;
  if (live_connections_ > 0 || stopping_) return;
  ended_early_ = true;
  Stop();
}

void Worker::ArmWatchdog() {
  const Clock::duration tick =
      std::clamp(plan_.timeout / kWatchdogTicksPerTimeout, kMinWatchdogTick, kMaxWatchdogTick);
  watchdog_.expires_after(tick);
  watchdog_.async_wait([this](boost::system::error_code ec) {
    if (!ec && !stopping_) OnWatchdog();
  });
}

void Worker::OnWatchdog() {
  const Clock::time_point now = Clock::now();
  for (auto& slot : slots_) {
    if (slot->deadline > now) continue;
    slot->deadline = Clock::time_point::max();
    slot->timed_out = true;
    boost::system::error_code ignored;
    slot->socket.close(ignored);  // the pending read or write fails at once
  }
  ArmWatchdog();
}

void Worker::Stop() {
  if (stopping_) return;
  stopping_ = true;
  end_timer_.cancel();
  watchdog_.cancel();
  for (auto& slot : slots_) {
    boost::system::error_code ignored;
    slot->socket.close(ignored);
    slot->retry_timer.cancel();
  }
  if (pool_) pool_->Shutdown();  // open streams end at once (not recorded: stopping)
}

}  // namespace turnpike::loadgen
