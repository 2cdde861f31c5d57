#include <gtest/gtest.h>

#include "config/config.h"
#include "config/listen.h"

namespace turnpike::config {
namespace {

using std::chrono::milliseconds;

TEST(ParseDurationTest, Units) {
  EXPECT_EQ(ParseDuration("k", "0"), milliseconds(0));
  EXPECT_EQ(ParseDuration("k", "250ms"), milliseconds(250));
  EXPECT_EQ(ParseDuration("k", "10s"), milliseconds(10'000));
  EXPECT_EQ(ParseDuration("k", "2m"), milliseconds(120'000));
  EXPECT_EQ(ParseDuration("k", "1h"), milliseconds(3'600'000));
  EXPECT_EQ(ParseDuration("k", "2d"), milliseconds(2LL * 86'400'000));
  EXPECT_EQ(ParseDuration("k", "0s"), milliseconds(0));
}

TEST(ParseDurationTest, RejectsAndNamesTheKey) {
  for (const char* bad :
       {"", "10", "-1s", "1.5s", "10 s", "s", "5w", "1.5d", "10ms ", "99999999999999999h"}) {
    try {
      ParseDuration("upstream.timeouts.idle", bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("upstream.timeouts.idle: ", 0), 0u) << e.what();
    }
  }
}

TEST(ParseSizeTest, Units) {
  EXPECT_EQ(ParseSize("k", "0"), 0u);
  EXPECT_EQ(ParseSize("k", "1024"), 1024u);
  EXPECT_EQ(ParseSize("k", "16KiB"), 16u * 1024);
  EXPECT_EQ(ParseSize("k", "4MiB"), 4u * 1024 * 1024);
  EXPECT_EQ(ParseSize("k", "1GiB"), size_t{1} << 30);
}

TEST(ParseSizeTest, RejectsAndNamesTheKey) {
  for (const char* bad : {"", "16KB", "16k", "-1", "1.5MiB", "MiB", "99999999999999999999GiB"}) {
    try {
      ParseSize("server.max_body_bytes", bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("server.max_body_bytes: ", 0), 0u) << e.what();
    }
  }
}

TEST(ParseListenTest, Forms) {
  ListenAddress a = ParseListen("k", "127.0.0.1:8080");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 8080);
  a = ParseListen("k", "[::1]:0");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 0);
  a = ParseListen("k", "localhost:65535");
  EXPECT_EQ(a.host, "localhost");
  EXPECT_EQ(a.port, 65535);
  EXPECT_EQ(FormatListen("::1", 8080), "[::1]:8080");
  EXPECT_EQ(FormatListen("0.0.0.0", 80), "0.0.0.0:80");
}

TEST(ParseListenTest, Rejects) {
  for (const char* bad : {"8080", ":8080", "::1:8080", "[::1]8080", "[::1", "h:", "h:x", "h:65536",
                          "h:-1", "[]:80"}) {
    EXPECT_THROW(ParseListen("server.listen", bad), ConfigError) << bad;
  }
}

}  // namespace
}  // namespace turnpike::config
