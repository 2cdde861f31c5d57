#include "doors/admin/auth_failures.h"

#include <algorithm>

namespace turnpike::doors::admin {

std::string_view AuthFailures::AddressOf(std::string_view client) {
  if (client.starts_with('[')) {
    const size_t close = client.find(']');
    return close == std::string_view::npos ? client : client.substr(1, close - 1);
  }
  // One colon: "ip:port". None, or several (a bare IPv6 address): the whole.
  const size_t colon = client.find(':');
  if (colon != std::string_view::npos && client.find(':', colon + 1) == std::string_view::npos) {
    return client.substr(0, colon);
  }
  return client;
}

std::optional<int64_t> AuthFailures::Blocked(std::string_view client, Clock::time_point now) const {
  std::lock_guard lock(mu_);
  auto it = windows_.find(std::string(AddressOf(client)));
  if (it == windows_.end() || it->second.failures < kMaxFailures) return std::nullopt;
  const Clock::time_point end = it->second.start + kWindow;
  if (now >= end) return std::nullopt;
  const auto left = std::chrono::ceil<std::chrono::seconds>(end - now);
  return std::max<int64_t>(left.count(), 1);
}

void AuthFailures::Failed(std::string_view client, Clock::time_point now) {
  std::lock_guard lock(mu_);
  std::string address(AddressOf(client));
  auto it = windows_.find(address);
  if (it == windows_.end()) {
    if (windows_.size() >= kMaxAddresses) {
      std::erase_if(windows_,
                    [&](const auto& entry) { return now >= entry.second.start + kWindow; });
      if (windows_.size() >= kMaxAddresses) return;
    }
    windows_.emplace(std::move(address), Window{now, 1});
    return;
  }
  Window& window = it->second;
  if (now >= window.start + kWindow) {
    window = Window{now, 1};
    return;
  }
  ++window.failures;
}

size_t AuthFailures::tracked() const {
  std::lock_guard lock(mu_);
  return windows_.size();
}

}  // namespace turnpike::doors::admin
