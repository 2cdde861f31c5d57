// One agent turn (agent_door.h): POST /v1/responses with model "agent:<id>[@<version>]".
//
//   1. authenticate; the agent (this worker's cache, else one read); the request's fields
//   2. memory: the conversation's (the shared table, else one read; its one-turn slot, else
//      409) or the previous response's context; the window of the agent
//   3. the Responses request the agent makes of its model (its instructions and tools, the
//      memory, the input), translated to the pivot by providers/openai_responses: a bad field
//      is a 400 in the client's names, before anything is reserved or stored
//   4. the governance chain (the agent's model is what is billed, and the agent's budget is
//      reserved with the key's and the tenant's: budgets.h), then the answer's start with
//      the minted id (a stream's response.created, before the upstream call), then the call
//   5. the answer, the call and the end (turn_run.cc)
#include "doors/agents/turn.h"

#include <boost/asio/this_coro.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "common/clock.h"
#include "doors/agents/agent_door.h"
#include "doors/agents/items.h"
#include "providers/openai_responses/request.h"

namespace turnpike::agents {
namespace net = boost::asio;
namespace json = boost::json;
namespace responses = providers::openai_responses;

namespace {

Error Invalid(std::string message, std::string param) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(param)};
}

Result<TurnFields> ReadFields(const json::object& body, std::string_view model) {
  TurnFields f;
  std::string_view name = model.substr(kModelPrefix.size());
  if (const size_t at = name.find('@'); at != std::string_view::npos) {
    const std::string version(name.substr(at + 1));
    char* end = nullptr;
    f.version = std::strtoll(version.c_str(), &end, 10);
    if (version.empty() || *end != '\0' || f.version < 1) {
      return Invalid("The model `" + std::string(model) + "` names no agent version.", "model");
    }
    name = name.substr(0, at);
  }
  f.agent_id = std::string(name);
  for (const auto& m : body) {
    const std::string_view key = m.key();
    const json::value& v = m.value();
    if (key == "conversation") {
      const json::value* id = v.is_object() ? v.as_object().if_contains("id") : &v;
      if (id == nullptr || !id->is_string() || id->as_string().empty()) {
        return Invalid("`conversation` must be a conversation id or {\"id\": ...}.",
                       "conversation");
      }
      f.conversation = std::string(id->as_string());
    } else if (key == "previous_response_id" && !v.is_null()) {
      if (!v.is_string())
        return Invalid("`previous_response_id` must be a string.", std::string(key));
      f.previous_response_id = std::string(v.as_string());
    } else if (key == "stream" || key == "store" || key == "background") {
      if (!v.is_bool() && !v.is_null())
        return Invalid("`" + std::string(key) + "` must be a boolean.", std::string(key));
      const bool on = v.is_bool() && v.as_bool();
      if (key == "stream") f.stream = on;
      if (key == "store") f.store = v.is_null() || on;
      if (key == "background") f.background = on;
    } else if (key == "max_output_tokens" && !v.is_null()) {
      if (!v.is_int64() || v.as_int64() < 1) {
        return Invalid("`max_output_tokens` must be a positive whole number.", std::string(key));
      }
      f.max_output_tokens = v.as_int64();
    } else if (key == "metadata") {
      if (Status s = CheckMetadata(v, "metadata"); !s.ok()) return s.error();
      if (!v.is_null()) f.metadata = v;
    } else if (key == "instructions" && !v.is_null()) {
      return Invalid("An agent turn takes its instructions from the agent.", "instructions");
    } else if (key == "input") {
      f.input = &v;
    } else if (key == "tools") {
      f.tools = &v;
    }
  }
  if (!f.conversation.empty() && !f.previous_response_id.empty()) {
    return Invalid("Send `conversation` or `previous_response_id`, not both.",
                   "previous_response_id");
  }
  if (f.input == nullptr) return Invalid("`input` is required.", "input");
  if (f.background && !f.store) {
    return Invalid("A background turn is stored: send `store: true`.", "store");
  }
  return f;
}

