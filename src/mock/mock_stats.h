// The mock provider's counters (GET /mock/stats, POST /mock/stats/reset).
//
// Ownership: a StatsBoard is owned by the MockService and outlives the server; it holds one
// WorkerStats per worker. Thread safety: the single-writer rule. Only worker i calls Add() on
// worker i's WorkerStats (relaxed atomics, no lock on the request path); any thread may call
// StatsBoard::Read() and Reset(), which take a mutex among themselves only. Reset() never
// writes a worker's counters: it records a baseline that Read() subtracts, so a count that
// races with a reset lands on either side of it.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mock/fault.h"

namespace turnpike::mock {

enum class Counter {
  kRequests,           // chat, message and embeddings requests (other routes are not counted)
  kStreamsStarted,     // stream response heads sent
  kStreamsCompleted,   // streams that sent everything (through `data: [DONE]` / message_stop)
  kClientDisconnects,  // streams whose client went away before the end (injected resets and
                       // close-without-done count as faults, not here)
  kCompletionTokens,   // tokens (or tool-call fragments) sent, stream or not
};

inline constexpr size_t kCounterCount = 5;
// Counters first, then one slot per FaultKind (kNone's slot stays zero).
inline constexpr size_t kStatSlots = kCounterCount + kFaultKindCount;

using StatsValues = std::array<uint64_t, kStatSlots>;

// What the server saw of HTTP/2 since start (not reset by Reset()): connections, request
// streams, and streams the client reset (RST_STREAM).
struct Http2Seen {
  uint64_t connections = 0;
  uint64_t streams = 0;
  uint64_t resets = 0;
};

// One worker's counters, on its own cache line.
class alignas(64) WorkerStats {
 public:
  void Add(Counter counter, uint64_t n = 1) { Bump(static_cast<size_t>(counter), n); }
  void AddFault(FaultKind kind) { Bump(kCounterCount + static_cast<size_t>(kind), 1); }
  StatsValues Load() const;

 private:
  void Bump(size_t slot, uint64_t n) {
    slots_[slot].store(slots_[slot].load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::array<std::atomic<uint64_t>, kStatSlots> slots_{};
};

class StatsBoard {
 public:
  explicit StatsBoard(int workers);

  // Worker `index`'s counters; index in [0, workers). The reference is stable.
  WorkerStats& worker(int index) { return *workers_[static_cast<size_t>(index)]; }

  // Sum over all workers since the last Reset().
  StatsValues Read() const;
  void Reset();

  // Where Http2() reads from; set once before the server runs (the mock command does; a
  // board without it reports no "http2" member).
  void set_http2_source(std::function<Http2Seen()> source) { http2_source_ = std::move(source); }
  const std::function<Http2Seen()>& http2_source() const { return http2_source_; }

  // {"requests":..,"streams_started":..,...,"faults_injected":{"500":..,...}} and, with a
  // source, "http2":{"connections":..,"streams":..,"resets":..}.
  static std::string RenderJson(const StatsValues& values, const Http2Seen* http2 = nullptr);

 private:
  StatsValues Sum() const;

  std::vector<std::unique_ptr<WorkerStats>> workers_;  // constant after construction
  std::function<Http2Seen()> http2_source_;            // constant once the server runs
  mutable std::mutex mu_;
  StatsValues baseline_{};  // guarded by mu_
};

}  // namespace turnpike::mock
