#include "mock/mock_options.h"

#include <charconv>
#include <limits>

namespace turnpike::mock {
namespace {

struct DurationUnit {
  std::string_view suffix;
  int64_t millis;
};

constexpr int64_t kMillisPerSecond = 1'000;
constexpr int64_t kMillisPerMinute = 60 * kMillisPerSecond;
// "ms" before "m" and "s": the longest suffix that matches wins.
constexpr DurationUnit kDurationUnits[] = {
    {"ms", 1}, {"s", kMillisPerSecond}, {"m", kMillisPerMinute}};
constexpr uint64_t kMaxPort = std::numeric_limits<uint16_t>::max();

Error Invalid(std::string message) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), ""};
}

bool IsRate(double rate) { return rate >= 0 && rate <= 1; }

}  // namespace

Result<Millis> ParseDuration(std::string_view what, std::string_view text) {
  if (text == "0") return Millis(0);
  const Error usage = Invalid(std::string(what) + ": invalid duration \"" + std::string(text) +
                              "\" (use a whole number with ms, s or m, e.g. 50ms)");
  int64_t number = 0;
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(text.data(), end, number);
  if (ec != std::errc() || rest == text.data() || number < 0) return usage;
  const std::string_view suffix(rest, static_cast<size_t>(end - rest));
  for (const DurationUnit& unit : kDurationUnits) {
    if (suffix != unit.suffix) continue;
    if (number > std::numeric_limits<int64_t>::max() / unit.millis) return usage;
    return Millis(number * unit.millis);
  }
  return usage;
}

Result<HostPort> ParseHostPort(std::string_view text) {
  const Error usage = Invalid("--listen: expected HOST:PORT (e.g. 127.0.0.1:9000), got \"" +
                              std::string(text) + "\"");
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return usage;
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.size() < 2 || host.back() != ']') return usage;
    host = host.substr(1, host.size() - 2);
  }
  uint64_t port = 0;
  const char* end = port_text.data() + port_text.size();
  auto [rest, ec] = std::from_chars(port_text.data(), end, port);
  if (ec != std::errc() || rest != end || port > kMaxPort || host.empty()) return usage;
  return HostPort{std::string(host), static_cast<uint16_t>(port)};
}

Status Validate(const MockOptions& options) {
  if (options.workers < 1) return Invalid("--workers must be at least 1");
  if (options.tokens < 0 || options.tokens > kMaxTokens) {
    return Invalid("--tokens must be between 0 and " + std::to_string(kMaxTokens));
  }
  if (options.retry_after_s < 0) return Invalid("--retry-after must not be negative");
  if (options.cached_tokens < 0 || options.cache_write_tokens < 0) {
    return Invalid("--cached-tokens and --cache-write-tokens must not be negative");
  }
  if (!IsRate(options.fail_rate) || !IsRate(options.rate_limit_rate) ||
      !IsRate(options.reset_rate)) {
    return Invalid("--fail-rate, --rate-limit-rate and --reset-rate must be within [0, 1]");
  }
  if (options.fail_rate + options.rate_limit_rate + options.reset_rate > 1) {
    return Invalid("--fail-rate + --rate-limit-rate + --reset-rate must not exceed 1");
  }
  return Ok{};
}

}  // namespace turnpike::mock
