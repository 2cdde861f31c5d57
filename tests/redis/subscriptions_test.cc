// The Subscriber's book (subscriptions.h) without a server: which commands a change queues,
// when on_subscribed runs, and what a pushed reply delivers. Replies are built by hand in the
// shape Redis sends them (RESP2 arrays).
#include "redis/subscriptions.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace turnpike::redis {
namespace {

Reply Push(std::initializer_list<std::string> items) {
  Reply r;
  r.type = Reply::Type::kArray;
  for (const std::string& text : items) {
    Reply item;
    item.type = Reply::Type::kString;
    item.text = text;
    r.items.push_back(std::move(item));
  }
  return r;
}

// What the Subscriber does with each reply it reads.
Result<Subscriptions::Push> Feed(Subscriptions& book, const Reply& reply) {
  Result<Subscriptions::Push> push = Subscriptions::Classify(reply);
  if (push.ok()) book.OnPush(reply, *push);
  return push;
}

std::string Commands(std::initializer_list<std::initializer_list<std::string_view>> commands) {
  std::string out;
  for (auto args : commands) AppendCommand(out, args);
  return out;
}

struct Seen {
  std::vector<std::string> messages;  // "channel=payload"
  int subscribed = 0;
};

MessageHandler Record(Seen& seen) {
  return [&seen](std::string_view channel, std::string_view payload) {
    seen.messages.push_back(std::string(channel) + "=" + std::string(payload));
  };
}
std::function<void()> Count(Seen& seen) {
  return [&seen] { ++seen.subscribed; };
}

TEST(SubscriptionsTest, NothingIsQueuedWhileDisconnectedAndEveryNameOnConnect) {
  Subscriptions book;
  Seen a;
  book.Add(NameKind::kChannel, "c1", 1, Record(a), Count(a));
  book.Add(NameKind::kChannel, "c1", 2, Record(a), Count(a));
  book.Add(NameKind::kPattern, "p:*", 3, Record(a), Count(a));
  EXPECT_FALSE(book.has_commands());

  EXPECT_EQ(book.Connected(), 2u) << "one SUBSCRIBE per name, not per handler";
  const std::string sent = book.TakeCommands();
  EXPECT_NE(sent.find(Commands({{"SUBSCRIBE", "c1"}})), std::string::npos);
  EXPECT_NE(sent.find(Commands({{"PSUBSCRIBE", "p:*"}})), std::string::npos);
  EXPECT_EQ(a.subscribed, 0);
  ASSERT_TRUE(Feed(book, Push({"subscribe", "c1", "1"})).ok());
  EXPECT_EQ(a.subscribed, 2);
  ASSERT_TRUE(Feed(book, Push({"psubscribe", "p:*", "2"})).ok());
  EXPECT_EQ(a.subscribed, 3);
}

TEST(SubscriptionsTest, FirstHandlerSubscribesLastOneUnsubscribes) {
  Subscriptions book;
  book.Connected();
  Seen a, b;
  book.Add(NameKind::kChannel, "c", 1, Record(a), Count(a));
  EXPECT_EQ(book.TakeCommands(), Commands({{"SUBSCRIBE", "c"}}));
  book.Add(NameKind::kChannel, "c", 2, Record(b), Count(b));
  EXPECT_FALSE(book.has_commands()) << "the second handler shares the subscription";
  EXPECT_EQ(Feed(book, Push({"subscribe", "c", "1"})).value(), Subscriptions::Push::kConfirmation);
  EXPECT_EQ(a.subscribed + b.subscribed, 2);

  Seen c;
  book.Add(NameKind::kChannel, "c", 3, Record(c), Count(c));
  EXPECT_EQ(c.subscribed, 1) << "already confirmed: on_subscribed runs at once";

  EXPECT_EQ(Feed(book, Push({"message", "c", "hi"})).value(), Subscriptions::Push::kMessage);
  EXPECT_EQ(a.messages, std::vector<std::string>{"c=hi"});
  EXPECT_EQ(b.messages, std::vector<std::string>{"c=hi"});

  book.Remove(1);
  book.Remove(2);
  EXPECT_FALSE(book.has_commands());
  book.Remove(3);
  EXPECT_EQ(book.TakeCommands(), Commands({{"UNSUBSCRIBE", "c"}}));
  ASSERT_TRUE(Feed(book, Push({"unsubscribe", "c", "0"})).ok());
  EXPECT_EQ(book.names(), 0u);
  book.Remove(3);  // already gone: ignored
  EXPECT_FALSE(book.has_commands());
}

TEST(SubscriptionsTest, ResubscribingWhileAnUnsubscribeIsInFlightWaitsForBothAnswers) {
  Subscriptions book;
  book.Connected();
  Seen a, b;
  book.Add(NameKind::kChannel, "c", 1, Record(a), Count(a));
  ASSERT_TRUE(Feed(book, Push({"subscribe", "c", "1"})).ok());
  book.Remove(1);
  book.Add(NameKind::kChannel, "c", 2, Record(b), Count(b));
  EXPECT_EQ(book.TakeCommands(),
            Commands({{"SUBSCRIBE", "c"}, {"UNSUBSCRIBE", "c"}, {"SUBSCRIBE", "c"}}));
  ASSERT_TRUE(Feed(book, Push({"unsubscribe", "c", "0"})).ok());
  EXPECT_EQ(b.subscribed, 0) << "the server is not subscribed again yet";
  ASSERT_TRUE(Feed(book, Push({"subscribe", "c", "1"})).ok());
  EXPECT_EQ(b.subscribed, 1);
  EXPECT_EQ(book.names(), 1u);
}

TEST(SubscriptionsTest, ALostConnectionForgetsWhatWasInFlightAndKeepsTheHandlers) {
  Subscriptions book;
  book.Connected();
  Seen a, b;
  book.Add(NameKind::kChannel, "kept", 1, Record(a), Count(a));
  book.Add(NameKind::kChannel, "dropped", 2, Record(b), Count(b));
  book.Remove(2);
  book.Disconnected();
  EXPECT_FALSE(book.has_commands()) << "queued commands go with the connection";
  EXPECT_EQ(book.names(), 1u);
  EXPECT_EQ(book.Connected(), 1u);
  EXPECT_EQ(book.TakeCommands(), Commands({{"SUBSCRIBE", "kept"}}));
  ASSERT_TRUE(Feed(book, Push({"subscribe", "kept", "1"})).ok());
  EXPECT_EQ(a.subscribed, 1);
}

TEST(SubscriptionsTest, PatternMessagesCarryTheMatchingChannelAndPayloadsAreBinary) {
  Subscriptions book;
  book.Connected();
  Seen a;
  book.Add(NameKind::kPattern, "cancel:*", 1, Record(a), Count(a));
  const std::string binary("a\r\nb\0c", 6);
  EXPECT_EQ(Feed(book, Push({"pmessage", "cancel:*", "cancel:r1", binary})).value(),
            Subscriptions::Push::kMessage);
  ASSERT_EQ(a.messages.size(), 1u);
  EXPECT_EQ(a.messages[0], "cancel:r1=" + binary);
  ASSERT_TRUE(Feed(book, Push({"message", "cancel:*", "x"})).ok());
  EXPECT_EQ(a.messages.size(), 1u) << "a channel message does not reach a pattern's handlers";
}

TEST(SubscriptionsTest, PongIsKnownAndAnErrorOrAScalarIsRefused) {
  Subscriptions book;
  EXPECT_EQ(Feed(book, Push({"pong", ""})).value(), Subscriptions::Push::kPong);
  EXPECT_EQ(Feed(book, Push({"smessage", "c", "x"})).value(), Subscriptions::Push::kOther);
  Reply error;
  error.type = Reply::Type::kError;
  error.text = "NOPERM no permissions";
  EXPECT_FALSE(Feed(book, error).ok());
  Reply scalar;
  scalar.type = Reply::Type::kInteger;
  EXPECT_FALSE(Feed(book, scalar).ok());
}

}  // namespace
}  // namespace turnpike::redis
