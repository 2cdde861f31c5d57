// Helpers for the guard's tests: JSON escaping both ways, a guard with a fixed allowlist and
// context, and a driver that feeds a text in given pieces and checks what every output must be.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_escape.h"
#include "guard/output_guard.h"

namespace turnpike::guard::testing {

inline std::string Escape(std::string_view raw) {
  std::string out;
  AppendJsonEscaped(out, raw);
  return out;
}

inline void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Valid JSON string contents to raw UTF-8 (surrogate pairs combined).
inline std::string Unescape(std::string_view escaped) {
  std::string out;
  for (size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] != '\\') {
      out.push_back(escaped[i]);
      continue;
    }
    const char letter = escaped[++i];
    if (letter != 'u') {
      out.push_back(static_cast<char>(EscapedChar(letter)));
      continue;
    }
    uint32_t cp = std::stoul(std::string(escaped.substr(i + 1, 4)), nullptr, 16);
    i += 4;
    if (cp >= 0xD800 && cp < 0xDC00 && escaped.substr(i + 1, 2) == "\\u") {
      const uint32_t low = std::stoul(std::string(escaped.substr(i + 3, 4)), nullptr, 16);
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      i += 6;
    }
    AppendUtf8(out, cp);
  }
  return out;
}

// True when `chunk` splits no escape sequence (it starts and ends between sequences).
inline bool WholeEscapes(std::string_view chunk) {
  for (size_t i = 0; i < chunk.size(); ++i) {
    if (chunk[i] != '\\') continue;
    if (i + 1 >= chunk.size()) return false;
    if (chunk[i + 1] == 'u') {
      if (i + 6 > chunk.size()) return false;
      i += 5;
    } else {
      ++i;
    }
  }
  return true;
}

// True when `chunk` cuts no character: no escape split, no UTF-8 sequence cut at either end,
// no surrogate pair split.
inline bool WholeCharacters(std::string_view chunk) {
  if (chunk.empty()) return true;
  const auto first = static_cast<uint8_t>(chunk.front());
  const bool low_first = chunk.size() >= 4 && chunk.substr(0, 2) == "\\u" &&
                         (chunk[2] | 0x20) == 'd' && HexValue(chunk[3]) >= 0xC;
  return WholeEscapes(chunk) && (first & 0xC0) != 0x80 && !low_first &&
         CutCharacterTail(chunk, TextForm::kEscaped) == 0;
}

// An agent's config and a turn's context hosts, with the report the guards fill.
struct Turn {
  explicit Turn(std::initializer_list<std::string_view> allow = {"example.com"},
                std::initializer_list<std::string_view> context_texts = {},
                std::string_view marker = kDefaultMarker)
      : config(Allowlist(allow), marker) {
    for (std::string_view text : context_texts) context.AddHostsIn(text, TextForm::kRaw);
  }
  static HostSet Allowlist(std::initializer_list<std::string_view> allow) {
    HostSet hosts;
    for (std::string_view host : allow) hosts.Add(host);
    return hosts;
  }

  // The whole text through a raw guard.
  std::string Raw(std::string_view text) {
    OutputGuard guard(config, context, report, TextForm::kRaw);
    return std::string(guard.Whole(text));
  }
  // An escaped text as one delta, then Finish.
  std::string Stream(std::string_view escaped) {
    OutputGuard guard(config, context, report);
    std::string out(guard.Push(escaped));
    out += guard.Finish();
    return out;
  }

  GuardConfig config;
  HostSet context;
  GuardReport report;
};

// Feeds `escaped` cut at `cuts` (increasing offsets) and checks, at every step, that what was
// released is a prefix of `expected` and cuts no character; returns everything released.
inline std::string FeedCut(Turn& turn, std::string_view escaped, const std::vector<size_t>& cuts,
                           std::string_view expected) {
  OutputGuard guard(turn.config, turn.context, turn.report);
  std::string out;
  size_t from = 0;
  auto take = [&](std::string_view chunk) {
    EXPECT_TRUE(WholeCharacters(chunk)) << "chunk '" << chunk << "' of '" << escaped << "'";
    out += chunk;
    EXPECT_TRUE(std::string_view(expected).starts_with(out))
        << "released '" << out << "' is not a prefix of '" << expected << "'";
  };
  for (size_t cut : cuts) {
    take(guard.Push(escaped.substr(from, cut - from)));
    from = cut;
  }
  take(guard.Push(escaped.substr(from)));
  take(guard.Finish());
  EXPECT_EQ(guard.held(), 0u);
  return out;
}

}  // namespace turnpike::guard::testing
