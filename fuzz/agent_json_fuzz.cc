// The agent door's parsers of client JSON (doors/agents): an agent definition as the admin API
// takes it (create, and update over a fixed agent), conversation items (a turn's `input`, the
// items API's `items`) and metadata. The input is one JSON document: as an object it is the
// create and update body, and its `input`, `items` and `metadata` members go to their readers;
// the whole document goes to NormalizeItems and CheckMetadata too.
// Checks, for an agent the parser accepts: its rendering (the admin API's answer and the stored
// form) reads back (AgentFromStored) to an agent that renders the same; every normalized item
// is a JSON object carrying its id; a window of those items spliced before the input's own
// translation, written from its messages' texts, makes the upstream request of the whole.
#include <boost/json/parse.hpp>

#include "doors/agents/agent.h"
#include "doors/agents/items.h"
#include "fuzz_support.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_responses/request.h"

namespace {
namespace json = boost::json;
using turnpike::Result;
using turnpike::agents::Agent;

// The stored form of `agent` reads back to the same agent.
void CheckRoundTrip(Agent agent) {
  agent.id = "agt_fuzz";
  agent.version = 1;
  const std::string rendered = turnpike::agents::RenderAgent(agent);
  Result<Agent> back = turnpike::agents::AgentFromStored(rendered);
  if (!back.ok() || turnpike::agents::RenderAgent(back.value()) != rendered) __builtin_trap();
}

void Items(const json::value& input, const std::string& param) {
  Result<std::vector<turnpike::agents::NewItem>> items =
      turnpike::agents::NormalizeItems(input, param);
  if (!items.ok()) return;
  std::vector<std::shared_ptr<const turnpike::agents::MemoryItem>> window;
  for (const turnpike::agents::NewItem& item : items.value()) {
    boost::system::error_code ec;
    json::value v = json::parse(item.json, ec);
    const json::value* id = !ec && v.is_object() ? v.as_object().if_contains("id") : nullptr;
    if (id == nullptr || !id->is_string() || id->as_string() != item.id) __builtin_trap();
    window.push_back(turnpike::agents::MakeMemoryItem(item.json, std::move(v)));
  }
  if (!input.is_array() || !turnpike::agents::Spliceable(window, input.as_array())) return;
  json::object probe{{"model", "agent"}, {"input", input}};
  Result<json::object> pivot = turnpike::providers::openai_responses::ParseResponsesDocument(probe);
  if (!pivot.ok()) return;
  const json::value* messages = pivot.value().if_contains("messages");
  if (messages == nullptr || !messages->is_array()) return;
  // The upstream request of the pivot with the window written in from its messages' texts is
  // the request of the pivot holding the window's messages.
  json::object whole = pivot.value();
  json::array& spliced = whole["messages"].as_array();
  size_t at = 0;
  for (const auto& item : window) {
    spliced.insert(spliced.begin() + static_cast<std::ptrdiff_t>(at++), item->message);
  }
  turnpike::providers::UpstreamRequestOptions options;
  options.upstream_model = "m";
  Result<std::string> expected =
      turnpike::providers::openai::OpenAiProvider().BuildRequest(whole, options);
  Result<std::string> built = turnpike::providers::openai::OpenAiProvider().BuildRequestWithWindow(
      pivot.value(), options, 0, turnpike::agents::WindowMessages(window));
  if (!expected.ok() || !built.ok() || expected.value() != built.value()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  boost::system::error_code ec;
  const json::value document = json::parse(turnpike::fuzz::AsText(data, size), ec);
  if (ec) return 0;
  (void)turnpike::agents::CheckMetadata(document, "metadata");
  Items(document, "input");
  if (!document.is_object()) return 0;
  const json::object& body = document.as_object();
  Result<Agent> created = turnpike::agents::AgentFromCreate(body);
  if (created.ok()) CheckRoundTrip(created.value());
  static const Agent kBase = [] {
    Agent a;
    a.id = "agt_base";
    a.tenant = "t1";
    a.version = 3;
    a.model = "gpt-4o-mini";
    a.instructions = "Be brief.";
    return a;
  }();
  Result<Agent> updated = turnpike::agents::AgentFromUpdate(kBase, body);
  if (updated.ok()) CheckRoundTrip(updated.value());
  if (const json::value* metadata = body.if_contains("metadata")) {
    (void)turnpike::agents::CheckMetadata(*metadata, "metadata");
  }
  if (const json::value* input = body.if_contains("input")) Items(*input, "input");
  if (const json::value* items = body.if_contains("items")) Items(*items, "items");
  return 0;
}
