// The turn-event hook: what other features subscribe to to learn that an agent turn ended
// (the console's webhook outbox will be one), and its first subscriber, the per-status counters
// of /metrics (turnpike_agent_turns_total{status}).
//
// An event is published once per admitted turn, at its end, whatever ended it; its status is
// the response's as the client was given it: completed, incomplete (the output cap), failed
// (the model call), cancelled (the cancel route, a deleted conversation, a foreground client
// that left). A turn refused before admission (a bad field, a budget, a busy conversation) is
// no turn and publishes nothing. The event's cost and usage are what the turn was charged (the
// governance filter's settle).
//
// Subscribers are registered at start-up, before any worker runs (Subscribe is not
// thread-safe against Publish), and are called in registration order on the turn's worker,
// synchronously, after the turn was stored and accounted. A subscriber MUST NOT block, do I/O
// or wait on a lock held across either: it runs on a worker thread on the request path. One
// that has slow work to do copies what it needs from the event (its views are valid for the
// call only) into its own queue and returns. Subscribers must be callable from any worker
// concurrently.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace turnpike::observability {
class PrometheusWriter;
}

namespace turnpike::agents {

enum class TurnStatus : uint8_t { kCompleted, kIncomplete, kFailed, kCancelled };
inline constexpr size_t kTurnStatuses = 4;
std::string_view TurnStatusName(TurnStatus status);  // "completed", ...

struct TurnUsage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t reasoning_tokens = 0;
};

// Views into the turn's state: valid during the call only.
struct TurnEvent {
  std::string_view tenant;
  std::string_view agent_id;
  int64_t agent_version = 0;
  std::string_view response_id;
  std::string_view conversation_id;  // empty: the turn was not in a conversation
  TurnStatus status = TurnStatus::kCompleted;
  TurnUsage usage;
  int64_t cost_micros = 0;       // what the turn was charged
  const Error* error = nullptr;  // a failed turn's error (may be null for another status)
};

using TurnSubscriber = std::function<void(const TurnEvent&)>;

// The subscribers of one feature instance (AgentsShared's).
class TurnEvents {
 public:
  // At start-up only.
  void Subscribe(TurnSubscriber subscriber) { subscribers_.push_back(std::move(subscriber)); }
  // The turn's worker, once per turn.
  void Publish(const TurnEvent& event) const {
    for (const TurnSubscriber& subscriber : subscribers_) subscriber(event);
  }

 private:
  std::vector<TurnSubscriber> subscribers_;
};

// The first subscriber: turns ended per status, for /metrics. Thread-safe (one relaxed atomic
// add per turn).
class TurnCounters {
 public:
  void Count(const TurnEvent& event) {
    counts_[static_cast<size_t>(event.status)].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t count(TurnStatus status) const {
    return counts_[static_cast<size_t>(status)].load(std::memory_order_relaxed);
  }
  // turnpike_agent_turns_total{status}: one series per status, always present.
  void RenderMetrics(observability::PrometheusWriter& w) const;

 private:
  std::array<std::atomic<uint64_t>, kTurnStatuses> counts_{};
};

}  // namespace turnpike::agents
