// FanOut and followers: live reads, a slow follower detached, a follower on another thread, a
// follower that leaves, the leader leaving while followers stay, errors, whole answers.
#include "model_call/fan_out.h"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <thread>

#include "providers/anthropic/anthropic_provider.h"
#include "providers/openai/openai_provider.h"
#include "scripted_call.h"

namespace turnpike::model_call {
namespace {

using testing::ClientSink;
using testing::Collected;
using testing::ReadAll;
using testing::ScriptedAnswer;
using testing::ScriptedCall;
namespace net = boost::asio;

constexpr size_t kRoomy = 1 << 20;

const providers::openai::OpenAiProvider kOpenAi;
const providers::anthropic::AnthropicProvider kAnthropic;

providers::EncoderOptions Options() {
  providers::EncoderOptions options;
  options.created = 1700000000;
  return options;
}

FollowerOptions OpenAiStream(size_t buffer_bytes = FollowerOptions::kDefaultBufferBytes) {
  FollowerOptions options;
  options.replay = {{"openai", true}, &kOpenAi, Options()};
  options.buffer_bytes = buffer_bytes;
  return options;
}

std::string Join(const std::vector<std::string>& frames) {
  std::string all;
  for (const std::string& frame : frames) all += frame;
  return all;
}

// The leader: a FanOut and its client's encoder sink, driven by a ScriptedCall.
struct Leader {
  explicit Leader(size_t leave_at = 0, size_t max_bytes = kRoomy)
      : live(LiveAnswer::Make(max_bytes)),
        fan_out(live),
        client(kOpenAi, Options(), &fan_out.recording(), leave_at),
        call({&fan_out, &client}) {}

