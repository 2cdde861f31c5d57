// The requests of an agent-turn run (`turnpike bench --agent ID`): a conversation's creation
// and the turns sent on it.
//
// Each connection creates a conversation (POST <prefix>/conversations, body {}), reads its id
// from the answer, then sends --turns turns on it, one after another:
//   POST <prefix>/responses {"model":"agent:ID","conversation":"conv_...","input":"...",
//                            "stream":false}
// (the streamed ones with "stream":true), then creates the next conversation. A turn's
// requests are built once per conversation, not per turn.
//
// Errors: start-up only (AgentPaths throws std::invalid_argument); ConversationIdOf answers
// nullopt for an answer without an id.
// Threads: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace turnpike::loadgen {

inline constexpr std::string_view kDefaultTurnInput = "Say hello.";

struct AgentPaths {
  std::string responses;      // where turns go
  std::string conversations;  // where conversations are created
};

// From --url's path: "/" (none given) means /v1/responses; otherwise it must end with
// "/responses", and conversations live beside it ("/v1/responses" -> "/v1/conversations").
// A query is refused.
AgentPaths AgentPathsOf(std::string_view url_path);

// A turn's body, with "stream":false (StreamingBody turns it into a streamed one).
std::string TurnBody(std::string_view agent, std::string_view conversation, std::string_view input);

// The "id" member of a created conversation's JSON answer (its first "id" string member).
std::optional<std::string> ConversationIdOf(std::string_view body);

}  // namespace turnpike::loadgen