// Where the agent's window of `items` starts: its last `history_items`, fewer when their
// estimated tokens (bytes / 4) pass `history_tokens`; never at a tool output whose call was cut.
size_t WindowStart(const Agent& agent,
                   const std::vector<std::shared_ptr<const MemoryItem>>& items) {
  size_t first = items.size() > static_cast<size_t>(agent.history_items)
                     ? items.size() - static_cast<size_t>(agent.history_items)
                     : 0;
  if (agent.history_tokens) {
    int64_t bytes = 0;
    size_t keep = items.size();
    while (keep > first) {
      bytes += static_cast<int64_t>(items[keep - 1]->text.size());
      if (bytes / 4 > *agent.history_tokens) break;
      --keep;
    }
    first = keep;
  }
  while (first < items.size()) {
    const json::object* item = items[first]->value.if_object();
    const json::value* type = item != nullptr ? item->if_contains("type") : nullptr;
    if (type == nullptr || !type->is_string() || type->as_string() != "function_call_output") break;
    ++first;
  }
  return first;
}

// A stored context (a JSON array's text) as memory items.
std::vector<std::shared_ptr<const MemoryItem>> ItemsOf(json::array context) {
  std::vector<std::shared_ptr<const MemoryItem>> items;
  items.reserve(context.size());
  for (json::value& value : context) {
    std::string text = json::serialize(value);
    items.push_back(MakeMemoryItem(std::move(text), std::move(value)));
  }
  return items;
}

}  // namespace

