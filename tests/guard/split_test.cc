// The same text gives the same output however it is cut into deltas: at every byte boundary
// (inside UTF-8 sequences and escape sequences too), into single bytes, three ways, and at
// random over generated texts; what is released is never retracted and never splits an escape;
// the escaped and raw forms agree; the fast path decides as the scanner alone would.
#include <gtest/gtest.h>

#include <random>

#include "guard/output_guard.h"
#include "guard/url_scan.h"
#include "guard_test_util.h"

namespace turnpike::guard {
namespace {

using testing::Escape;
using testing::FeedCut;
using testing::Turn;
using testing::Unescape;

std::vector<std::string> Texts() {
  std::vector<std::string> texts;
  for (const char* raw : {
           "see https://evil.com/x now",
           "see https://example.com/docs, then www.evil.com.",
           "caf\u00e9 https://\u00e9vil.com/\u00e9 \u65e5\u672c https://docs.example.com/\u65e5 "
           "\U0001F600 www.example.com",
           "[docs](https://evil.com/a_(b)) and [ok](docs.example.com) and [rel](/x)",
           "with htt and ww and https: and www and http",
           "\"quoted https://evil.com/\\path\" and tab\there\nnewline",
           "https://user:pw@evil.com:8080/x?y=1#z.",
           "(https://a.com) <https://example.com/x> ![i](//evil.com/p.png)",
           "\U0001F600https://evil.com\U0001F600 \u65e5\u672cwww.evil.com \u65e5 www.evil.com",
           "https://example.com/?u=https://evil.com/x...",
       }) {
    texts.push_back(Escape(raw));
  }
  // Escapes a JSON encoder may choose: \/ and \u for ASCII, non-ASCII and surrogate pairs.
  texts.push_back(R"(see https:\/\/evil.com\/x and \u0068ttps://evil.com \"q\" caf\u00e9 )"
                  R"(\ud83d\ude00 www.evil.com)");
  texts.push_back(
      R"(\n\nwww.example.com\/a \u65e5\u672c https://\u00e9vil.com [a]\u0028evil.com))");
  return texts;
}

// Every replacement is counted once however the text is cut.
void ExpectSameOutput(Turn& turn, const std::string& text, const std::vector<size_t>& cuts,
                      const std::string& expected, int64_t replacements) {
  const int64_t before = turn.report.replacements;
  EXPECT_EQ(FeedCut(turn, text, cuts, expected), expected) << text;
  EXPECT_EQ(turn.report.replacements - before, replacements) << text;
}

int64_t Replacements(Turn& turn, const std::string& text, std::string* out) {
  const int64_t before = turn.report.replacements;
  *out = turn.Stream(text);
  return turn.report.replacements - before;
}

TEST(Split, AtEveryByteBoundary) {
  for (const std::string& text : Texts()) {
    Turn turn;
    std::string expected;
    const int64_t replaced = Replacements(turn, text, &expected);
    for (size_t i = 0; i <= text.size(); ++i) {
      ExpectSameOutput(turn, text, {i}, expected, replaced);
    }
  }
}

TEST(Split, IntoSingleBytes) {
  for (const std::string& text : Texts()) {
    Turn turn;
    std::string expected;
    const int64_t replaced = Replacements(turn, text, &expected);
    std::vector<size_t> cuts;
    for (size_t i = 1; i < text.size(); ++i) cuts.push_back(i);
    ExpectSameOutput(turn, text, cuts, expected, replaced);
  }
}

TEST(Split, ThreeWays) {
  for (const std::string& text : Texts()) {
    Turn turn;
    std::string expected;
    const int64_t replaced = Replacements(turn, text, &expected);
    for (size_t i = 0; i <= text.size(); ++i) {
      for (size_t j = i; j <= text.size(); ++j) {
        ExpectSameOutput(turn, text, {i, j}, expected, replaced);
      }
    }
  }
}

TEST(Split, EscapedAndRawFormsAgree) {
  for (const std::string& text : Texts()) {
    Turn turn;
    EXPECT_EQ(Unescape(turn.Stream(text)), turn.Raw(Unescape(text))) << text;
  }
}

// The guard's judgement, for a scanner run on its own.
class Judge final : public HostJudge {
 public:
  explicit Judge(const Turn& turn) : turn_(turn) {}
  bool Keep(std::string_view host, bool readable) override {
    return readable && IsWellFormedHost(host) &&
           (turn_.config.allowlist().ContainsDomainOf(host) || turn_.context.Contains(host));
  }

