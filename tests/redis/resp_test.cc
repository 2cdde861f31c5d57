// The RESP codec: commands as arrays of bulk strings; every reply type, whole and split at
// every byte (a reply read in pieces is incomplete until its last byte); malformed input.
#include "redis/resp.h"

#include <gtest/gtest.h>

#include <string>

namespace turnpike::redis {
namespace {

TEST(RespTest, EncodesACommandAsAnArrayOfBulkStrings) {
  std::string out;
  AppendCommand(out, {"EVALSHA", "abc", "1", ""});
  EXPECT_EQ(out, "*4\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n$1\r\n1\r\n$0\r\n\r\n");
  std::string binary;
  AppendCommand(binary, std::vector<std::string>{std::string("a\r\nb", 4)});
  EXPECT_EQ(binary, std::string("*1\r\n$4\r\na\r\nb\r\n", 14));
}

struct Case {
  const char* name;
  std::string wire;
};

TEST(RespTest, ParsesEveryTypeWholeAndSplitAtEveryByte) {
  const std::string lease = "*6\r\n:800\r\n:1600\r\n:-1\r\n:2\r\n:0\r\n$7\r\n123-abc\r\n";
  const Case cases[] = {{"status", "+OK\r\n"},
                        {"error", "-NOSCRIPT No matching script\r\n"},
                        {"integer", ":-42\r\n"},
                        {"bulk", "$5\r\nhe\r\no\r\n"},
                        {"nil bulk", "$-1\r\n"},
                        {"nested", "*2\r\n*1\r\n:1\r\n$-1\r\n"},
                        {"resp3 map", "%1\r\n+k\r\n#t\r\n"},
                        {"resp3 null and double", "*2\r\n_\r\n,1.5\r\n"},
                        {"lease reply", lease}};
  for (const Case& c : cases) {
    for (size_t cut = 0; cut < c.wire.size(); ++cut) {
      Reply reply;
      size_t consumed = 0;
      EXPECT_EQ(ParseReply(std::string_view(c.wire).substr(0, cut), reply, consumed),
                ParseStatus::kIncomplete)
          << c.name << " cut at " << cut;
    }
    Reply reply;
    size_t consumed = 0;
    ASSERT_EQ(ParseReply(c.wire + "+next\r\n", reply, consumed), ParseStatus::kDone) << c.name;
    EXPECT_EQ(consumed, c.wire.size()) << c.name;
  }

  Reply reply;
  size_t consumed = 0;
  ASSERT_EQ(ParseReply(lease, reply, consumed), ParseStatus::kDone);
  ASSERT_EQ(reply.type, Reply::Type::kArray);
  ASSERT_EQ(reply.items.size(), 6u);
  EXPECT_EQ(reply.items[0].integer, 800);
  EXPECT_EQ(reply.items[2].integer, -1);
  EXPECT_EQ(reply.items[5].text, "123-abc");

  ASSERT_EQ(ParseReply("-ERR wrong\r\n", reply, consumed), ParseStatus::kDone);
  EXPECT_TRUE(reply.is_error());
  EXPECT_EQ(reply.text, "ERR wrong");
  ASSERT_EQ(ParseReply("$5\r\nhe\r\no\r\n", reply, consumed), ParseStatus::kDone);
  EXPECT_EQ(reply.text, "he\r\no");
  ASSERT_EQ(ParseReply("%1\r\n+k\r\n#t\r\n", reply, consumed), ParseStatus::kDone);
  ASSERT_EQ(reply.items.size(), 2u);
  EXPECT_EQ(reply.items[1].integer, 1);
}

TEST(RespTest, RefusesWhatIsNotResp) {
  const char* bad[] = {"?x\r\n", ":12a\r\n", "$-2\r\n", "$3\r\nabcd\r\n", "*-5\r\n", "#x\r\n"};
  for (const char* wire : bad) {
    Reply reply;
    size_t consumed = 0;
    EXPECT_EQ(ParseReply(wire, reply, consumed), ParseStatus::kMalformed) << wire;
  }
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "*1\r\n";
  deep += ":1\r\n";
  Reply reply;
  size_t consumed = 0;
  EXPECT_EQ(ParseReply(deep, reply, consumed), ParseStatus::kMalformed);
}

}  // namespace
}  // namespace turnpike::redis
