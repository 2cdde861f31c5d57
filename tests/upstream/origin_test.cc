#include "upstream/origin.h"

#include <gtest/gtest.h>

namespace turnpike::upstream {
namespace {

TEST(OriginTest, ParsesSchemesPortsAndPaths) {
  Result<Origin> a = ParseOrigin("http://127.0.0.1:9000/v1", true);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->tls);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9000);
  EXPECT_EQ(a->base_path, "/v1");
  EXPECT_EQ(a->key, "http://127.0.0.1:9000");
  EXPECT_EQ(a->host_header, "127.0.0.1:9000");

  Result<Origin> b = ParseOrigin("https://api.example.com/v1/", false);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->tls);
  EXPECT_FALSE(b->tls_verify);
  EXPECT_EQ(b->port, 443);
  EXPECT_EQ(b->base_path, "/v1");
  EXPECT_EQ(b->host_header, "api.example.com");

  Result<Origin> c = ParseOrigin("http://localhost", true);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->port, 80);
  EXPECT_EQ(c->base_path, "");
}

TEST(OriginTest, RejectsWhatIsNotAnHttpBaseUrl) {
  for (const char* bad : {"ftp://example.com", "example.com/v1", "http://", "", "http://h:0/"}) {
    Result<Origin> r = ParseOrigin(bad, true);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("invalid base URL"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace turnpike::upstream
