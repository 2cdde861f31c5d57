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
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "doors/agents/agent_store.h"
#include "providers/provider.h"

namespace turnpike::agents {

inline constexpr size_t kMaxItemsPerRequest = 20;  // the Conversations API's limit per call

// A turn's `input` (a string, or an array of items) or a conversation's `items` (an array), as
// items with ids. `param` names the field in errors ("input", "items"). `values`, when given,
// receives each item's object as its text has it (a turn then need not parse the texts again),
// made in `sp`.
Result<std::vector<NewItem>> NormalizeItems(const boost::json::value& input,
                                            const std::string& param,
                                            std::vector<boost::json::value>* values = nullptr,
                                            boost::json::storage_ptr sp = {});

// One item of a conversation's memory (state.h) or of a stored context: its text as stored,
// parsed once; and, for a message item, the pivot message the Responses translation makes of
// it alone (null for any other item) and that message's JSON text. Immutable and shared: the
// memory a turn leaves behind shares every item with the one it found, so a turn's cost does
// not grow with its conversation, and a window of message items is neither translated nor
// serialized again on every turn.
//
// Memory: `value` and `message` live in the item's own arena, a first block sized from the text
// (ArenaBytes; it grows by further blocks if that is short), freed whole with the item: one
// allocation where their nodes took one each (a turn makes two items and, once its memory is
// full, frees two). Made by MakeMemoryItem only; neither copied nor moved.
struct MemoryItem {
  explicit MemoryItem(size_t arena_bytes)
      : arena(arena_bytes), value(storage()), message(storage()) {}
  MemoryItem(const MemoryItem&) = delete;
  MemoryItem& operator=(const MemoryItem&) = delete;

  // Non-owning: the arena outlives every value in it (declared first, destroyed last).
  boost::json::storage_ptr storage() { return boost::json::storage_ptr(&arena); }
  // The first block for an item of `text_bytes`: its parse, and its message's translation.
  static size_t ArenaBytes(size_t text_bytes) { return 4 * text_bytes + 512; }

  boost::json::monotonic_resource arena;
  std::string text;
  boost::json::value value;
  boost::json::value message;
  std::string message_text;  // json::serialize(message), for a message item
};

// The item of a stored text (`value` its parse, when the caller has it).
std::shared_ptr<const MemoryItem> MakeMemoryItem(std::string text);
std::shared_ptr<const MemoryItem> MakeMemoryItem(std::string text, boost::json::value value);

// Whether a turn's pivot may be made by translating its `input` items alone and splicing the
// `window`'s own messages in before them (WindowMessages): every window item is a message item,
// and the input opens with something that joins nothing before it (a function call joins the
// assistant message it follows). The pivot is then the one translating both together makes.
bool Spliceable(const std::vector<std::shared_ptr<const MemoryItem>>& window,
                const boost::json::array& input);
// The window's messages with their texts, in order: what the turn's model call inserts into the
// input's translation (model_call::PivotSource), a Spliceable window only. They borrow the
// window's items.
std::vector<providers::TextMessage> WindowMessages(
    const std::vector<std::shared_ptr<const MemoryItem>>& window);

// {"id","object":"conversation","created_at","metadata"}
std::string RenderConversation(const ConversationRow& row);
// {"object":"list","data":[items],"first_id","last_id","has_more"}
std::string RenderItemList(const std::vector<ItemRow>& items, bool has_more);
// {"id","object":"conversation.deleted","deleted":true} and the like.
std::string RenderDeleted(std::string_view id, std::string_view object);

}  // namespace turnpike::agents