 private:
  const Turn& turn_;
};

std::string ScannerAlone(const Turn& turn, std::string_view text, TextForm form) {
  Judge judge(turn);
  UrlScanner scanner(form, judge, turn.config.marker(form));
  ScanOutput out;
  scanner.Run(text, 0, true, std::string_view::npos, out);
  return std::string(out.view());
}

TEST(Split, TheFastPathDecidesAsTheScannerAlone) {
  for (const std::string& text : Texts()) {
    Turn turn;
    EXPECT_EQ(turn.Stream(text), ScannerAlone(turn, text, TextForm::kEscaped)) << text;
    const std::string raw = Unescape(text);
    EXPECT_EQ(turn.Raw(raw), ScannerAlone(turn, raw, TextForm::kRaw)) << raw;
  }
}

// Texts made of the pieces URLs, escapes and text are made of.
std::string RandomText(std::mt19937& rng) {
  static const std::vector<std::string_view> kPieces = {
      "https://",
      "http://",
      "HTTP:",
      "www.",
      "WwW.",
      "evil.com",
      "example.com",
      "docs.",
      "](",
      "[",
      "]",
      "(",
      ")",
      ".",
      ",",
      " ",
      "\\n",
      "\\\"",
      "\\\\",
      "\\/",
      "\\u0068",
      "\\u00e9",
      "\\ud83d\\ude00",
      "\xC3\xA9",
      "\xE6\x97\xA5",
      "\xF0\x9F\x98\x80",
      "@",
      ":",
      "/",
      "h",
      "w",
      "t",
      "p",
      "s",
      "8080",
      "x",
      "<",
      ">",
      "_",
      "~",
      "?",
      "#",
      "!",
      "//",
      "a.b",
      "\\\\\\\\",
      "%2e",
      "[::1]",
  };
  std::uniform_int_distribution<size_t> count(1, 24);
  std::uniform_int_distribution<size_t> pick(0, kPieces.size() - 1);
  std::string text;
  for (size_t n = count(rng); n > 0; --n) text += kPieces[pick(rng)];
  return text;
}

TEST(Split, RandomTextsAndCuts) {
  constexpr int kTexts = 3000;
  constexpr int kCutSets = 12;
  std::mt19937 rng(24);
  for (int t = 0; t < kTexts; ++t) {
    const std::string text = RandomText(rng);
    Turn turn({"example.com"}, {"context names docs.example.org"});
    std::string expected;
    const int64_t replaced = Replacements(turn, text, &expected);
    ASSERT_EQ(expected, ScannerAlone(turn, text, TextForm::kEscaped)) << text;
    ASSERT_EQ(Unescape(expected), turn.Raw(Unescape(text))) << text;
    std::vector<size_t> bytes;
    for (size_t i = 1; i < text.size(); ++i) bytes.push_back(i);
    ExpectSameOutput(turn, text, bytes, expected, replaced);
    std::uniform_int_distribution<size_t> at(0, text.size());
    for (int c = 0; c < kCutSets; ++c) {
      std::vector<size_t> cuts = {at(rng), at(rng), at(rng)};
      std::sort(cuts.begin(), cuts.end());
      ExpectSameOutput(turn, text, cuts, expected, replaced);
    }
    if (::testing::Test::HasFailure()) break;
  }
}

}  // namespace
}  // namespace turnpike::guard
