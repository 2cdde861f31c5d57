#include "doors/search/qdrant/json_write.h"

#include <charconv>
#include <cmath>

#include "common/json_escape.h"

namespace turnpike::search::qdrant {

void AppendInt(std::string& out, int64_t value) {
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, end);
}

void AppendDouble(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, end);
}

void AppendFloat(std::string& out, float value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, end);
}

void AppendValue(std::string& out, const Value& value) {
  if (const auto* s = std::get_if<std::string>(&value)) {
    AppendJsonQuoted(out, *s);
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    AppendInt(out, *i);
  } else if (const auto* d = std::get_if<double>(&value)) {
    AppendDouble(out, *d);
  } else if (const auto* b = std::get_if<bool>(&value)) {
    out += *b ? "true" : "false";
  } else {
    out += "null";
  }
}

void AppendKey(std::string& out, std::string_view key) {
  AppendJsonQuoted(out, key);
  out.push_back(':');
}

}  // namespace turnpike::search::qdrant
