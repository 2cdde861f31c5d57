// The Conversations API and the stored-response routes (agent_door.h). Each answer is built
// from one or two store statements; writes evict this replica's cached memory of the
// conversation at once (and, in fleet mode, bump its version: one Redis round trip). A cancel
// of a turn running on another replica goes to it (fleet.cc CancelElsewhere).
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>

#include "common/clock.h"
#include "doors/agents/agent_door.h"
#include "doors/agents/items.h"

namespace turnpike::agents {
namespace net = boost::asio;
namespace json = boost::json;

namespace {

using Answer = Result<core::AdminAnswer>;

constexpr std::chrono::seconds kCancelWait{30};

Error NotFound(std::string_view what, std::string_view id) {
  return Error{ErrorCode::kNotFound,
               std::string(what) + " with id '" + std::string(id) + "' not found.", ""};
}

Error Invalid(std::string message, std::string param) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(param)};
}

core::AdminAnswer Ok200(std::string body) { return core::AdminAnswer{200, std::move(body)}; }

// The body as a JSON object ({} when empty).
Result<json::object> ObjectBody(std::string_view body) {
  if (body.empty()) return json::object{};
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) return Invalid("The body must be a JSON object.", "");
  return std::move(v.as_object());
}

// The paging parameters of a list route.
struct Paging {
  std::string after;
  int64_t limit = 20;
  bool descending = true;
};

Result<Paging> PagingOf(std::string_view target, bool descending_default) {
  Paging paging;
  paging.descending = descending_default;
  boost::system::result<boost::urls::url_view> url = boost::urls::parse_origin_form(target);
  if (!url) return Invalid("The request target is not a valid URL.", "");
  for (auto param : url->params()) {
    if (param.key == "after") {
      paging.after = param.value;
    } else if (param.key == "limit") {
      char* end = nullptr;
      const long long n = std::strtoll(param.value.c_str(), &end, 10);
      if (param.value.empty() || *end != '\0' || n < 1 || n > 100) {
        return Invalid("`limit` must be a whole number from 1 to 100.", "limit");
      }
      paging.limit = n;
    } else if (param.key == "order") {
      if (param.value != "asc" && param.value != "desc") {
        return Invalid("`order` must be `asc` or `desc`.", "order");
      }
      paging.descending = param.value == "desc";
    } else if (param.key != "include") {
      return Invalid("Unknown parameter `" + std::string(param.key) + "`.", std::string(param.key));
    }
  }
  return paging;
}

// What the conversation routes need checked first: the conversation is the tenant's.
Result<bool> Owned(AgentStore& store, const std::string& id, const std::string& tenant) {
  Result<std::optional<ConversationRow>> row = store.GetConversation(id);
  if (!row.ok()) return row.error();
  return row.value() && (*row)->tenant == tenant;
}

net::awaitable<Answer> CreateConversation(store::StoreThread* store, std::string body,
                                          std::string tenant) {
  Result<json::object> object = ObjectBody(body);
  if (!object.ok()) co_return object.error();
  std::vector<NewItem> items;
  ConversationRow row;
  row.id = MintId("conv_");
  row.tenant = tenant;
  row.created_at = UnixSeconds();
  for (const auto& member : *object) {
    if (member.key() == "items") {
      if (!member.value().is_array()) co_return Invalid("`items` must be an array.", "items");
      if (member.value().as_array().size() > kMaxItemsPerRequest) {
        co_return Invalid("`items` holds more than 20 items.", "items");
      }
      Result<std::vector<NewItem>> normalized = NormalizeItems(member.value(), "items");
      if (!normalized.ok()) co_return normalized.error();
      items = std::move(*normalized);
    } else if (member.key() == "metadata") {
      if (Status s = CheckMetadata(member.value(), "metadata"); !s.ok()) co_return s.error();
      if (!member.value().is_null()) row.metadata = json::serialize(member.value());
    } else {
      co_return Invalid("Unknown parameter `" + std::string(member.key()) + "`.",
                        std::string(member.key()));
    }
  }
  auto write = [row, items](AgentStore& s) -> Result<bool> {
    Status created = s.CreateConversation(row, items);
    if (!created.ok()) return created.error();
    return true;
  };
  Result<bool> done =
      co_await WithAgentStore<bool>(store, std::move(write), store::JobLane::kControl);
  if (!done.ok()) co_return done.error();
  co_return Ok200(RenderConversation(row));
}

}  // namespace

