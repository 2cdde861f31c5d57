// MemoryL2Store: an in-process L2Store for tests (two caches over one MemoryL2Store stand for
// two replicas over one Redis). Entries never expire here (the TTL is recorded, not applied:
// expiry is checked by the cache from the envelope anyway). Failures can be switched on to
// test the cache's behaviour when its L2 is down. Counts every call, the way a test counts
// Redis commands.
//
// Threads: thread-safe (one mutex); completes immediately on the caller's executor.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cache/l2_store.h"

namespace turnpike::cache {

class MemoryL2Store final : public L2Store {
 public:
  boost::asio::awaitable<Result<L2Read>> Get(std::string generation_key,
                                             std::string entry_key) override;
  boost::asio::awaitable<Status> Put(std::string entry_key, std::string entry,
                                     std::chrono::milliseconds ttl) override;
  boost::asio::awaitable<Result<uint64_t>> Bump(std::string generation_key) override;

  void set_failing(bool failing) { failing_ = failing; }
  uint64_t gets() const { return gets_; }
  uint64_t puts() const { return puts_; }
  uint64_t bumps() const { return bumps_; }
  size_t entries() const;

 private:
  std::atomic<bool> failing_{false};
  std::atomic<uint64_t> gets_{0};
  std::atomic<uint64_t> puts_{0};
  std::atomic<uint64_t> bumps_{0};
  mutable std::mutex mu_;
  std::unordered_map<std::string, uint64_t> generations_;  // mu_
  std::unordered_map<std::string, std::string> entries_;   // mu_
};

}  // namespace turnpike::cache
