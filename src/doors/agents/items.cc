#include "doors/agents/items.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "doors/agents/agent.h"
#include "providers/openai_responses/request.h"
#include "providers/openai_responses/request_input.h"

namespace turnpike::agents {
namespace json = boost::json;

namespace {

Error Invalid(std::string message, std::string param) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(param)};
}

// A message's string content as the one part the API shows.
void Partify(json::object& item) {
  json::value* content = item.if_contains("content");
  if (content == nullptr || !content->is_string()) return;
  const json::value* role = item.if_contains("role");
  const bool assistant = role != nullptr && role->is_string() && role->as_string() == "assistant";
  json::object part({{"type", assistant ? "output_text" : "input_text"}, {"text", *content}},
                    item.storage());
  if (assistant) part["annotations"] = json::array(item.storage());
  *content = json::array({std::move(part)}, item.storage());
}

// `value` is the string `text` (a comparison with a literal would make a json::value of it).
bool IsString(const json::value& value, std::string_view text) {
  return value.is_string() && value.as_string() == text;
}

std::string_view PrefixOf(std::string_view type) {
  if (type == "function_call") return "fc_";
  if (type == "function_call_output") return "fco_";
  if (type == "reasoning") return "rs_";
  return "msg_";
}

// The rest of MakeMemoryItem, once `item->value` is there.
std::shared_ptr<const MemoryItem> Complete(std::shared_ptr<MemoryItem> item, std::string text) {
  const json::object* object = item->value.if_object();
  const json::value* type = object != nullptr ? object->if_contains("type") : nullptr;
  if (object != nullptr && (type == nullptr || IsString(*type, "message"))) {
    // A message item alone translates to one pivot message whatever comes before it (only a
    // reasoning item changes that, and a window holding one is translated whole: turn.cc).
    Result<json::array> messages =
        providers::openai_responses::TranslateItem(item->value, item->storage());
    if (messages.ok() && messages->size() == 1) {
      item->message = std::move((*messages)[0]);
      item->message_text = json::serialize(item->message);
    }
  }
  item->text = std::move(text);
  return item;
}

}  // namespace

Result<std::vector<NewItem>> NormalizeItems(const json::value& input, const std::string& param,
                                            std::vector<json::value>* values,
                                            json::storage_ptr sp) {
  json::array items(sp);
  if (input.is_string()) {
    items.push_back(json::object({{"type", "message"}, {"role", "user"}, {"content", input}}, sp));
  } else if (input.is_array()) {
    items = input.as_array();
  } else {
    return Invalid("`" + param + "` must be a string or an array of items.", param);
  }
  // The Responses translation is the check: what it takes, a later turn can send. A string is
  // one user message, which it always takes.
  if (!items.empty() && !input.is_string()) {
    json::object probe({{"model", "agent"}, {"input", items}}, sp);
    Result<json::object> pivot = providers::openai_responses::ParseResponsesDocument(probe);
    if (!pivot.ok()) {
      Error e = pivot.error();
      if (e.param.rfind("input", 0) == 0) e.param = param + e.param.substr(5);
      return e;
    }
  }
  std::vector<NewItem> out;
  out.reserve(items.size());
  for (json::value& value : items) {
    json::object& item = value.as_object();
    const json::value* type = item.if_contains("type");
    // A copy: the item's own "type" is rewritten below.
    const std::string kind =
        type != nullptr && type->is_string() ? std::string(type->as_string()) : "message";
    item["type"] = kind;
    Partify(item);
    std::string id = MintId(PrefixOf(kind));
    item["id"] = id;
    if (!item.contains("status") && kind != "reasoning") item["status"] = "completed";
    out.push_back({std::move(id), json::serialize(item)});
    if (values != nullptr) values->push_back(std::move(value));
  }
  return out;
}

std::shared_ptr<const MemoryItem> MakeMemoryItem(std::string text) {
  auto item = std::make_shared<MemoryItem>(MemoryItem::ArenaBytes(text.size()));
  item->value = json::parse(text, item->storage());
  return Complete(std::move(item), std::move(text));
}

std::shared_ptr<const MemoryItem> MakeMemoryItem(std::string text, json::value value) {
  auto item = std::make_shared<MemoryItem>(MemoryItem::ArenaBytes(text.size()));
  item->value = std::move(value);  // a copy into the arena
  return Complete(std::move(item), std::move(text));
}

bool Spliceable(const std::vector<std::shared_ptr<const MemoryItem>>& window,
                const json::array& input) {
  if (input.empty()) return false;
  const json::object* first = input[0].if_object();
  const json::value* type = first != nullptr ? first->if_contains("type") : nullptr;
  if (type != nullptr && IsString(*type, "function_call")) return false;
  for (const std::shared_ptr<const MemoryItem>& item : window) {
    if (item->message.is_null()) return false;
  }
  return true;
}

std::vector<providers::TextMessage> WindowMessages(
    const std::vector<std::shared_ptr<const MemoryItem>>& window) {
  std::vector<providers::TextMessage> messages;
  messages.reserve(window.size());
  for (const std::shared_ptr<const MemoryItem>& item : window) {
    messages.push_back({&item->message, item->message_text});
  }
  return messages;
}

std::string RenderConversation(const ConversationRow& row) {
  std::string out =
      "{\"id\":" + json::serialize(json::string(row.id)) +
      ",\"object\":\"conversation\",\"created_at\":" + std::to_string(row.created_at) +
      ",\"metadata\":" + row.metadata + "}";
  return out;
}

std::string RenderItemList(const std::vector<ItemRow>& items, bool has_more) {
  std::string out = "{\"object\":\"list\",\"data\":[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.append(items[i].json);
  }
  out.append("],\"first_id\":");
  out.append(items.empty() ? "null" : json::serialize(json::string(items.front().id)));
  out.append(",\"last_id\":");
  out.append(items.empty() ? "null" : json::serialize(json::string(items.back().id)));
  out.append(has_more ? ",\"has_more\":true}" : ",\"has_more\":false}");
  return out;
}

std::string RenderDeleted(std::string_view id, std::string_view object) {
  return "{\"id\":" + json::serialize(json::string(id)) + ",\"object\":\"" + std::string(object) +
         "\",\"deleted\":true}";
}

}  // namespace turnpike::agents