net::awaitable<Answer> AgentDoor::Serve(http::Exchange& exchange, const core::RouteMatch& match,
                                        const std::string& tenant) {
  const core::Verb method = exchange.request().method();
  const std::string body(exchange.request().body());
  const std::string id(match.Param("id"));
  store::StoreThread* store = context_.store;
  const auto read = store::JobLane::kRead;
  const auto write = store::JobLane::kControl;
  switch (static_cast<Route>(match.route)) {
    case kConversations:
      co_return co_await CreateConversation(store, body, tenant);

    case kConversation: {
      if (method == core::Verb::delete_) {
        // The turn in flight is cancelled first, on whichever replica runs it, and has stored its
        // end (its items) when the conversation goes with its items.
        std::string holder = shared_.conversations.Holder(id);
        if (holder.empty() && shared_.fleet != nullptr) {
          Result<std::string> remote = co_await shared_.fleet->Holder(id);
          if (remote.ok()) holder = std::move(*remote);
        }
        if (!holder.empty()) {
          const Answer stopped = co_await CancelTurn(holder, tenant);
          (void)stopped;  // not the tenant's, or already ended: nothing to stop
        }
        auto del = [id, tenant](AgentStore& s) -> Result<bool> {
          Result<bool> owned = Owned(s, id, tenant);
          if (!owned.ok() || !owned.value()) return owned;
          return s.DeleteConversation(id);
        };
        Result<bool> deleted = co_await WithAgentStore<bool>(store, std::move(del), write);
        if (!deleted.ok()) co_return deleted.error();
        if (!deleted.value()) co_return NotFound("Conversation", id);
        shared_.conversations.Evict(id);
        co_await BumpConversation(id);
        co_return Ok200(RenderDeleted(id, "conversation.deleted"));
      }
      std::optional<std::string> metadata;
      if (method == core::Verb::post) {
        Result<json::object> object = ObjectBody(body);
        if (!object.ok()) co_return object.error();
        const json::value* m = object->if_contains("metadata");
        if (m == nullptr || object->size() != 1) {
          co_return Invalid("Send `metadata` (and only it) to update a conversation.", "metadata");
        }
        if (Status s = CheckMetadata(*m, "metadata"); !s.ok()) co_return s.error();
        metadata = m->is_null() ? "{}" : json::serialize(*m);
      }
      auto get = [id, tenant, metadata](AgentStore& s) -> Result<std::optional<ConversationRow>> {
        Result<std::optional<ConversationRow>> row = s.GetConversation(id);
        if (!row.ok() || !row.value() || (*row)->tenant != tenant) return row;
        if (metadata) {
          Result<bool> updated = s.UpdateConversation(id, *metadata);
          if (!updated.ok()) return updated.error();
          (*row)->metadata = *metadata;
        }
        return row;
      };
      Result<std::optional<ConversationRow>> row =
          co_await WithAgentStore<std::optional<ConversationRow>>(store, std::move(get),
                                                                  metadata ? write : read);
      if (!row.ok()) co_return row.error();
      if (!row.value() || (*row)->tenant != tenant) co_return NotFound("Conversation", id);
      co_return Ok200(RenderConversation(**row));
    }

    case kItems: {
      if (method == core::Verb::post) {
        Result<json::object> object = ObjectBody(body);
        if (!object.ok()) co_return object.error();
        const json::value* items = object->if_contains("items");
        if (items == nullptr || !items->is_array() || items->as_array().empty() ||
            items->as_array().size() > kMaxItemsPerRequest) {
          co_return Invalid("`items` must be an array of 1 to 20 items.", "items");
        }
        Result<std::vector<NewItem>> normalized = NormalizeItems(*items, "items");
        if (!normalized.ok()) co_return normalized.error();
        const int64_t now = UnixSeconds();
        auto add = [id, tenant, items = std::move(*normalized),
                    now](AgentStore& s) -> Result<std::optional<std::vector<ItemRow>>> {
          Result<bool> owned = Owned(s, id, tenant);
          if (!owned.ok()) return owned.error();
          if (!owned.value()) return std::optional<std::vector<ItemRow>>();
          Result<std::vector<ItemRow>> rows = s.AppendItems(id, items, now);
          if (!rows.ok()) return rows.error();
          return std::optional<std::vector<ItemRow>>(std::move(*rows));
        };
        Result<std::optional<std::vector<ItemRow>>> added =
            co_await WithAgentStore<std::optional<std::vector<ItemRow>>>(store, std::move(add),
                                                                         write);
        if (!added.ok()) co_return added.error();
        if (!added.value()) co_return NotFound("Conversation", id);
        shared_.conversations.Evict(id);
        co_await BumpConversation(id);
        co_return Ok200(RenderItemList(**added, false));
      }
      Result<Paging> paging = PagingOf(exchange.target(), true);
      if (!paging.ok()) co_return paging.error();
      auto list = [id, tenant, p = *paging](AgentStore& s) -> Result<std::optional<ItemPage>> {
        Result<bool> owned = Owned(s, id, tenant);
        if (!owned.ok()) return owned.error();
        if (!owned.value()) return std::optional<ItemPage>();
        Result<ItemPage> page = s.ListItems(id, p.after, p.limit, p.descending);
        if (!page.ok()) return page.error();
        return std::optional<ItemPage>(std::move(*page));
      };
      Result<std::optional<ItemPage>> page =
          co_await WithAgentStore<std::optional<ItemPage>>(store, std::move(list), read);
      if (!page.ok()) co_return page.error();
      if (!page.value()) co_return NotFound("Conversation", id);
      co_return Ok200(RenderItemList((*page)->items, (*page)->has_more));
    }

    case kItem: {
      const std::string item(match.Param("item"));
      const bool del = method == core::Verb::delete_;
      auto run = [id, item, tenant, del](AgentStore& s) -> Result<std::optional<ItemRow>> {
        Result<bool> owned = Owned(s, id, tenant);
        if (!owned.ok()) return owned.error();
        if (!owned.value()) return std::optional<ItemRow>();
        Result<std::optional<ItemRow>> row = s.GetItem(id, item);
        if (!row.ok() || !row.value() || !del) return row;
        Result<bool> deleted = s.DeleteItem(id, item);
        if (!deleted.ok()) return deleted.error();
        return row;
      };
      Result<std::optional<ItemRow>> row = co_await WithAgentStore<std::optional<ItemRow>>(
          store, std::move(run), del ? write : read);
      if (!row.ok()) co_return row.error();
      if (!row.value()) co_return NotFound("Item", item);
      if (!del) co_return Ok200((*row)->json);
      shared_.conversations.Evict(id);
      co_await BumpConversation(id);
      // OpenAI answers a deleted item with its conversation.
      auto get = [id](AgentStore& s) { return s.GetConversation(id); };
      Result<std::optional<ConversationRow>> conversation =
          co_await WithAgentStore<std::optional<ConversationRow>>(store, std::move(get), read);
      if (!conversation.ok()) co_return conversation.error();
      if (!conversation.value()) co_return NotFound("Conversation", id);
      co_return Ok200(RenderConversation(**conversation));
    }

    case kResponse:
    case kInputItems: {
      const bool del = method == core::Verb::delete_;
      auto run = [id, tenant, del](AgentStore& s) -> Result<std::optional<ResponseRow>> {
        Result<std::optional<ResponseRow>> row = s.GetResponse(id);
        if (!row.ok() || !row.value() || (*row)->tenant != tenant || !del) return row;
        Result<bool> deleted = s.DeleteResponse(id);
        if (!deleted.ok()) return deleted.error();
        return row;
      };
      Result<std::optional<ResponseRow>> row = co_await WithAgentStore<std::optional<ResponseRow>>(
          store, std::move(run), del ? write : read);
      if (!row.ok()) co_return row.error();
      if (!row.value() || (*row)->tenant != tenant) co_return NotFound("Response", id);
      if (del) co_return Ok200(RenderDeleted(id, "response.deleted"));
      if (match.route == kResponse) co_return Ok200((*row)->body);
      // input_items: the stored input as a list page (the whole input: a turn's is small).
      json::value items = json::parse((*row)->input_items);
      std::vector<ItemRow> rows;
      for (const json::value& item : items.as_array()) {
        const json::value* item_id = item.as_object().if_contains("id");
        rows.push_back({0, item_id != nullptr ? std::string(item_id->as_string()) : "",
                        json::serialize(item), "", 0});
      }
      co_return Ok200(RenderItemList(rows, false));
    }

    case kCancel:
      co_return co_await CancelTurn(id, tenant);
  }
  co_return Error{ErrorCode::kNotFound, "Not found.", ""};
}

