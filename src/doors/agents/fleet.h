// The agent door's seam to the other replicas of a fleet (docs/adr/0002): what a turn asks of
// shared state beyond the store, so that a conversation continued on another replica never sees
// stale memory, one turn runs per conversation fleet-wide, a cancel reaches the replica running
// the turn, and a turn whose replica died ends failed. Embedded mode has none
// (AgentsShared::fleet is null) and keeps the in-process path only (state.h). The one
// implementation is over Redis (doors/agents/redis/redis_fleet.h), made by app/.
//
// Costs (hot-path rule 2, counted in turnpike_agent_fleet_round_trips_total{phase}): a turn makes
// one round trip before its first token (Claim, or Own outside a conversation, which is not
// awaited) and one at its end (Release, or Disown, not awaited). Renewals are one per replica
// per owner TTL / 3 whatever the number of turns; cancels (a deleted conversation's: Holder, then
// the cancel), bumps and the sweep are off the turn's path.
//
// Threads: every method from any thread (the awaitables resume on the caller's executor). The
// Inbox's functions run on the fleet's own thread: they must only take short locks and post.
// Errors: kUnavailable while the shared state cannot be reached (the turn is refused with 503:
// without the lock, one turn per conversation cannot be promised).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.h"

namespace turnpike::agents {

class Fleet {
 public:
  struct Claim {
    bool busy = false;     // another turn holds the conversation
    std::string version;   // the conversation's version (when not busy)
    bool current = false;  // the cached memory's version is `version`
  };
  // What other replicas send this one. Set once by Start.
  struct Inbox {
    // Cancel turn `response` of `tenant` if it runs here; answer replica `from` (SendStopped).
    std::function<void(std::string response, std::string tenant, std::string from)> cancel;
    // The owner's answer to a cancel sent from here: the stopped turn's response object.
    std::function<void(std::string response, std::string body)> stopped;
  };

  virtual ~Fleet() = default;

  // At start-up, before any worker runs.
  virtual void Start(Inbox inbox) = 0;
  virtual const std::string& replica() const = 0;

  // Before the turn's first token, one round trip: the conversation's lock for `response` (its
  // owner key with it), and whether memory cached at `cached_version` ("" none) is current.
  virtual boost::asio::awaitable<Result<Claim>> ClaimConversation(std::string conversation,
                                                                  std::string response,
                                                                  std::string tenant,
                                                                  std::string cached_version) = 0;
  // A turn outside a conversation: its owner key, submitted and not awaited.
  virtual void Own(std::string response, std::string tenant) = 0;
  // The turn's end, after its store write: the lock released, the owner key deleted and, when
  // `wrote`, a new version set; the new version ("" when not `wrote`).
  virtual boost::asio::awaitable<Result<std::string>> Release(std::string conversation,
                                                              std::string response, bool wrote) = 0;
  // A turn outside a conversation ended: its owner key deleted, not awaited.
  virtual void Disown(std::string response) = 0;
  // A write to a conversation outside a turn (its items, its deletion): a new version.
  virtual boost::asio::awaitable<Status> Bump(std::string conversation) = 0;

  // A cancel for a turn that does not run here: true when a replica runs it for `tenant` and
  // was told (it answers with SendStopped once the turn has stored its end).
  virtual boost::asio::awaitable<Result<bool>> SendCancel(std::string response,
                                                          std::string tenant) = 0;
  // The response id of the turn holding `conversation`'s lock, wherever it runs ("" when
  // none): one round trip, for a deleted conversation, which cancels its turn first.
  virtual boost::asio::awaitable<Result<std::string>> Holder(std::string conversation) = 0;
  virtual void SendStopped(const std::string& to, const std::string& response,
                           const std::string& body) = 0;

  // Periodic (RunFleetLoop): the running turns' locks and owner keys renewed.
  virtual boost::asio::awaitable<Status> Renew() = 0;
  // The sweep: whether this replica sweeps now (one replica at a time, for `ttl`); of
  // `responses`, the ones no replica owns.
  virtual boost::asio::awaitable<Result<bool>> TakeSweep(std::chrono::milliseconds ttl) = 0;
  virtual boost::asio::awaitable<Result<std::vector<std::string>>> Unowned(
      std::vector<std::string> responses) = 0;
};

// Cancels sent from this replica, waiting for their owner's answer (Fleet::Inbox::stopped).
// Thread-safe: one short lock per call.
class RemoteStops {
 public:
  using OnStopped = std::function<void(std::string body)>;
  // Returns a ticket for Forget.
  uint64_t Wait(const std::string& response, OnStopped on_stopped);
  void Forget(const std::string& response, uint64_t ticket);
  // Every waiter of `response` is called (on this thread) and forgotten.
  void Stopped(const std::string& response, const std::string& body);

 private:
  std::mutex mu_;
  uint64_t next_ = 1;
  std::unordered_multimap<std::string, std::pair<uint64_t, OnStopped>> waiting_;
};

}  // namespace turnpike::agents
