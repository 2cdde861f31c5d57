// The webhook events' text: a turn's `data` (TurnEventData, its cost as AppendUsd writes it) and
// the event body around it (EventBody).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "common/error.h"
#include "doors/webhooks/feature.h"
#include "doors/webhooks/outbox.h"

namespace turnpike::webhooks {
namespace {

// What cost_usd was before AppendUsd: the quotient as std::to_string writes it.
std::string ByDouble(int64_t micros) { return std::to_string(static_cast<double>(micros) / 1e6); }

TEST(AppendUsd, WritesWhatToStringOfTheQuotientWrites) {
  std::string out;
  uint64_t x = 88172645463325252ull;  // xorshift: values of every size below 10^12
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const int64_t bound = int64_t{1} << (i % 40);
    int64_t micros = static_cast<int64_t>(x % static_cast<uint64_t>(bound));
    if (i % 3 == 0) micros = -micros;
    out.clear();
    AppendUsd(out, micros);
    ASSERT_EQ(out, ByDouble(micros)) << micros;
  }
  for (const int64_t micros :
       {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{999'999}, int64_t{1'000'000}, int64_t{1'500},
        int64_t{999'999'999'999}, int64_t{-999'999'999'999}, int64_t{1'000'000'000'000},
        std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    out = "x";
    AppendUsd(out, micros);
    EXPECT_EQ(out, "x" + ByDouble(micros)) << micros;
  }
}

TEST(TurnEventData, NamesEveryMember) {
  agents::TurnEvent event;
  event.tenant = "t\"1";
  event.agent_id = "agt_1";
  event.agent_version = 3;
  event.response_id = "resp_1";
  event.conversation_id = "conv_1";
  event.status = agents::TurnStatus::kFailed;
  event.usage.input_tokens = 12;
  event.usage.output_tokens = -1;
  event.cost_micros = 1'500;
  const Error error{ErrorCode::kUpstreamBadResponse, "bad \"gateway\"", ""};
  event.error = &error;
  EXPECT_EQ(TurnEventData(event),
            R"({"response_id":"resp_1","tenant":"t\"1","agent_id":"agt_1","agent_version":3,)"
            R"("conversation_id":"conv_1","status":"failed","usage":{"input_tokens":12,)"
            R"("output_tokens":-1},"cost_usd":0.001500,"error":{"message":"bad \"gateway\""}})");
  event.conversation_id = {};
  event.error = nullptr;
  event.status = agents::TurnStatus::kCompleted;
  EXPECT_EQ(TurnEventData(event),
            R"({"response_id":"resp_1","tenant":"t\"1","agent_id":"agt_1","agent_version":3,)"
            R"("status":"completed","usage":{"input_tokens":12,"output_tokens":-1},)"
            R"("cost_usd":0.001500})");
}

TEST(EventBody, StampsEachSecondInRfc3339) {
  EXPECT_EQ(EventBody("response.completed", 0, "{}"),
            R"({"type":"response.completed","timestamp":"1970-01-01T00:00:00Z","data":{}})");
  // The same second twice, then another: the thread's last stamp is reused only for its second.
  EXPECT_EQ(EventBody("a", 1'796'557'452, "1"),
            R"({"type":"a","timestamp":"2026-12-06T11:44:12Z","data":1})");
  EXPECT_EQ(EventBody("b\"", 1'796'557'452, "2"),
            R"({"type":"b\"","timestamp":"2026-12-06T11:44:12Z","data":2})");
  EXPECT_EQ(EventBody("c", 1'796'557'453, "3"),
            R"({"type":"c","timestamp":"2026-12-06T11:44:13Z","data":3})");
}

}  // namespace
}  // namespace turnpike::webhooks
