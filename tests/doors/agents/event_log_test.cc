// EventLog (doors/agents/event_log.h): events by sequence number, waiting, the bound, and a
// stored log's replay.
#include "doors/agents/event_log.h"

#include <gtest/gtest.h>

#include <string>

namespace turnpike::agents {
namespace {

std::string Frame(int n) {
  return "event: e\ndata: {\"type\":\"e\",\"sequence_number\":" + std::to_string(n) + "}\n\n";
}

TEST(EventLogTest, ReadsTheEventsAfterASequenceNumber) {
  EventLog log;
  log.Append(Frame(0) + Frame(1));  // a flush may carry several events
  log.Append(Frame(2));
  EXPECT_EQ(log.After(-1).frames, Frame(0) + Frame(1) + Frame(2));
  const EventLog::Read read = log.After(0);
  EXPECT_EQ(read.frames, Frame(1) + Frame(2));
  EXPECT_EQ(read.last, 2);
  EXPECT_FALSE(read.finished);
  EXPECT_TRUE(log.After(2).frames.empty());
  EXPECT_EQ(log.After(2).last, 2);
  EXPECT_TRUE(log.After(7).frames.empty());
  log.Finish();
  EXPECT_TRUE(log.After(2).finished);
  EXPECT_EQ(log.Text(), Frame(0) + Frame(1) + Frame(2));
}

TEST(EventLogTest, AWaiterIsWokenOnceByTheNextEventOrTheEnd) {
  EventLog log;
  log.Append(Frame(0));
  int woken = 0;
  // Something is there to read already: no wait.
  EXPECT_FALSE(log.Wait(-1, [&woken] { ++woken; }));
  EXPECT_TRUE(log.Wait(0, [&woken] { ++woken; }));
  log.Append(Frame(1));
  EXPECT_EQ(woken, 1);
  log.Append(Frame(2));
  EXPECT_EQ(woken, 1);
  EXPECT_TRUE(log.Wait(2, [&woken] { ++woken; }));
  log.Finish();
  EXPECT_EQ(woken, 2);
  EXPECT_FALSE(log.Wait(2, [&woken] { ++woken; }));
}

TEST(EventLogTest, ALogPastItsBoundOverflowsAndKeepsNothing) {
  EventLog log;
  log.Append(Frame(0));
  log.Append(std::string(EventLog::kMaxBytes, 'x') + "\n\n");
  const EventLog::Read read = log.After(-1);
  EXPECT_TRUE(read.overflowed);
  EXPECT_TRUE(read.frames.empty());
  EXPECT_TRUE(log.Text().empty());
}

TEST(EventLogTest, AStoredLogReplaysAfterASequenceNumber) {
  const std::string text = Frame(0) + Frame(1) + Frame(2);
  EXPECT_EQ(EventLog::FramesAfter(text, -1), text);
  EXPECT_EQ(EventLog::FramesAfter(text, 0), Frame(1) + Frame(2));
  EXPECT_EQ(EventLog::FramesAfter(text, 1), Frame(2));
  EXPECT_TRUE(EventLog::FramesAfter(text, 2).empty());
  EXPECT_TRUE(EventLog::FramesAfter(text, 9).empty());
}

}  // namespace
}  // namespace turnpike::agents
