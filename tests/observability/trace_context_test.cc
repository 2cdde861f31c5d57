#include "observability/trace_context.h"

#include <gtest/gtest.h>

#include <string>

namespace turnpike::observability {
namespace {

constexpr std::string_view kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceParent, ParsesAValidHeader) {
  const std::optional<TraceParent> p = ParseTraceParent(kValid);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->trace_hi, 0x4bf92f3577b34da6ULL);
  EXPECT_EQ(p->trace_lo, 0xa3ce929d0e0e4736ULL);
  EXPECT_EQ(p->span_id, 0x00f067aa0ba902b7ULL);
  EXPECT_TRUE(p->sampled);
  const std::optional<TraceParent> unsampled =
      ParseTraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(unsampled.has_value());
  EXPECT_FALSE(unsampled->sampled);
}

TEST(TraceParent, RejectsWhatTheSpecSaysToIgnore) {
  const char* bad[] = {
      "",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",       // no flags
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",    // uppercase
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // version ff
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",    // zero trace id
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",    // zero span id
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",  // v00 with more
      "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // bad separator
      "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",    // not hex
      "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // bad version
  };
  for (const char* value : bad) EXPECT_FALSE(ParseTraceParent(value).has_value()) << value;
}

TEST(TraceParent, ReadsAHigherVersionByItsKnownPrefix) {
  EXPECT_TRUE(ParseTraceParent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future")
                  .has_value());
  EXPECT_FALSE(ParseTraceParent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01future")
                   .has_value());
}

TEST(TraceParent, RendersWhatItParses) {
  char out[kTraceParentSize];
  RenderTraceParent(0x4bf92f3577b34da6ULL, 0xa3ce929d0e0e4736ULL, 0x00f067aa0ba902b7ULL, true, out);
  EXPECT_EQ(std::string_view(out, sizeof out), kValid);
  RenderTraceParent(1, 2, 3, false, out);
  EXPECT_EQ(std::string_view(out, sizeof out),
            "00-00000000000000010000000000000002-0000000000000003-00");
}

TEST(Sampling, RatioOneRecordsEverythingAndZeroNothing) {
  TraceParent unsampled{1, 2, 3, false};
  EXPECT_TRUE(ShouldSample(1.0, std::nullopt, ~0ULL));
  EXPECT_TRUE(ShouldSample(1.0, unsampled, 0));
  EXPECT_FALSE(ShouldSample(0.0, std::nullopt, 0));
  EXPECT_FALSE(ShouldSample(0.0, TraceParent{1, 2, 3, true}, 0));
}

TEST(Sampling, BelowOneTheParentDecides) {
  EXPECT_FALSE(ShouldSample(0.5, TraceParent{1, 2, 3, false}, 0));
  EXPECT_TRUE(ShouldSample(0.5, TraceParent{1, 2, 3, true}, ~0ULL));
}

TEST(Sampling, ANewTraceBelowOneIsDecidedByItsId) {
  EXPECT_TRUE(ShouldSample(0.5, std::nullopt, 0x7000000000000000ULL));
  EXPECT_FALSE(ShouldSample(0.5, std::nullopt, 0x8000000000000001ULL));
  int sampled = 0;
  constexpr int kTraces = 10'000;
  for (int i = 0; i < kTraces; ++i)
    sampled += ShouldSample(0.25, std::nullopt, NewSpanId()) ? 1 : 0;
  EXPECT_GT(sampled, kTraces / 5);  // 2500 expected; a fair generator stays far from the bounds
  EXPECT_LT(sampled, kTraces * 3 / 10);
}

TEST(TraceState, AttemptsGetTheirOwnSpansAndTraceparents) {
  TraceState t;
  t.on = true;
  t.sampled = true;
  t.trace_hi = 0xaa;
  t.trace_lo = 0xbb;
  const auto now = std::chrono::steady_clock::now();
  const std::string first(t.BeginAttempt(now));
  ASSERT_NE(t.recording(), nullptr);
  t.EndAttempt(now, 503);
  EXPECT_EQ(t.recording(), nullptr);
  const std::string second(t.BeginAttempt(now));
  ASSERT_EQ(t.attempt_count, 2);
  EXPECT_EQ(t.attempts[0].status, 503);
  EXPECT_NE(t.attempts[0].span_id, t.attempts[1].span_id);
  const std::optional<TraceParent> p = ParseTraceParent(second);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->trace_lo, 0xbbULL);
  EXPECT_EQ(p->span_id, t.attempts[1].span_id);
  EXPECT_TRUE(p->sampled);
  EXPECT_NE(first, second);
  for (size_t i = 2; i < kMaxAttemptSpans + 2; ++i) t.BeginAttempt(now);
  EXPECT_EQ(t.attempt_count, kMaxAttemptSpans);  // later attempts propagate, not recorded
  EXPECT_EQ(t.recording(), nullptr);
}

}  // namespace
}  // namespace turnpike::observability
