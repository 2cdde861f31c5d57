// Conversation items and the objects the Conversations and Responses APIs answer with.
//
// Items are kept in the shape the API shows them, each with a gateway-minted id:
//   message               {"type":"message","id":"msg_..","status":"completed","role":R,
//                          "content":[{"type":"input_text"|"output_text","text":..}...]}
//                         (a string content becomes one part: input_text, or output_text for
//                          the assistant; parts are kept as given otherwise)
//   function_call         {"type":"function_call","id":"fc_..","call_id","name","arguments",
//                          "status":"completed"}
//   function_call_output  {"type":"function_call_output","id":"fco_..","call_id","output",
//                          "status":"completed"}
//   reasoning             as the model's output gave it (an agent turn's output only)
// A turn's input and the items API are checked by the Responses translation itself
// (providers/openai_responses), so an item stored here is one a later turn can send.
//
// Errors: kInvalidRequest naming the field (`param`). Pure functions; thread-safe.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "doors/agents/agent_store.h"

namespace turnpike::agents {

inline constexpr size_t kMaxItemsPerRequest = 20;  // the Conversations API's limit per call

// A turn's `input` (a string, or an array of items) or a conversation's `items` (an array), as
// items with ids. `param` names the field in errors ("input", "items").
Result<std::vector<NewItem>> NormalizeItems(const boost::json::value& input,
                                            const std::string& param);

// The items' JSON texts as an array value (a turn's memory, a response's context).
boost::json::array ParseItems(const std::vector<std::string>& texts);

// {"id","object":"conversation","created_at","metadata"}
std::string RenderConversation(const ConversationRow& row);
// {"object":"list","data":[items],"first_id","last_id","has_more"}
std::string RenderItemList(const std::vector<ItemRow>& items, bool has_more);
// {"id","object":"conversation.deleted","deleted":true} and the like.
std::string RenderDeleted(std::string_view id, std::string_view object);

}  // namespace turnpike::agents
