// Hosts: their normal form, the allowlist's domain rule, and the hosts a context names.
#include "guard/hosts.h"

#include <gtest/gtest.h>

namespace turnpike::guard {
namespace {

TEST(Hosts, NormalFormIsLowercaseWithoutTrailingDots) {
  EXPECT_EQ(NormalizeHost("Docs.Example.COM."), "docs.example.com");
  EXPECT_EQ(NormalizeHost("example.com.."), "example.com");
  EXPECT_EQ(NormalizeHost("ÉX.com"), "\xC3\x89x.com");  // non-ASCII compared as it is
}

TEST(Hosts, WellFormedHostsAreLabelsOrAnIpv6Literal) {
  EXPECT_TRUE(IsWellFormedHost("example.com"));
  EXPECT_TRUE(IsWellFormedHost("my_host-1.example.com"));
  EXPECT_TRUE(IsWellFormedHost("localhost"));
  EXPECT_TRUE(IsWellFormedHost("[::1]"));
  EXPECT_TRUE(IsWellFormedHost("日本.jp"));
  EXPECT_FALSE(IsWellFormedHost(""));
  EXPECT_FALSE(IsWellFormedHost("a..com"));
  EXPECT_FALSE(IsWellFormedHost("evil%2ecom"));
  EXPECT_FALSE(IsWellFormedHost("ok.com)evil"));
  EXPECT_FALSE(IsWellFormedHost("[::1"));
}

TEST(Hosts, DottedHostsHaveALetterTopLabel) {
  EXPECT_TRUE(IsDottedHost("example.com"));
  EXPECT_TRUE(IsDottedHost("docs.example.co"));
  EXPECT_TRUE(IsDottedHost("例え.テスト"));
  EXPECT_FALSE(IsDottedHost("localhost"));
  EXPECT_FALSE(IsDottedHost("v1.2.3"));
  EXPECT_FALSE(IsDottedHost("e.g"));
  EXPECT_FALSE(IsDottedHost("1.2.3.4"));
  EXPECT_FALSE(IsDottedHost(".com"));
}

TEST(HostSet, AnAllowlistEntryAllowsItsDomainAndSubdomains) {
  HostSet allow;
  allow.Add("Example.com");
  allow.Add("*.wild.org");
  allow.Add("ported.net:8443");
  EXPECT_TRUE(allow.ContainsDomainOf("example.com"));
  EXPECT_TRUE(allow.ContainsDomainOf("docs.example.com"));
  EXPECT_TRUE(allow.ContainsDomainOf("a.b.example.com"));
  EXPECT_FALSE(allow.ContainsDomainOf("badexample.com"));
  EXPECT_FALSE(allow.ContainsDomainOf("example.com.evil.com"));
  EXPECT_FALSE(allow.ContainsDomainOf("com"));
  EXPECT_TRUE(allow.ContainsDomainOf("wild.org"));
  EXPECT_TRUE(allow.ContainsDomainOf("x.wild.org"));
  EXPECT_TRUE(allow.ContainsDomainOf("ported.net"));
  EXPECT_FALSE(allow.Contains("docs.example.com"));  // exact only
  EXPECT_EQ(allow.size(), 3u);
}

TEST(HostSet, AContextNamesUrlHostsAndBareDottedHosts) {
  HostSet hosts;
  hosts.AddHostsIn(
      "Read https://Docs.Rust-Lang.org/book, ask http://intranet:8080/x or bob@mail.example.net; "
      "wikipedia.org has it (see www.gnu.org.) v1.2.3 e.g. [::1] http://[fe80::1]/ "
      "[guide](guide.example.io/start)",
      TextForm::kRaw);
  for (const char* host : {"docs.rust-lang.org", "intranet", "mail.example.net", "wikipedia.org",
                           "www.gnu.org", "[fe80::1]", "guide.example.io"}) {
    EXPECT_TRUE(hosts.Contains(host)) << host;
  }
  EXPECT_FALSE(hosts.Contains("rust-lang.org"));
  EXPECT_FALSE(hosts.Contains("v1.2.3"));
  EXPECT_FALSE(hosts.Contains("e.g"));
}

TEST(HostSet, AnEscapedContextIsReadUnescaped) {
  HostSet hosts;
  hosts.AddHostsIn(R"({"url":"https:\/\/api.example.org\/v1","name":"caf\u00e9.fr"})",
                   TextForm::kEscaped);
  EXPECT_TRUE(hosts.Contains("api.example.org"));
  EXPECT_TRUE(hosts.Contains("caf\xC3\xA9.fr"));
}

}  // namespace
}  // namespace turnpike::guard
