#include "config/yaml_map.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

namespace turnpike::config {
namespace {

std::string_view TypeName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "null";
  }
}

std::string KnownKeyList(std::initializer_list<std::string_view> keys) {
  std::string out;
  for (std::string_view k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

}  // namespace

void FailAt(const std::string& path, std::string_view problem, const YAML::Node& at) {
  std::string message = (path.empty() ? std::string("(root)") : path) + ": " + std::string(problem);
  // Mark() is only meaningful on nodes that came from the parser.
  if (at.IsDefined() && !at.Mark().is_null()) {
    message += " (line " + std::to_string(at.Mark().line + 1) + ")";
  }
  throw ConfigError(message);
}

YamlMap::YamlMap(const YAML::Node& node, std::string path,
                 std::initializer_list<std::string_view> known_keys)
    : node_(node), path_(std::move(path)) {
  if (!node_.IsDefined() || node_.IsNull()) return;
  if (!node_.IsMap())
    FailAt(path_, "expected a mapping, got " + std::string(TypeName(node_)), node_);
  std::set<std::string, std::less<>> seen;
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) FailAt(path_, "keys must be plain strings", entry.first);
    const std::string& key = entry.first.Scalar();
    if (std::find(known_keys.begin(), known_keys.end(), key) == known_keys.end()) {
      FailAt(KeyPath(key), "unknown key (expected one of: " + KnownKeyList(known_keys) + ")",
             entry.first);
    }
    // yaml-cpp keeps duplicate keys; a second value would otherwise be silently ignored.
    if (!seen.insert(key).second) FailAt(KeyPath(key), "duplicate key", entry.first);
  }
}

std::string YamlMap::KeyPath(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  return path_ + "." + std::string(key);
}

YAML::Node YamlMap::Child(std::string_view key) const {
  if (!node_.IsDefined() || !node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node& map = node_;  // const lookup never inserts
  return map[std::string(key)];
}

bool YamlMap::Present(std::string_view key) const {
  YAML::Node child = Child(key);
  return child.IsDefined() && !child.IsNull();
}

void YamlMap::Require(std::string_view key) const {
  if (!Present(key)) FailAt(KeyPath(key), "required", node_);
}

std::string YamlMap::Scalar(std::string_view key) const {
  YAML::Node child = Child(key);
  if (!child.IsScalar()) {
    FailAt(KeyPath(key), "expected a single value, got " + std::string(TypeName(child)), child);
  }
  return SubstituteEnv(KeyPath(key), child.Scalar());
}

std::string YamlMap::String(std::string_view key, std::string fallback) const {
  if (!Present(key)) return fallback;
  return Scalar(key);
}

int64_t YamlMap::Int(std::string_view key, int64_t fallback, int64_t min, int64_t max) const {
  if (!Present(key)) return fallback;
  const std::string text = Scalar(key);
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    FailAt(KeyPath(key), "must be between " + std::to_string(min) + " and " + std::to_string(max),
           Child(key));
  }
  if (ec != std::errc() || ptr != end || text.empty()) {
    FailAt(KeyPath(key), "expected an integer, got \"" + text + "\"", Child(key));
  }
  if (value < min || value > max) {
    FailAt(KeyPath(key), "must be between " + std::to_string(min) + " and " + std::to_string(max),
           Child(key));
  }
  return value;
}

bool YamlMap::Bool(std::string_view key, bool fallback) const {
  if (!Present(key)) return fallback;
  const std::string text = Scalar(key);
  if (text == "true" || text == "on") return true;
  if (text == "false" || text == "off") return false;
  FailAt(KeyPath(key), "expected true or false (or on/off), got \"" + text + "\"", Child(key));
}

double YamlMap::Number(std::string_view key, double fallback, double min, double max) const {
  if (!Present(key)) return fallback;
  const std::string text = Scalar(key);
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty() || !std::isfinite(value)) {
    FailAt(KeyPath(key), "expected a number, got \"" + text + "\"", Child(key));
  }
  if (value < min || value > max) {
    FailAt(KeyPath(key), "must be between " + std::to_string(min) + " and " + std::to_string(max),
           Child(key));
  }
  return value;
}

Millis YamlMap::Duration(std::string_view key, Millis fallback) const {
  if (!Present(key)) return fallback;
  return ParseDuration(KeyPath(key), Scalar(key));
}

size_t YamlMap::Size(std::string_view key, size_t fallback) const {
  if (!Present(key)) return fallback;
  return ParseSize(KeyPath(key), Scalar(key));
}

}  // namespace turnpike::config
