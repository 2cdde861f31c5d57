// The Subscriber's book of channels and patterns (subscriber.h), without I/O: which handlers
// listen to which name, which SUBSCRIBE/UNSUBSCRIBE commands a change needs, and what a
// pushed reply means. The Subscriber writes the commands it queues and feeds it every reply.
//
// A name gets SUBSCRIBE when its first handler arrives and UNSUBSCRIBE when its last one goes.
// It is confirmed once the server has answered every command sent about it on this connection
// (replies come in the order commands were sent), and only then do its handlers' on_subscribed
// run. While disconnected nothing is queued; Connected() queues a SUBSCRIBE per live name.
//
// Not thread-safe: the Subscriber's thread only. Handlers and on_subscribed run inside OnPush
// and Add; they must not call back into the book (the Subscriber posts).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "redis/resp.h"

namespace turnpike::redis {

// (channel, payload): the channel the message was published to (for a pattern, the matching
// channel). Both are binary-safe and valid only during the call.
using MessageHandler = std::function<void(std::string_view channel, std::string_view payload)>;

// Identifies one handler; 0 is never one.
using SubscriptionId = uint64_t;

enum class NameKind : uint8_t { kChannel, kPattern };

class Subscriptions {
 public:
  // What a pushed reply was.
  enum class Push : uint8_t { kMessage, kConfirmation, kPong, kOther };

  void Add(NameKind kind, std::string name, SubscriptionId id, MessageHandler handler,
           std::function<void()> on_subscribed);
  // An unknown id is ignored. Destroys the handler.
  void Remove(SubscriptionId id);

  // A new connection: queues a SUBSCRIBE for every live name; returns how many (the first that
  // many confirmations to come answer them).
  size_t Connected();
  // The connection is gone: nothing in flight will be answered; queued commands are dropped.
  void Disconnected();

  // What a pushed reply is, without acting on it. Errors: an error reply or a reply that is
  // not a push (the connection should be dropped).
  static Result<Push> Classify(const Reply& reply);
  // Delivers a message to its handlers or books a confirmation; `push` is what Classify
  // answered for `reply`.
  void OnPush(const Reply& reply, Push push);

  // Queues a PING (its answer is a kPong push): the Subscriber's liveness check.
  void QueuePing() { AppendCommand(commands_, {"PING"}); }
  // The commands queued since the last call (RESP), to be written in order.
  std::string TakeCommands();
  bool has_commands() const { return !commands_.empty(); }
  // Drops every handler.
  void Clear();
  size_t names() const { return names_[0].size() + names_[1].size(); }

 private:
  struct Handler {
    SubscriptionId id;
    MessageHandler on_message;
    std::function<void()> on_subscribed;  // emptied once run
  };
  // Kept while it has handlers or while commands about it are in flight.
  struct Entry {
    std::vector<Handler> handlers;
    int in_flight = 0;  // SUBSCRIBE/UNSUBSCRIBE sent on this connection, not answered yet
  };
  struct Where {
    NameKind kind;
    std::string name;
  };

  std::unordered_map<std::string, Entry>& Names(NameKind kind) {
    return names_[static_cast<size_t>(kind)];
  }
  void Queue(std::string_view command, std::string_view name) {
    AppendCommand(commands_, {command, name});
  }
  void Confirmed(NameKind kind, const std::string& name);
  void Deliver(NameKind kind, const std::string& name, std::string_view channel,
               std::string_view payload);

  std::unordered_map<std::string, Entry> names_[2];  // by NameKind
  std::unordered_map<SubscriptionId, Where> where_;
  std::string commands_;
  bool up_ = false;
};

}  // namespace turnpike::redis
