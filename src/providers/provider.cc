#include "providers/provider.h"

#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/monotonic_resource.hpp>

namespace turnpike::providers {

Result<std::string> Provider::IdentityBody(std::string_view, std::string_view) const {
  return Error{ErrorCode::kInternal,
               "The " + std::string(name()) + " dialect has no identity path of its own.", ""};
}

Result<boost::json::object> Provider::ParseRequestDocument(
    const boost::json::object& document) const {
  return Error{ErrorCode::kInternal,
               "The " + std::string(name()) + " dialect cannot read a parsed request.", ""};
}

Result<std::string> Provider::BuildRequestWithWindow(const boost::json::object& chat,
                                                     const UpstreamRequestOptions& options,
                                                     size_t at,
                                                     std::span<const TextMessage> window) const {
  const boost::json::value* messages = chat.if_contains("messages");
  const bool splice = !window.empty() && messages != nullptr && messages->is_array();
  const bool add_tools =
      options.tools != nullptr && !options.tools->empty() && !chat.contains("tools");
  if (!splice && !add_tools) return BuildRequest(chat, options);
  boost::json::monotonic_resource memory;
  boost::json::object whole(chat, &memory);
  if (splice) {
    const boost::json::array& own = messages->as_array();
    boost::json::array spliced(&memory);
    spliced.reserve(own.size() + window.size());
    const size_t before = std::min(at, own.size());
    for (size_t i = 0; i < before; ++i) spliced.push_back(own[i]);
    for (const TextMessage& message : window) spliced.push_back(*message.value);
    for (size_t i = before; i < own.size(); ++i) spliced.push_back(own[i]);
    whole["messages"] = std::move(spliced);
  }
  if (add_tools) whole["tools"] = boost::json::value(*options.tools, &memory);
  // The copy holds the tools now: not offered a second time.
  UpstreamRequestOptions held = options;
  held.tools = nullptr;
  held.tools_text = {};
  return BuildRequest(whole, held);
}

}  // namespace turnpike::providers
