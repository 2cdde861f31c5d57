#include "loadgen/agent_template.h"

#include <stdexcept>

#include "common/json_escape.h"

namespace turnpike::loadgen {
namespace {

constexpr std::string_view kDefaultResponsesPath = "/v1/responses";
constexpr std::string_view kResponsesSuffix = "/responses";
constexpr std::string_view kConversationsSuffix = "/conversations";
constexpr std::string_view kIdMember = R"("id")";
constexpr std::string_view kJsonSpace = " \t\r\n";

}  // namespace

AgentPaths AgentPathsOf(std::string_view url_path) {
  if (url_path == "/") url_path = kDefaultResponsesPath;
  if (url_path.find('?') != std::string_view::npos || url_path.size() < kResponsesSuffix.size() ||
      url_path.substr(url_path.size() - kResponsesSuffix.size()) != kResponsesSuffix) {
    throw std::invalid_argument(
        "--agent needs --url http://host:port or http://host:port/<prefix>/responses");
  }
  const std::string_view prefix = url_path.substr(0, url_path.size() - kResponsesSuffix.size());
  return {std::string(url_path), std::string(prefix) + std::string(kConversationsSuffix)};
}

std::string TurnBody(std::string_view agent, std::string_view conversation,
                     std::string_view input) {
  std::string body = R"({"model":)";
  AppendJsonQuoted(body, std::string("agent:") + std::string(agent));
  body += R"(,"conversation":)";
  AppendJsonQuoted(body, conversation);
  body += R"(,"input":)";
  AppendJsonQuoted(body, input);
  body += R"(,"stream":false})";
  return body;
}

std::optional<std::string> ConversationIdOf(std::string_view body) {
  for (size_t at = body.find(kIdMember); at != std::string_view::npos;
       at = body.find(kIdMember, at + 1)) {
    size_t i = body.find_first_not_of(kJsonSpace, at + kIdMember.size());
    if (i == std::string_view::npos || body[i] != ':') continue;
    i = body.find_first_not_of(kJsonSpace, i + 1);
    if (i == std::string_view::npos || body[i] != '"') continue;
    const size_t close = body.find('"', i + 1);
    if (close == std::string_view::npos || close == i + 1) return std::nullopt;
    const std::string_view id = body.substr(i + 1, close - i - 1);
    if (id.find('\\') != std::string_view::npos) return std::nullopt;
    return std::string(id);
  }
  return std::nullopt;
}

}  // namespace turnpike::loadgen
