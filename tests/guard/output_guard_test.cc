// OutputGuard: every URL form, what is allowed, what is replaced and reported, in both text
// forms; how little is held back while streaming.
#include "guard/output_guard.h"

#include <gtest/gtest.h>

#include "guard_test_util.h"

namespace turnpike::guard {
namespace {

using testing::Escape;
using testing::Turn;
using testing::Unescape;

constexpr std::string_view kX = "[link removed]";

// `text` guarded as a whole raw text and as one escaped delta gives `expected` both ways.
void Expect(Turn& turn, std::string_view text, std::string_view expected) {
  EXPECT_EQ(turn.Raw(text), expected) << "raw: " << text;
  EXPECT_EQ(Unescape(turn.Stream(Escape(text))), expected) << "escaped: " << text;
}

std::string X(std::string_view before, std::string_view after = "") {
  return std::string(before) + std::string(kX) + std::string(after);
}

TEST(OutputGuard, SchemeUrlsWhoseHostIsNotAllowedAreReplaced) {
  Turn turn;
  Expect(turn, "see https://evil.com/x now", X("see ", " now"));
  Expect(turn, "see http://evil.com", X("see "));
  Expect(turn, "HTTPS://EVIL.COM/A?b=c#d", X(""));
  Expect(turn, "Https://evil.com", X(""));
  Expect(turn, "xhttps://evil.com y", X("x", " y"));  // inside a word too
  Expect(turn, "https:evil.com/a", X(""));            // browsers add the slashes
  Expect(turn, "https:///evil.com", X(""));
  Expect(turn, "https:\\\\evil.com", X(""));
  Expect(turn, "https://evil.com:8080/x", X(""));
  Expect(turn, "http://[::1]:8080/", X(""));
  EXPECT_EQ(turn.report.replacements, 20);
}

TEST(OutputGuard, AllowedHostsPassUntouched) {
  Turn turn({"example.com", "[::1]"});
  for (std::string_view text :
       {"see https://example.com/x now", "https://docs.example.com/a/b?c=d#e",
        "HTTPS://Docs.Example.COM/", "https://example.com:8443/x", "https://example.com./x",
        "https://evil.com@example.com/", "www.example.com/path", "http://[::1]:8080/"}) {
    Expect(turn, text, text);
  }
  EXPECT_EQ(turn.report.replacements, 0);
}

TEST(OutputGuard, TheHostIsAfterTheUserinfo) {
  Turn turn;
  Expect(turn, "https://user@evil.com/", X(""));
  Expect(turn, "https://example.com@evil.com/", X(""));
  Expect(turn, "https://example.com:pw@evil.com/", X(""));
  Expect(turn, "https://example.com!x@evil.com/", X(""));
  Expect(turn, "www.example.com@evil.com", X(""));
  ASSERT_EQ(turn.report.hosts.size(), 1u);
  EXPECT_EQ(turn.report.hosts[0], "evil.com");
}

TEST(OutputGuard, SubdomainsOfAnEntryAreAllowedLookAlikesAreNot) {
  Turn turn;
  Expect(turn, "https://docs.example.com/x", "https://docs.example.com/x");
  Expect(turn, "https://badexample.com", X(""));
  Expect(turn, "https://example.com.evil.com/", X(""));
  Expect(turn, "https://evil.com\\.example.com/", X(""));  // a browser goes to evil.com
  Expect(turn, "https://example.com%2eevil.com/", X(""));  // never allowed with a '%'
}

TEST(OutputGuard, HostsNamedInTheContextAreAllowedExactly) {
  Turn turn({"example.com"}, {"Tool output: see https://docs.rust-lang.org/book", "ask wiki.org"});
  Expect(turn, "per https://docs.rust-lang.org/std/x", "per https://docs.rust-lang.org/std/x");
  Expect(turn, "per https://wiki.org/a", "per https://wiki.org/a");
  Expect(turn, "per https://rust-lang.org/", X("per "));
  Expect(turn, "per https://en.wiki.org/a", X("per "));
}

TEST(OutputGuard, WwwHostsAtAWordBoundary) {
  Turn turn;
  Expect(turn, "go to www.evil.com today", X("go to ", " today"));
  Expect(turn, "(WWW.evil.com)", X("(", ")"));
  Expect(turn, "awww.evil.com", "awww.evil.com");
  Expect(turn, "www. is a prefix", "www. is a prefix");
  Expect(turn, "a www or two", "a www or two");
}

TEST(OutputGuard, MarkdownLinkTargets) {
  Turn turn;
  Expect(turn, "[docs](https://evil.com/docs)", X("[docs](", ")"));
  Expect(turn, "[docs](evil.com/docs)", X("[docs](", ")"));
  Expect(turn, "[docs](evil.com)", X("[docs](", ")"));
  Expect(turn, "[docs]( <evil.com/a b>)", X("[docs]( <", " b>)"));
  Expect(turn, "[a](//evil.com/x)", X("[a](", ")"));
  Expect(turn, "[a](\\\\evil.com)", X("[a](", ")"));
  Expect(turn, "![img](https://evil.com/p.png?q=secret)", X("![img](", ")"));
  Expect(turn, "[w](https://evil.com/a_(b)) end", X("[w](", ") end"));
  Expect(turn, "[ok](docs.example.com/intro)", "[ok](docs.example.com/intro)");
  // Relative targets and other schemes have no host.
  for (std::string_view text : {"[d](/docs) [t](#top) [i](docs/intro) [r](./intro.md)",
                                "[m](mailto:bob@evil.com) [p](evil.com:8080/x)", "[1](v1.2)"}) {
    Expect(turn, text, text);
  }
}

TEST(OutputGuard, TrailingPunctuationIsTheSentences) {
  Turn turn;
  Expect(turn, "see https://a.com/x.", X("see ", "."));
  Expect(turn, "(https://a.com)", X("(", ")"));
  Expect(turn, "https://a.com/x, and https://a.com/y; ok", X("", ", and ") + X("", "; ok"));
  Expect(turn, "https://a.com/x?!", X("", "?!"));
  Expect(turn, "https://a.com/x.html...", X("", "..."));
  Expect(turn, "\"https://a.com/x\"", X("\"", "\""));
  Expect(turn, "<https://a.com/x>", X("<", ">"));
  Expect(turn, "https://a.com/x.\nnext", X("", ".\nnext"));
  Expect(turn, "_https://example.com_ **https://example.com** ~~https://evil.com~~",
         X("_https://example.com_ **https://example.com** ~~", "~~"));
}

TEST(OutputGuard, BareWordsAndPlainSchemesAreNotUrls) {
  Turn turn;
  for (std::string_view text :
       {"example.com and evil.com are domains", "the http: and https:// prefixes",
        "mail bob@evil.com", "ftp://evil.com", "http://", "see evil.com/path"}) {
    Expect(turn, text, text);
  }
  EXPECT_EQ(turn.report.replacements, 0);
}

TEST(OutputGuard, AUrlInAKeptUrlIsJudgedOnItsOwn) {
  Turn turn;
  Expect(turn, "https://example.com/?u=https://evil.com/x", X("https://example.com/?u="));
}

TEST(OutputGuard, AnUnreadablyLongAuthorityIsReplaced) {
  Turn turn;
  const std::string longest = "https://example.com:" + std::string(300, '1') + "@evil.com/x";
  Expect(turn, longest, X(""));
  EXPECT_EQ(turn.report.replacements, 2);
  EXPECT_TRUE(turn.report.hosts.empty());  // no host was read
}

TEST(OutputGuard, EscapesAroundAndInsideUrls) {
  Turn turn;
  EXPECT_EQ(turn.Stream(R"(see https:\/\/evil.com\/x ok)"), X("see ", " ok"));
  EXPECT_EQ(turn.Stream(R"(\u0068ttps://evil.com)"), X(""));
  EXPECT_EQ(turn.Stream(R"(\"https://evil.com\")"), X("\\\"", "\\\""));
  EXPECT_EQ(turn.Stream(R"(\nwww.evil.com)"), X("\\n"));
  EXPECT_EQ(turn.Stream(R"(a\u0020www.evil.com)"), X("a\\u0020"));
  EXPECT_EQ(turn.Stream(R"(a\u00e9www.evil.com)"), R"(a\u00e9www.evil.com)");  // not a boundary
  EXPECT_EQ(turn.Stream(R"(https://\u00e9vil.com/)"), X(""));
  EXPECT_EQ(turn.Stream(R"([a]\u0028evil.com))"), X("[a]\\u0028", ")"));
  EXPECT_EQ(turn.Stream(R"(https://docs.example.com\/a)"), R"(https://docs.example.com\/a)");
  EXPECT_EQ(turn.report.hosts.back(), "\xC3\xA9vil.com");
}

TEST(OutputGuard, TheMarkerIsConfigurableAndEscapedInEscapedText) {
  Turn turn({"example.com"}, {}, "<\"removed\">");
  EXPECT_EQ(turn.Raw("a https://evil.com b"), "a <\"removed\"> b");
  EXPECT_EQ(turn.Stream("a https://evil.com b"), R"(a <\"removed\"> b)");
}

TEST(OutputGuard, TheReportCountsEveryReplacementAndKeepsDistinctHosts) {
  Turn turn;
  turn.Raw("https://a.com https://b.com https://a.com https://B.com.");
  EXPECT_EQ(turn.report.replacements, 4);
  EXPECT_EQ(turn.report.hosts, (std::vector<std::string>{"a.com", "b.com"}));
  std::string many;
  for (int i = 0; i < 40; ++i) many += "https://h" + std::to_string(i) + ".com ";
  turn.Raw(many);
  EXPECT_EQ(turn.report.replacements, 44);
  EXPECT_EQ(turn.report.hosts.size(), GuardReport::kMaxHosts);
}

TEST(OutputGuard, ARelativeTargetThatLooksLikeAHostIsTakenForOne) {
  Turn turn;
  Expect(turn, "[r](intro.md)", X("[r](", ")"));  // `.md` is a top-level domain
}

TEST(OutputGuard, EachTextStartsAtAWordBoundary) {
  Turn turn;
  OutputGuard guard(turn.config, turn.context, turn.report);
  EXPECT_EQ(guard.Push("a"), "a");
  EXPECT_EQ(guard.Finish(), "");
  EXPECT_EQ(std::string(guard.Push("www.evil.com ")), X("", " "));
}

TEST(OutputGuard, WhatIsHeldStaysBounded) {
  Turn turn;
  OutputGuard guard(turn.config, turn.context, turn.report);
  size_t most = 0;
  std::string out;
  const std::string text = "https://" + std::string(1000, 'a') + "/x" + std::string(1000, '.') +
                           "y" + std::string(1000, '!') + " end";
  for (const char c : text) {
    out += guard.Push(std::string_view(&c, 1));
    most = std::max(most, guard.held());
  }
  out += guard.Finish();
  EXPECT_LE(most, kMaxUrlUnits + 2);
  // Punctuation runs longer than the cap go with the URL a cap's worth at a time.
  EXPECT_EQ(out, X("", std::string(1000 % (kMaxUrlUnits + 1), '!') + " end"));
  EXPECT_EQ(out, turn.Raw(text));
}

// Holding back: only what could still become a URL.
struct Step {
  std::string_view delta;
  std::string_view released;
  size_t held;
};

void ExpectSteps(std::initializer_list<Step> steps, std::string_view finish = "") {
  Turn turn;
  OutputGuard guard(turn.config, turn.context, turn.report);
  for (const Step& step : steps) {
    EXPECT_EQ(guard.Push(step.delta), step.released) << "after '" << step.delta << "'";
    EXPECT_EQ(guard.held(), step.held) << "after '" << step.delta << "'";
  }
  EXPECT_EQ(guard.Finish(), finish);
  EXPECT_EQ(guard.held(), 0u);
}

TEST(OutputGuardHold, PlainTextIsReleasedAtOnceAsTheSameBytes) {
  Turn turn;
  OutputGuard guard(turn.config, turn.context, turn.report);
  const std::string_view delta = "hello world. Fine: (yes)\\n\\\"q\\\" caf\\u00e9 ";
  const std::string_view out = guard.Push(delta);
  EXPECT_EQ(out.data(), delta.data());  // no copy
  EXPECT_EQ(out.size(), delta.size());
}

TEST(OutputGuardHold, HoldsOnlyATailThatCouldStillBecomeAUrl) {
  ExpectSteps({{"hello ", "hello ", 0}, {"world", "world", 0}});
  ExpectSteps({{"see ww", "see ", 2}, {"w.evil.com", "", 12}, {" x", X("", " x"), 0}});
  ExpectSteps({{"see htt", "see ", 3}, {"p is", "http is", 0}});
  ExpectSteps({{"with", "wit", 1}, {" you", "h you", 0}});
  ExpectSteps({{"follow", "follow", 0}, {"ww.x", "ww.x", 0}});
  ExpectSteps({{"[docs](", "[docs](", 0}, {"evil.co", "", 7}, {"m) x", X("", ") x"), 0}});
  ExpectSteps(
      {{"see https://exa", "see ", 11}, {"mple.com/docs ok", "https://example.com/docs ok", 0}});
  ExpectSteps({{"see https://evil.com", "see ", 16}, {"/path and", X("", " and"), 0}});
  ExpectSteps({{"https://evil.com/x.", kX, 1}, {" next", ". next", 0}});
  ExpectSteps({{"ab\\", "ab", 1}, {"nc", "\\nc", 0}});
  ExpectSteps({{"x \\u00", "x ", 4}, {"e9y", "\\u00e9y", 0}});
  ExpectSteps(
      {{"caf\xC3", "caf", 1}, {"\xA9 \xE6\x97", "\xC3\xA9 ", 2}, {"\xA5", "\xE6\x97\xA5", 0}});
  ExpectSteps({{"a \\ud83d", "a ", 6}, {"\\ude00 b", "\\ud83d\\ude00 b", 0}});
  ExpectSteps({{"a \\ud83d\\", "a ", 7}, {"ude00", "\\ud83d\\ude00", 0}});
  ExpectSteps({{"\\\\ud83d", "\\\\ud83d", 0}});  // an escaped backslash, then text
  ExpectSteps({{"end htt", "end ", 3}}, "htt");
  ExpectSteps({{"go https://evil.co", "go ", 15}}, kX);
}

}  // namespace
}  // namespace turnpike::guard
