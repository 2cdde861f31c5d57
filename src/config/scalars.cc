// ParseDuration, ParseSize and SubstituteEnv from config.h.
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "config/config.h"

namespace turnpike::config {
namespace {

struct Unit {
  std::string_view suffix;
  uint64_t multiplier;
};

// Longest suffixes first so that "ms" is not read as "m" followed by garbage.
constexpr Unit kDurationUnits[] = {
    {"ms", 1}, {"s", 1'000}, {"m", 60'000}, {"h", 3'600'000}, {"d", 86'400'000}};
constexpr Unit kSizeUnits[] = {
    {"KiB", uint64_t{1} << 10}, {"MiB", uint64_t{1} << 20}, {"GiB", uint64_t{1} << 30}, {"", 1}};

[[noreturn]] void Fail(const std::string& key, const std::string& problem) {
  throw ConfigError(key + ": " + problem);
}

// Splits "16KiB" into 16 and "KiB". Returns false if there is no leading number.
bool SplitNumber(std::string_view text, uint64_t& number, std::string_view& suffix) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, number);
  if (ec != std::errc() || ptr == text.data()) return false;
  suffix = std::string_view(ptr, static_cast<size_t>(end - ptr));
  return true;
}

bool IsEnvNameChar(char c, bool first) {
  return c == '_' || std::isalpha(static_cast<unsigned char>(c)) ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

}  // namespace

Millis ParseDuration(const std::string& key, const std::string& text) {
  const std::string usage = "invalid duration \"" + text +
                            "\" (use a whole number with ms, s, m or h, e.g. \"250ms\", \"10s\")";
  if (text == "0") return Millis(0);
  uint64_t number = 0;
  std::string_view suffix;
  if (!SplitNumber(text, number, suffix)) Fail(key, usage);
  for (const Unit& unit : kDurationUnits) {
    if (suffix != unit.suffix) continue;
    constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
    if (number > kMax / unit.multiplier) Fail(key, "duration \"" + text + "\" is too large");
    return Millis(static_cast<int64_t>(number * unit.multiplier));
  }
  Fail(key, usage);
}

size_t ParseSize(const std::string& key, const std::string& text) {
  uint64_t number = 0;
  std::string_view suffix;
  if (!SplitNumber(text, number, suffix)) {
    Fail(key, "invalid size \"" + text + "\" (use bytes, or a number with KiB, MiB or GiB)");
  }
  for (const Unit& unit : kSizeUnits) {
    if (suffix != unit.suffix) continue;
    if (number > std::numeric_limits<size_t>::max() / unit.multiplier) {
      Fail(key, "size \"" + text + "\" is too large");
    }
    return static_cast<size_t>(number * unit.multiplier);
  }
  Fail(key, "invalid size \"" + text + "\" (use bytes, or a number with KiB, MiB or GiB)");
}

std::string SubstituteEnv(const std::string& key, const std::string& text) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t open = text.find("${", pos);
    if (open == std::string::npos) break;
    out.append(text, pos, open - pos);
    const size_t close = text.find('}', open + 2);
    if (close == std::string::npos) Fail(key, "unterminated \"${\" in \"" + text + "\"");

    const std::string_view body(text.data() + open + 2, close - open - 2);
    const size_t sep = body.find(":-");
    const std::string name(body.substr(0, sep));
    bool valid = !name.empty();
    for (size_t i = 0; i < name.size() && valid; ++i) valid = IsEnvNameChar(name[i], i == 0);
    if (!valid) Fail(key, "invalid environment variable name in \"${" + std::string(body) + "}\"");

    // getenv is safe here: config loads at start-up, before any thread changes the env.
    const char* value = std::getenv(name.c_str());
    if (sep != std::string_view::npos) {
      // Shell semantics: the default applies when the variable is unset or empty.
      if (value != nullptr && *value != '\0') {
        out += value;
      } else {
        out += body.substr(sep + 2);
      }
    } else {
      if (value == nullptr) {
        Fail(key, "environment variable " + name + " is not set (use ${" + name +
                      ":-default} to give a default)");
      }
      out += value;
    }
    pos = close + 1;
  }
  out.append(text, pos);
  return out;
}

}  // namespace turnpike::config
