#include "cache/memory_l2_store.h"

namespace turnpike::cache {
namespace {

Error Down() { return Error{ErrorCode::kUnavailable, "L2 store unavailable", ""}; }

}  // namespace

boost::asio::awaitable<Result<L2Read>> MemoryL2Store::Get(std::string generation_key,
                                                          std::string entry_key) {
  ++gets_;
  if (failing_) co_return Down();
  L2Read read;
  {
    std::lock_guard lock(mu_);
    if (auto it = generations_.find(generation_key); it != generations_.end()) {
      read.generation = it->second;
    }
    if (auto it = entries_.find(entry_key); it != entries_.end()) read.entry = it->second;
  }
  co_return read;
}

boost::asio::awaitable<Status> MemoryL2Store::Put(std::string entry_key, std::string entry,
                                                  std::chrono::milliseconds ttl) {
  ++puts_;
  if (failing_) co_return Down();
  {
    std::lock_guard lock(mu_);
    entries_[std::move(entry_key)] = std::move(entry);
  }
  co_return Ok{};
}

boost::asio::awaitable<Result<uint64_t>> MemoryL2Store::Bump(std::string generation_key) {
  ++bumps_;
  if (failing_) co_return Down();
  uint64_t generation = 0;
  {
    std::lock_guard lock(mu_);
    generation = ++generations_[std::move(generation_key)];
  }
  co_return generation;
}

size_t MemoryL2Store::entries() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace turnpike::cache