  std::shared_ptr<LiveAnswer> live;
  FanOut fan_out;
  ClientSink client;
  ScriptedCall call;
};

TEST(FanOut, AFollowerJoiningMidAnswerGetsWhatWasRecordedThenEachReadLive) {
  ScriptedAnswer answer(9);
  const auto reads = answer.Reads(2);
  Leader leader;
  net::io_context io;
  leader.call.Start(testing::TranslatedStream());
  ASSERT_TRUE(leader.call.Read(reads[0]));
  ASSERT_TRUE(leader.call.Read(reads[1]));

  auto follower = leader.live->Join(OpenAiStream(), io.get_executor());
  Collected got;
  net::co_spawn(io, ReadAll(follower.get(), &got), net::detached);
  io.poll();
  EXPECT_EQ(got.joined(), Join(leader.client.sent));  // caught up with what was recorded
  const uint64_t woken_before = follower->wakeups();
  for (size_t i = 2; i < reads.size(); ++i) {
    ASSERT_TRUE(leader.call.Read(reads[i]));
    io.poll();
    EXPECT_EQ(got.joined(), Join(leader.client.sent)) << "after read " << i;
  }
  leader.call.End(nullptr);
  io.poll();
  EXPECT_TRUE(got.ended);
  EXPECT_FALSE(got.error.has_value());
  EXPECT_EQ(got.frames, leader.client.sent);  // the recorded frames exactly
  // One wake-up per read it waited for, plus the end.
  EXPECT_EQ(follower->wakeups() - woken_before, reads.size() - 2 + 1);
  EXPECT_FALSE(follower->detached());
}

TEST(FanOut, ASlowFollowerIsDetachedAndFinishesFromTheRecordingWithoutSlowingTheLeader) {
  ScriptedAnswer answer(40);
  const auto reads = answer.Reads(2);
  Leader leader;
  net::io_context io;
  leader.call.Start(testing::TranslatedStream());
  constexpr size_t kSmallBuffer = 128;
  auto slow = leader.live->Join(OpenAiStream(kSmallBuffer), io.get_executor());
  auto brisk = leader.live->Join(OpenAiStream(), io.get_executor());
  Collected slow_got, brisk_got;
  net::co_spawn(io, ReadAll(slow.get(), &slow_got), net::detached);
  net::co_spawn(io, ReadAll(brisk.get(), &brisk_got), net::detached);
  io.poll();  // both wait for the first read

  // The slow follower's loop does not run while the leader reads: its wake-up stays pending.
  for (size_t i = 0; i < reads.size() / 2; ++i) ASSERT_TRUE(leader.call.Read(reads[i]));
  EXPECT_EQ(leader.call.reads(), reads.size() / 2);  // the leader never waited
  EXPECT_TRUE(slow->detached());
  EXPECT_EQ(slow->wakeups(), 1u);  // coalesced: one pending post, however many reads
  EXPECT_FALSE(brisk->detached());

  // Now both run: the slow one takes at most about its buffer per read, catches up, and waits.
  io.poll();
  EXPECT_EQ(brisk_got.joined(), Join(leader.client.sent));
  EXPECT_EQ(slow_got.joined(), Join(leader.client.sent));
  // Each of its reads stopped at its buffer: a chunk is larger than 128 bytes, so one frame
  // per read (a frame is never split); the brisk one took many frames per read.
  EXPECT_EQ(slow_got.reads.load(), slow_got.frames.size());
  EXPECT_LT(brisk_got.reads.load(), brisk_got.frames.size());

  // Detached: it gets no wake-up per read any more, only the end.
  const uint64_t slow_woken = slow->wakeups(), brisk_woken = brisk->wakeups();
  const size_t slow_bytes = slow_got.bytes;
  for (size_t i = reads.size() / 2; i < reads.size(); ++i) {
    ASSERT_TRUE(leader.call.Read(reads[i]));
    io.poll();
  }
  EXPECT_EQ(slow->wakeups(), slow_woken);
  EXPECT_EQ(slow_got.bytes.load(), slow_bytes);
  EXPECT_EQ(brisk->wakeups() - brisk_woken, reads.size() - reads.size() / 2);
  leader.call.End(nullptr);
  io.poll();
  EXPECT_EQ(slow->wakeups(), slow_woken + 1);
  EXPECT_TRUE(slow_got.ended);
  EXPECT_EQ(slow_got.joined(), Join(leader.client.sent));  // the whole answer, all the same
  EXPECT_EQ(brisk_got.frames, leader.client.sent);
}

TEST(FanOut, AFollowerOnAnotherThreadGetsTheWholeAnswer) {
  ScriptedAnswer answer(300);
  const auto reads = answer.Reads(3);
  Leader leader;
  net::io_context other;
  auto guard = net::make_work_guard(other);
  auto follower = leader.live->Join(OpenAiStream(), other.get_executor());
  Collected got;
  net::co_spawn(other, ReadAll(follower.get(), &got), net::detached);
  std::thread thread([&other] { other.run(); });

  leader.call.Start(testing::TranslatedStream());
  for (size_t i = 0; i < reads.size(); ++i) {
    ASSERT_TRUE(leader.call.Read(reads[i]));
    if (i % 2 == 0) continue;  // every other read: let the follower catch up first
    const size_t sent = Join(leader.client.sent).size();
    for (size_t spins = 0; got.bytes.load() < sent && spins < 100'000'000; ++spins) {
      std::this_thread::yield();
    }
    ASSERT_EQ(got.bytes.load(), sent) << "the follower did not get read " << i;
  }
  leader.call.End(nullptr);
  guard.reset();
  thread.join();

  EXPECT_TRUE(got.ended);
  EXPECT_EQ(got.frames, leader.client.sent);
  EXPECT_GE(follower->wakeups(), 1u);
  EXPECT_LE(follower->wakeups(), reads.size() + 1);
}

TEST(FanOut, AFollowerThatLeavesIsRemovedAndTheOthersGoOn) {
  ScriptedAnswer answer(10);
  const auto reads = answer.Reads(2);
  Leader leader;
  net::io_context io;
  auto leaving = leader.live->Join(OpenAiStream(), io.get_executor());
  auto staying = leader.live->Join(OpenAiStream(), io.get_executor());
  EXPECT_EQ(leader.live->followers(), 2u);
  Collected left_got, stayed_got;
  net::co_spawn(io, ReadAll(leaving.get(), &left_got, 2), net::detached);
  net::co_spawn(io, ReadAll(staying.get(), &stayed_got), net::detached);
  leader.call.Start(testing::TranslatedStream());
  for (const auto& read : reads) {
    ASSERT_TRUE(leader.call.Read(read));
    io.poll();
  }
  EXPECT_EQ(leader.live->followers(), 1u);
  EXPECT_EQ(left_got.reads.load(), 2u);
  EXPECT_FALSE(left_got.ended);
  EXPECT_LE(leaving->wakeups(), 2u);  // none after it left
  leader.call.End(nullptr);
  io.poll();
  EXPECT_TRUE(stayed_got.ended);
  EXPECT_EQ(stayed_got.frames, leader.client.sent);
}

TEST(FanOut, WhenTheLeadersClientLeavesTheCallGoesOnForFollowersOnly) {
  ScriptedAnswer answer(12);
  const auto reads = answer.Reads(2);
  constexpr size_t kLeaderLeavesAt = 3;
  net::io_context io;
  {
    // No follower: the call stops when the leader's client leaves.
    Leader alone(kLeaderLeavesAt);
    alone.call.Start(testing::TranslatedStream());
    EXPECT_TRUE(alone.call.Read(reads[0]));
    EXPECT_TRUE(alone.call.Read(reads[1]));
    EXPECT_FALSE(alone.fan_out.serves_client());
    EXPECT_FALSE(alone.call.Read(reads[2]));
    alone.call.End(nullptr);
  }
  Leader leader(kLeaderLeavesAt);
  auto same_form = leader.live->Join(OpenAiStream(), io.get_executor());
  FollowerOptions anthropic;
  anthropic.replay = {{"anthropic", true}, &kAnthropic, Options()};
  auto other_form = leader.live->Join(anthropic, io.get_executor());
  Collected same_got, other_got;
  net::co_spawn(io, ReadAll(same_form.get(), &same_got), net::detached);
  net::co_spawn(io, ReadAll(other_form.get(), &other_got), net::detached);
  leader.call.Start(testing::TranslatedStream());
  EXPECT_TRUE(leader.fan_out.serves_client());
  for (const auto& read : reads) {
    ASSERT_TRUE(leader.call.Read(read)) << "followers keep the call going";
    io.poll();
  }
  leader.call.End(nullptr);
  io.poll();

  // The leader's client got the first two reads; the recorded frames stop there.
  const std::vector<std::string>& recorded = leader.client.sent;
  ASSERT_FALSE(recorded.empty());
  ASSERT_TRUE(same_got.ended);
  ASSERT_GT(same_got.frames.size(), recorded.size());
  EXPECT_TRUE(std::equal(recorded.begin(), recorded.end(), same_got.frames.begin()));
  // Then its own encoder, primed with the events those frames rendered, goes on seamlessly.
  EXPECT_EQ(same_got.joined(), answer.Encoded(kOpenAi, Options()));
  EXPECT_EQ(other_got.joined(), answer.Encoded(kAnthropic, Options()));
  EXPECT_FALSE(same_got.error.has_value());

  same_form->Leave();
  EXPECT_TRUE(leader.fan_out.serves_client());
  other_form->Leave();
  EXPECT_FALSE(leader.fan_out.serves_client());
}

TEST(FanOut, AnErrorMidAnswerReachesEveryFollowerInItsDialect) {
  ScriptedAnswer answer(10);
  const auto reads = answer.Reads(2);
  Leader leader;
  net::io_context io;
  auto openai = leader.live->Join(OpenAiStream(), io.get_executor());
  FollowerOptions anthropic_options;
  anthropic_options.replay = {{"anthropic", true}, &kAnthropic, Options()};
  auto anthropic = leader.live->Join(anthropic_options, io.get_executor());
  Collected openai_got, anthropic_got;
  net::co_spawn(io, ReadAll(openai.get(), &openai_got), net::detached);
  net::co_spawn(io, ReadAll(anthropic.get(), &anthropic_got), net::detached);
  leader.call.Start(testing::TranslatedStream());
  for (size_t i = 0; i < 3; ++i) ASSERT_TRUE(leader.call.Read(reads[i]));
  const Error cut{ErrorCode::kUpstreamTimeout, "the upstream went quiet", {}};
  leader.call.End(&cut);
  io.poll();

  for (const Collected* got : {&openai_got, &anthropic_got}) {
    ASSERT_TRUE(got->ended);
    ASSERT_TRUE(got->error.has_value());
    EXPECT_EQ(got->error->code, ErrorCode::kUpstreamTimeout);
  }
  EXPECT_EQ(openai_got.frames, leader.client.sent);  // recorded frames, then the same error
  EXPECT_NE(openai_got.frames.back().find("the upstream went quiet"), std::string::npos);
  EXPECT_NE(anthropic_got.frames.back().find("event: error"), std::string::npos);
  EXPECT_EQ(leader.live->recording().progress().state, RecordingState::kFailed);
}

TEST(FanOut, AFollowerPastTheCapEndsWithUnavailable) {
  ScriptedAnswer answer(200);
  const auto reads = answer.Reads(10);
  Leader leader(0, 4096);
  net::io_context io;
  auto follower = leader.live->Join(OpenAiStream(), io.get_executor());
  Collected got;
  net::co_spawn(io, ReadAll(follower.get(), &got), net::detached);
  leader.call.Start(testing::TranslatedStream());
  for (const auto& read : reads) {
    leader.call.Read(read);
    io.poll();
  }
  EXPECT_TRUE(leader.live->recording().progress().truncated);
  EXPECT_TRUE(got.ended);  // at the truncation, not at the answer's end
  ASSERT_TRUE(got.error.has_value());
  EXPECT_EQ(got.error->code, ErrorCode::kUnavailable);
  leader.call.End(nullptr);
}

TEST(FanOut, AWholeAnswerReachesFollowersRenderedOnce) {
  providers::Response response;
  response.id = "msg_1";
  response.model = "claude-test";
  response.text = "All at once";
  response.finish = providers::FinishReason::kStop;
  auto live = LiveAnswer::Make(kRoomy);
  FanOut fan_out(live);
  ScriptedCall call({&fan_out});
  net::io_context io;
  FollowerOptions whole;
  whole.replay = {{"openai", false}, &kOpenAi, Options()};
  auto follower = live->Join(whole, io.get_executor());
  Collected got;
  net::co_spawn(io, ReadAll(follower.get(), &got), net::detached);
  io.poll();
  AnswerStart start;
  start.dialect = "anthropic";
  call.Start(start);
  call.Whole({200, "application/json", {}, &response});
  io.poll();
  call.End(nullptr);
  io.poll();
  ASSERT_TRUE(got.ended);
  EXPECT_EQ(got.frames,
            (std::vector<std::string>{kOpenAi.RenderWholeResponse(response, Options())}));
}

TEST(FanOut, ACallDroppedWithoutItsEndEndsItsFollowers) {
  net::io_context io;
  auto live = LiveAnswer::Make(kRoomy);
  auto follower = live->Join(OpenAiStream(), io.get_executor());
  Collected got;
  net::co_spawn(io, ReadAll(follower.get(), &got), net::detached);
  {
    FanOut fan_out(live);
    fan_out.OnStart(testing::TranslatedStream());
    io.poll();
  }
  io.poll();
  ASSERT_TRUE(got.ended);
  ASSERT_TRUE(got.error.has_value());
  EXPECT_EQ(got.error->code, ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace turnpike::model_call
