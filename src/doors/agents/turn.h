// A turn's state (agent_door.h), private to the door: what turn.cc reads and admits, and what
// turn_run.cc runs and stores. A foreground turn's state lives as long as its request; a
// background turn's is handed to the coroutine that runs it detached from the client, which
// owns it until the turn has stored its end and accounted the request (RunTurn).
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/request_context.h"
#include "core/worker_core.h"
#include "doors/agents/agent_door.h"
#include "doors/agents/event_log.h"
#include "doors/agents/turn_sink.h"
#include "guard/guard_sink.h"
#include "providers/openai_responses/stream_encoder.h"
#include "providers/provider.h"

namespace turnpike::agents {

// The fields a turn reads itself; every other field goes to the Responses translation as is.
// `input` and `tools` point into the request's document: read before the turn is admitted,
// never after.
struct TurnFields {
  std::string agent_id;
  int64_t version = 0;
  std::string conversation;
  std::string previous_response_id;
  bool stream = false;
  bool store = true;
  bool background = false;
  std::optional<int64_t> max_output_tokens;
  boost::json::value metadata = boost::json::object{};
  const boost::json::value* input = nullptr;
  const boost::json::value* tools = nullptr;
};

struct AgentDoor::Turn {
  // Read and admitted (turn.cc).
  core::RequestContext ctx;
  TurnFields fields;
  std::shared_ptr<const Agent> agent;
  bool agent_tools = true;  // the request offers the agent's tools as they are (no subset)
  std::shared_ptr<const Memory> memory;  // the conversation's, when in one
  // The items the model is given before the input: the memory's window, or the previous
  // response's context.
  std::vector<std::shared_ptr<const MemoryItem>> context;
  std::vector<NewItem> input;
  bool holds_slot = false;
  std::string tenant;
  std::string response_id;
  std::string model_name;  // as the client named it ("agent:<id>[@<version>]")
  // The Responses request the agent makes of its model and its pivot, in memory of their own,
  // freed at once with the turn, not value by value.
  boost::json::monotonic_resource request_memory;
  boost::json::object request{boost::json::storage_ptr(&request_memory)};
  boost::json::object pivot{boost::json::storage_ptr(&request_memory)};
  // The input items' objects, for the memory (in request_memory: the memory's items copy them).
  std::vector<boost::json::value> input_values;
  // A Spliceable window's messages, which the model call inserts into the pivot's at
  // `window_at` (after the instructions' system message): the pivot does not copy them.
  std::vector<providers::TextMessage> window;
  size_t window_at = 0;
  const model_call::ModelEntry* entry = nullptr;

  // Running (turn_run.cc OpenTurn).
  std::optional<providers::openai_responses::ResponsesStreamEncoder> encoder;
  std::optional<TurnSink> sink;
  std::optional<guard::GuardConfig> guard_config;
  guard::HostSet context_hosts;
  guard::GuardReport report;
  std::optional<guard::GuardSink> guard_sink;
  std::shared_ptr<TurnControl> control;
  bool client_left = false;

  // A background turn's: its events, and its request's exchange as it was when answered.
  std::shared_ptr<EventLog> log;
  std::optional<core::OwnedExchangeRecord> answered;

  // The members the turn's response echoes (EchoFields of its request, with the turn's own
  // instructions, store, previous_response_id and conversation), with `metadata`.
  std::string Echo(const boost::json::value& metadata) const;
  // What the guard replaced, into the response's metadata before its last snapshot.
  void ReportGuard();
  // JSON arrays' texts, for its response row: the input items; the context it was given, its
  // input and `output` (what a turn naming it as previous_response_id is given).
  std::string InputText() const;
  std::string ContextText(const std::vector<std::string>& output) const;
};

}  // namespace turnpike::agents