net::awaitable<Answer> AgentDoor::CancelTurn(const std::string& id, const std::string& tenant) {
  // A turn running here: cancel it and wait until it has stopped (and stored what it had).
  net::any_io_executor executor = co_await net::this_coro::executor;
  auto timer = std::make_shared<net::steady_timer>(executor);
  auto stopped = std::make_shared<std::string>();
  timer->expires_after(kCancelWait);
  auto on_stopped = [executor, timer, stopped](std::string body) {
    net::post(executor, [timer, stopped, body = std::move(body)]() mutable {
      *stopped = std::move(body);
      timer->cancel();
    });
  };
  if (shared_.turns.Cancel(id, tenant, std::move(on_stopped))) {
    auto waited = co_await timer->async_wait(net::as_tuple(net::use_awaitable));
    (void)waited;
    if (!stopped->empty()) co_return Ok200(std::move(*stopped));
  } else if (shared_.fleet != nullptr) {
    // Fleet mode: the replica running it is told, and answers once it has stored its end.
    std::optional<std::string> answered = co_await CancelElsewhere(id, tenant, kCancelWait);
    if (answered) co_return Ok200(std::move(*answered));
  }
  // Not running here: a stored response answers as it is (idempotent).
  auto get = [id](AgentStore& s) { return s.GetResponse(id); };
  Result<std::optional<ResponseRow>> row = co_await WithAgentStore<std::optional<ResponseRow>>(
      context_.store, std::move(get), store::JobLane::kRead);
  if (!row.ok()) co_return row.error();
  if (!row.value() || (*row)->tenant != tenant) co_return NotFound("Response", id);
  co_return Ok200((*row)->body);
}

}  // namespace turnpike::agents