net::awaitable<void> AgentDoor::Receive(http::Exchange& exchange, core::RouteMatch match,
                                        core::HandedRequest handed) {
  // On the heap: a background turn's state outlives this request (turn.h).
  auto owned = std::make_unique<Turn>();
  Turn& turn = *owned;
  core::RequestContext& ctx = turn.ctx;
  core_.Start(exchange, match, ctx);
  core::WorkerCore::ReadCredentials(exchange, ctx);
  ctx.model = handed.key;
  std::optional<Error> refusal;
  Result<governance::Principal> principal = core_.Authenticate(ctx);
  std::string tenant;
  if (!principal.ok()) {
    refusal = principal.error();
  } else if (exchange.request().body().size() > context_.config.agents.max_input_bytes) {
    tenant = principal->tenant->tenant.id;
    refusal = Error{ErrorCode::kPayloadTooLarge,
                    "The turn's request is larger than agents.max_input_bytes.", "input"};
  } else {
    tenant = principal->tenant->tenant.id;
    const json::object* body = handed.document.if_object();
    Result<TurnFields> fields =
        body != nullptr ? ReadFields(*body, handed.key)
                        : Result<TurnFields>(Invalid("The body must be a JSON object.", ""));
    if (!fields.ok()) refusal = fields.error();
    if (fields.ok()) turn.fields = std::move(*fields);
  }
  if (!refusal) {
    Result<std::shared_ptr<const Agent>> agent =
        co_await FindAgent(turn.fields.agent_id, turn.fields.version, tenant);
    if (!agent.ok())
      refusal = agent.error();
    else if (*agent == nullptr)
      refusal =
          Error{ErrorCode::kNotFound, "The model `" + handed.key + "` does not exist.", "model"};
    else
      turn.agent = std::move(*agent);
  }
  if (refusal) {
    co_await Refuse(exchange, ctx, *refusal, false);
    co_return;
  }
  const Agent& agent = *turn.agent;
  ctx.turn.agent_id = agent.id;
  ctx.turn.agent_version = agent.version;
  ctx.stream = turn.fields.stream;

  // The request's tools: a subset of the agent's, or all of them.
  const json::array* tools = &agent.tools;
  if (turn.fields.tools != nullptr && !turn.fields.tools->is_null()) {
    if (!turn.fields.tools->is_array()) {
      refusal = Invalid("`tools` must be an array.", "tools");
    } else {
      for (size_t i = 0; i < turn.fields.tools->as_array().size() && !refusal; ++i) {
        const json::value& tool = turn.fields.tools->as_array()[i];
        const json::value* name = tool.is_object() ? tool.as_object().if_contains("name") : nullptr;
        if (name == nullptr || !name->is_string() || !agent.AllowsTool(name->as_string())) {
          refusal = Invalid("tools[" + std::to_string(i) + "] is not one of the agent's tools.",
                            "tools[" + std::to_string(i) + "]");
        }
      }
      if (!refusal) {
        tools = &turn.fields.tools->as_array();
        turn.agent_tools = false;
      }
    }
  }
  if (!refusal) {
    Result<std::vector<NewItem>> input =
        NormalizeItems(*turn.fields.input, "input", &turn.input_values, turn.request.storage());
    if (!input.ok())
      refusal = input.error();
    else
      turn.input = std::move(*input);
  }

  // Memory: the conversation's (holding its slot), or the previous response's context.
  const std::string response_id = MintId("resp_");
  if (!refusal && !turn.fields.conversation.empty()) {
    // Fleet mode: the slot and the fleet's lock come with the memory (fleet.cc).
    const bool fleet = shared_.fleet != nullptr;
    Result<std::shared_ptr<const Memory>> memory = std::shared_ptr<const Memory>();
    if (fleet) {
      Result<std::shared_ptr<const Memory>> claimed =
          co_await ClaimMemory(turn.fields.conversation, agent.history_items, tenant, response_id);
      memory = std::move(claimed);
    } else {
      Result<std::shared_ptr<const Memory>> loaded =
          co_await LoadMemory(turn.fields.conversation, agent.history_items, tenant);
      memory = std::move(loaded);
    }
    if (!memory.ok())
      refusal = memory.error();
    else if (*memory == nullptr)
      refusal = Error{ErrorCode::kNotFound,
                      "Conversation with id '" + turn.fields.conversation + "' not found.",
                      "conversation"};
    else if (!fleet && !shared_.conversations.TryAcquire(turn.fields.conversation, response_id)) {
      refusal = BusyError(turn.fields.conversation);
    } else {
      turn.holds_slot = true;
      turn.memory = std::move(*memory);
      const std::vector<std::shared_ptr<const MemoryItem>>& items = turn.memory->items;
      turn.context.assign(items.begin() + static_cast<std::ptrdiff_t>(WindowStart(agent, items)),
                          items.end());
    }
  } else if (!refusal && !turn.fields.previous_response_id.empty()) {
    const std::string id = turn.fields.previous_response_id;
    const int64_t window = agent.history_items;
    auto get = [id, window](AgentStore& s) { return s.GetResponseContext(id, window); };
    Result<std::optional<ResponseRow>> previous =
        co_await WithAgentStore<std::optional<ResponseRow>>(context_.store, std::move(get),
                                                            store::JobLane::kRead);
    if (!previous.ok()) {
      refusal = previous.error();
    } else if (!previous.value() || (*previous)->tenant != tenant) {
      refusal = Error{ErrorCode::kNotFound, "Previous response with id '" + id + "' not found.",
                      "previous_response_id"};
    } else {
      std::vector<std::shared_ptr<const MemoryItem>> items =
          ItemsOf(json::parse((*previous)->context).as_array());
      turn.context.assign(items.begin() + static_cast<std::ptrdiff_t>(WindowStart(agent, items)),
                          items.end());
    }
  }

  // The Responses request the agent makes of its model, and its pivot.
  json::object& request = turn.request;
  const model_call::ModelEntry* entry = context_.routes.Find(agent.model);
  std::optional<int64_t> cap = agent.max_output_tokens;
  if (turn.fields.max_output_tokens && (!cap || *turn.fields.max_output_tokens < *cap)) {
    cap = turn.fields.max_output_tokens;
  }
  // In the turn's arena from the start, so that the translation's result moves into it.
  Result<json::object> pivot = json::object(request.storage());
  if (!refusal) {
    for (const auto& m : handed.document.as_object()) {
      static constexpr std::string_view kOwn[] = {
          "model", "input",        "conversation", "previous_response_id",
          "store", "background",   "metadata",     "max_output_tokens",
          "tools", "instructions", "stream"};
      bool own = false;
      for (std::string_view k : kOwn) own = own || m.key() == k;
      if (!own) request[m.key()] = m.value();
    }
    request["model"] = agent.model;
    if (!agent.instructions.empty()) request["instructions"] = agent.instructions;
    json::array input(request.storage());
    input.reserve(turn.context.size() + turn.input.size());
    for (const json::value& item : turn.input_values) input.push_back(item);
    // The window: a window of message items is spliced into the pivot's messages from their own
    // translations (MemoryItem::message, as text) by the model call, and only the input is
    // translated. Any other window is
    // translated whole with the input, because a function call joins the assistant message
    // before it, and so does the message after a reasoning item; so is one before an input that
    // opens with a function call.
    const bool spliced = Spliceable(turn.context, input);
    if (!spliced) {
      json::array whole(request.storage());
      whole.reserve(turn.context.size() + input.size());
      for (const std::shared_ptr<const MemoryItem>& item : turn.context) {
        whole.push_back(item->value);
      }
      for (json::value& item : input) whole.push_back(std::move(item));
      input = std::move(whole);
    }
    request["input"] = std::move(input);
    // The agent's own tools were translated and serialized when it was made
    // (Agent::chat_tools): the call offers them as they are (RunTurn), instead of the request's
    // tools being copied, translated and serialized again (the echo takes their text likewise,
    // Turn::Echo). A subset is translated here.
    if (!tools->empty() && !turn.agent_tools) request["tools"] = *tools;
    if (cap) request["max_output_tokens"] = *cap;
    request["stream"] = true;
    pivot = responses::ParseResponsesDocument(request, request.storage());
    if (pivot.ok() && spliced) {
      turn.window = WindowMessages(turn.context);
      // After the system message the instructions make.
      turn.window_at = agent.instructions.empty() ? 0 : 1;
    }
    if (!pivot.ok())
      refusal = pivot.error();
    else if (entry == nullptr)
      refusal = Error{ErrorCode::kNotFound,
                      "The agent's model `" + agent.model + "` does not exist.", "model"};
  }
  if (!refusal) {
    ctx.model_slot = entry->index;
    ctx.billing.model = agent.model;
    int64_t prompt_bytes = 2;  // the input array's text, as the items' texts add up
    for (const std::shared_ptr<const MemoryItem>& item : turn.context) {
      prompt_bytes += static_cast<int64_t>(item->text.size()) + 1;
    }
    for (const NewItem& item : turn.input)
      prompt_bytes += static_cast<int64_t>(item.json.size()) + 1;
    ctx.billing.prompt_bytes = prompt_bytes;
    ctx.billing.max_tokens = cap;
    // The agent's own budget, reserved with the key's and the tenant's (budgets.h).
    ctx.billing.scope_budget = shared_.budgets.Find(agent.id);
    ctx.billing.scope_cap = agent.monthly_budget_micros.value_or(governance::kUnlimitedBudget);
    ctx.billing.scope_whose = "this agent";
  }
  bool chain_ran = false;
  if (!refusal) {
    chain_ran = true;
    core::FilterStatus status = chain_.Run(ctx);
    if (status == core::FilterStatus::kSuspend) status = co_await chain_.Resume(ctx);
    if (status == core::FilterStatus::kRespond) {
      refusal = ctx.refusal ? *ctx.refusal : Error{ErrorCode::kInternal, "refused", ""};
    }
  }
  if (refusal) {
    if (turn.holds_slot && shared_.fleet != nullptr) {
      co_await EndClaim(turn.fields.conversation, response_id, false, nullptr);
    } else if (turn.holds_slot) {
      shared_.conversations.Release(turn.fields.conversation);
    }
    co_await Refuse(exchange, ctx, *refusal, chain_ran);
    co_return;
  }
  ctx.phases.admitted = core::Clock::now();
  ctx.turn.response_id = response_id;
  turn.fields.input = nullptr;  // the document is the request's: not read from here on
  turn.fields.tools = nullptr;
  turn.tenant = tenant;
  turn.response_id = response_id;
  turn.model_name = handed.key;
  turn.pivot = std::move(*pivot);
  turn.entry = entry;
  if (turn.fields.background) {
    co_await StartBackground(std::move(owned), exchange);
    co_return;
  }
  const bool opened = co_await OpenTurn(turn, &exchange);
  turn.client_left = !opened;
  co_await RunTurn(std::move(owned), &exchange);
}

}  // namespace turnpike::agents
