// A turn's answer, call and end (agent_door.h, turn.h):
//
//   the answer's start with the minted id (a stream's response.created, before the upstream
//   call); the call; the end: completed, incomplete, failed, or cancelled (the cancel route, a
//   deleted conversation, a foreground client leaving); the turn's input and output items and
//   its response are stored in one transaction, the memory updated, and only then the terminal
//   event sent (or logged); once accounted, the turn's end is published (turn_events.h).
//
// A background turn answers its client with the response object (in_progress) once its row is
// stored, and runs the rest detached: co_spawn on this worker, the coroutine owning the turn.
// Created with stream: true, its answer is instead its stream: the head once the row is stored,
// then its events followed from its log (FollowLog, resume.cc) through the end; the client may
// leave without cancelling it, and resume with GET ?stream=true&starting_after=N.
// Its request is accounted once, at the turn's end (WorkerCore::Finish from the record of the
// exchange kept when it was answered), so the call log has one row for it with the model call's
// usage and cost, its status the quick answer's (200) and its error the turn's. A stop does not
// wait for it: its frame is destroyed with the worker's io_context, before the door
// (http/worker.h), its row stays in_progress, and the next start fails it (agent_door.cc).
// Why it is kept on this replica: docs/adr/0002-background-turns-one-replica.md.
#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "common/block_cache.h"
#include "common/clock.h"
#include "doors/agents/turn.h"
#include "model_call/pivot_source.h"
#include "providers/openai_responses/render.h"
#include "providers/openai_responses/request.h"

namespace turnpike::agents {
namespace net = boost::asio;
namespace json = boost::json;
namespace responses = providers::openai_responses;

namespace {

// `memory` with `added` after it, sharing its items; at most twice `window` items are kept.
// The first of `added` are the turn's input, whose objects `input_values` has already.
std::shared_ptr<Memory> Remembered(const Memory& memory, const std::vector<NewItem>& added,
                                   std::vector<json::value>& input_values, int64_t window) {
  auto next = std::make_shared<Memory>();
  next->tenant = memory.tenant;
  const size_t total = memory.items.size() + added.size();
  const size_t cap = static_cast<size_t>(std::max<int64_t>(window, 1)) * 2;
  const size_t drop = total > cap ? total - cap : 0;
  next->items.reserve(total - drop);
  for (size_t i = std::min(drop, memory.items.size()); i < memory.items.size(); ++i) {
    next->items.push_back(memory.items[i]);
  }
  for (size_t i = drop > memory.items.size() ? drop - memory.items.size() : 0; i < added.size();
       ++i) {
    next->items.push_back(i < input_values.size()
                              ? MakeMemoryItem(added[i].json, std::move(input_values[i]))
                              : MakeMemoryItem(added[i].json));
  }
  next->complete = memory.complete && drop == 0;
  next->limit = static_cast<int64_t>(next->items.size());
  return next;
}

constexpr std::string_view kEventStream = "text/event-stream";

}  // namespace

std::string AgentDoor::Turn::Echo(const json::value& metadata) const {
  const std::string metadata_text = json::serialize(metadata);
  const std::string previous = fields.previous_response_id.empty()
                                   ? std::string("null")
                                   : json::serialize(json::string(fields.previous_response_id));
  const std::string conversation =
      fields.conversation.empty()
          ? std::string("null")
          : "{\"id\":" + json::serialize(json::string(fields.conversation)) + "}";
  // The agent's tools as it keeps them serialized, when the turn offers them all (a subset is
  // in the request).
  const responses::EchoMember own[] = {{"instructions", "null"},
                                       {"metadata", metadata_text},
                                       {"store", fields.store ? "true" : "false"},
                                       {"previous_response_id", previous},
                                       {"conversation", conversation},
                                       {"tools", agent->tools_text}};
  return responses::EchoFields(
      request, std::span(own).first(agent_tools ? std::size(own) : std::size(own) - 1));
}

void AgentDoor::Turn::ReportGuard() {
  if (report.replacements == 0) return;
  json::object metadata =
      fields.metadata.is_object() ? fields.metadata.as_object() : json::object{};
  std::string hosts;
  for (const std::string& host : report.hosts) hosts += (hosts.empty() ? "" : ",") + host;
  metadata["turnpike_guard_replacements"] = std::to_string(report.replacements);
  metadata["turnpike_guard_hosts"] = hosts;
  encoder->set_echo(Echo(metadata));
}

std::string AgentDoor::Turn::InputText() const {
  std::string text = "[";
  for (const NewItem& item : input) text.append(text.size() > 1 ? "," : "").append(item.json);
  return text += "]";
}

std::string AgentDoor::Turn::ContextText(const std::vector<std::string>& output) const {
  std::string text = "[";
  auto add = [&text](std::string_view item) {
    text.append(text.size() > 1 ? "," : "").append(item);
  };
  for (const std::shared_ptr<const MemoryItem>& item : context) add(item->text);
  for (const NewItem& item : input) add(item.json);
  for (const std::string& item : output) add(item);
  return text += "]";
}

void AgentDoor::PublishEnd(const Turn& turn) const {
  TurnEvent event;
  event.tenant = turn.tenant;
  event.agent_id = turn.agent->id;
  event.agent_version = turn.agent->version;
  event.response_id = turn.response_id;
  event.conversation_id = turn.fields.conversation;
  switch (turn.encoder->status()) {
    case responses::ResponseStatus::kCompleted:
      event.status = TurnStatus::kCompleted;
      break;
    case responses::ResponseStatus::kIncomplete:
      event.status = TurnStatus::kIncomplete;
      break;
    case responses::ResponseStatus::kCancelled:
      event.status = TurnStatus::kCancelled;
      break;
    default:
      event.status = TurnStatus::kFailed;
      break;
  }
  const core::Usage& u = turn.ctx.usage;
  event.usage = {std::max<int64_t>(u.prompt_tokens, 0), std::max<int64_t>(u.completion_tokens, 0),
                 std::max<int64_t>(u.cached_tokens, 0), std::max<int64_t>(u.reasoning_tokens, 0)};
  event.cost_micros = turn.ctx.cost_micros;
  event.error = turn.encoder->error();
  shared_.events.Publish(event);
}

net::awaitable<bool> AgentDoor::OpenTurn(Turn& turn, http::Exchange* exchange) {
  const Agent& agent = *turn.agent;
  // The answer's start, with what it echoes.
  providers::EncoderOptions options;
  options.created = UnixSeconds();
  const std::string echo_text = turn.Echo(turn.fields.metadata);  // the options borrow it
  options.echo = echo_text;
  options.background = turn.fields.background;
  turn.encoder.emplace(options);
  using Delivery = TurnSink::Delivery;
  const Delivery delivery = turn.fields.background ? Delivery::kLog
                            : turn.fields.stream   ? Delivery::kClient
                                                   : Delivery::kWhole;
  turn.sink.emplace(exchange, turn.ctx, *turn.encoder, delivery, turn.log.get());
  // The agent's output guard, in front of the client's sink: the context is the instructions,
  // the memory and the input (tool outputs included) the model is given.
  if (agent.guard_urls) {
    guard::HostSet allow;
    for (const std::string& host : agent.allow_hosts) allow.Add(host);
    turn.guard_config.emplace(std::move(allow), agent.guard_marker);
    turn.context_hosts.AddHostsIn(agent.instructions, guard::TextForm::kRaw);
    for (const std::shared_ptr<const MemoryItem>& item : turn.context) {
      turn.context_hosts.AddHostsIn(item->text, guard::TextForm::kEscaped);
    }
    for (const NewItem& item : turn.input) {
      turn.context_hosts.AddHostsIn(item.json, guard::TextForm::kEscaped);
    }
    turn.guard_sink.emplace(*turn.guard_config, turn.context_hosts, turn.report);
    turn.guard_sink->AddDownstream(*turn.sink);
  }
  turn.sink->set_before_end([&turn] { turn.ReportGuard(); });
  providers::StreamEvent start;
  start.kind = providers::EventKind::kStart;
  start.id = std::string_view(turn.response_id).substr(5);  // the encoder adds "resp_"
  start.model = turn.model_name;
  net::any_io_executor executor = co_await net::this_coro::executor;
  turn.control = std::make_shared<TurnControl>(executor, turn.tenant, turn.log);
  shared_.turns.Add(turn.response_id, turn.control);
  // Fleet mode: a turn outside a conversation is findable by a cancel on another replica (a
  // conversation's turn became so with its claim).
  if (shared_.fleet != nullptr && !turn.holds_slot)
    shared_.fleet->Own(turn.response_id, turn.tenant);
  const bool opened = co_await turn.sink->Open(start);
  co_return opened;
}

net::awaitable<void> AgentDoor::StartBackground(std::unique_ptr<Turn> owned,
                                                http::Exchange& exchange) {
  Turn& turn = *owned;
  core::RequestContext& ctx = turn.ctx;
  turn.log = std::make_shared<EventLog>();
  const bool opened = co_await OpenTurn(turn, nullptr);
  (void)opened;  // the log takes every frame
  // The response row first, so that a GET, a cancel or a resume finds it from the answer on.
  ResponseRow row;
  row.id = turn.response_id;
  row.tenant = turn.tenant;
  row.conversation_id = turn.fields.conversation;
  row.agent_id = turn.agent->id;
  row.agent_version = turn.agent->version;
  row.status = std::string(responses::StatusName(turn.encoder->status()));
  turn.encoder->AppendResponseObject(row.body);
  row.input_items = turn.InputText();
  row.context = turn.ContextText({});
  row.previous_response_id = turn.fields.previous_response_id;
  row.created_at = UnixSeconds();
  std::string body = row.body;
  TurnWrite write;
  write.response = std::move(row);
  write.now = UnixSeconds();
  Result<std::vector<ItemRow>> saved =
      co_await shared_.writer.Save(context_.store, std::move(write));
  if (!saved.ok()) {
    shared_.turns.Remove(turn.response_id);
    if (turn.holds_slot && shared_.fleet != nullptr) {
      co_await EndClaim(turn.fields.conversation, turn.response_id, false, nullptr);
    } else if (turn.holds_slot) {
      shared_.conversations.Release(turn.fields.conversation);
    } else if (shared_.fleet != nullptr) {
      shared_.fleet->Disown(turn.response_id);
    }
    turn.control->Stopped(body);
    const Error error = saved.error();
    co_await Refuse(exchange, ctx, error, true);
    co_return;
  }
  // The answer: the response object, or (stream: true) the stream's head, its events to
  // follow from the log once the turn runs.
  bool streams = false;
  if (turn.fields.stream) {
    const bool started = co_await exchange.StartStream(200, kEventStream);
    streams = started;
    ctx.status = started ? 200 : 499;
    ctx.phases.client_head = exchange.head_sent_at();
  } else {
    co_await core_.Respond(exchange, ctx, 200, core::kJsonContentType, std::move(body));
  }
  // The client has its answer; the request is accounted when the turn ends (RunTurn).
  turn.answered = core::OwnedExchangeRecord::Own(exchange);
  // The context's views of the exchange go with it: its id is the turn's copy now, and its
  // credentials were needed only for admission.
  ctx.request_id = turn.answered->request_id;
  ctx.authorization = {};
  ctx.x_api_key = {};
  ctx.response_headers = nullptr;
  std::shared_ptr<EventLog> log = turn.log;
  net::any_io_executor executor = co_await net::this_coro::executor;
  net::co_spawn(executor, RunTurn(std::move(owned), nullptr), net::detached);
  if (!streams) co_return;
  // The turn is the detached coroutine's now; this request only reads its log. A client that
  // leaves stops reading, nothing more.
  const bool followed = co_await FollowLog(exchange, std::move(log), -1);
  if (followed) {
    const bool ended = co_await exchange.EndStream();
    (void)ended;
  }
}

namespace {

// RunTurn's state across its co_awaits: the model call and what the turn stores, in a block of
// the worker's BlockCache. On RunTurn's coroutine frame they made it 6,816 bytes, over the
// 1 KiB that the per-thread frame cache serves (common/small_blocks.h; Asio's recycling, then,
// 1,020 bytes): a malloc and a free per turn. The frame is now about 1,000 bytes
// (GCC 12 puts every local of a coroutine on its frame, which is why RunTurn's synchronous end
// runs in a lambda): a new local there may take it over again (the turn's allocation budget in
// tests/integration/allocations.test.mjs then fails).
struct RunState final : CachedBlock {
  RunState(const boost::json::object& pivot, size_t window_at,
           const std::vector<providers::TextMessage>& window, core::RequestContext& ctx,
           const model_call::AttemptPlan& attempts, const model_call::CallDeps& deps)
      : source(pivot, window_at, window, ctx), plan(attempts), call(deps, ctx) {}

  model_call::PivotSource source;
  const model_call::AttemptPlan plan;
  model_call::CallRequest request;
  model_call::ModelCall call;
  TurnWrite write;
  std::string body;
  std::vector<std::string> output;
};

}  // namespace

net::awaitable<void> AgentDoor::RunTurn(std::unique_ptr<Turn> owned, http::Exchange* exchange) {
  Turn& turn = *owned;
  core::RequestContext& ctx = turn.ctx;
  responses::ResponsesStreamEncoder& encoder = *turn.encoder;
  TurnSink& sink = *turn.sink;
  TurnControl& control = *turn.control;
  const std::string& response_id = turn.response_id;
  bool client_left = turn.client_left;

  // The call.
  const std::unique_ptr<RunState> state(new RunState(
      turn.pivot, turn.window_at, turn.window, ctx,
      model_call::PlanAttempts(*turn.entry, context_.config.routing.max_attempts, rng_),
      call_deps_));
  if (turn.agent_tools && !turn.agent->chat_tools.empty()) {
    state->source.OfferTools(turn.agent->chat_tools, turn.agent->chat_tools_text);
  }
  model_call::ModelCall& call = state->call;
  state->request.model = turn.entry;
  state->request.plan = &state->plan;
  state->request.source = &state->source;
  state->request.stream = true;
  if (turn.guard_sink) {
    call.AddSink(*turn.guard_sink);
  } else {
    call.AddSink(sink);
  }
  model_call::CallEnd end = model_call::CallEnd::kAbandoned;
  if (!client_left && !control.cancelled()) {
    control.SetAbandon([&call] { call.Abandon(); });
    // A background turn has no client to watch: it runs until it ends or is cancelled.
    if (exchange != nullptr) {
      exchange->WatchClient([&call, &client_left] {
        client_left = true;
        call.Abandon();
      });
    }
    end = co_await call.Run(state->request);
    if (exchange != nullptr) exchange->StopWatching();
    control.SetAbandon(nullptr);
  }
  // The end of the call and what the turn stores: in a plain function (this lambda), so that
  // its temporaries stay off this coroutine's frame, where GCC puts every local.
  [&] {
    client_left = client_left || sink.client_left();
    const bool cancelled = control.cancelled() || client_left;
    if (cancelled && !encoder.done()) {
      turn.ReportGuard();
      encoder.Cancel();
    } else if (end == model_call::CallEnd::kFailed && !encoder.done()) {
      const model_call::CallFailure& failure = call.failure();
      const Error error =
          failure.error
              ? *failure.error
              : Error{ErrorCode::kUpstreamBadResponse,
                      "The upstream provider answered HTTP " +
                          std::to_string(failure.answer ? failure.answer->status : 0) + ".",
                      ""};
      providers::StreamEvent failed;
      failed.kind = providers::EventKind::kError;
      failed.error = &error;
      sink.Feed(failed);
    }
    ctx.turn.guard_replacements = turn.report.replacements;
    if (encoder.status() == responses::ResponseStatus::kFailed && !ctx.error) {
      ctx.error =
          encoder.error() != nullptr ? encoder.error()->code : ErrorCode::kUpstreamBadResponse;
    }

    // What the turn stores: its input and output (not for a failure), and its response.
    std::string& body = state->body;
    encoder.AppendResponseObject(body);
    TurnWrite& write = state->write;
    write.now = UnixSeconds();
    write.conversation_id = turn.fields.conversation;
    const bool keeps = encoder.status() != responses::ResponseStatus::kFailed;
    std::vector<std::string>& output = state->output;
    if (keeps) {
      write.items = turn.input;
      for (const responses::OutputItem& item : encoder.items()) {
        std::string text;
        const bool cut = encoder.status() != responses::ResponseStatus::kCompleted &&
                         !item.is_call && !item.is_reasoning;
        responses::AppendItem(text, item, cut ? "incomplete" : "completed");
        write.items.push_back({std::string(item.id), text});
        output.push_back(std::move(text));
      }
    } else {
      write.conversation_id.clear();
    }
    if (turn.fields.store) {
      ResponseRow& row = write.response.emplace();
      row.id = response_id;
      row.tenant = turn.tenant;
      row.conversation_id = turn.fields.conversation;
      row.agent_id = turn.agent->id;
      row.agent_version = turn.agent->version;
      row.status = std::string(responses::StatusName(encoder.status()));
      row.body = body;
      row.input_items = turn.InputText();
      // A conversation's turn that kept its items stores its context by reference: the
      // conversation's items through its own (AgentStore::GetResponseContext).
      row.context = write.conversation_id.empty() ? turn.ContextText(output) : std::string();
      row.previous_response_id = turn.fields.previous_response_id;
      row.created_at = write.now;
      // A background turn's whole stream: what is logged, and the held terminal events.
      if (turn.log) {
        row.events = turn.log->Text();
        if (!row.events.empty()) row.events += sink.held();  // empty: overflowed, not kept
      }
      write.update_response = turn.fields.background;
    }
  }();
  const TurnWrite& write = state->write;
  std::string& body = state->body;
  // Fleet mode: the memory after the turn, cached once its new version is known (EndClaim).
  std::shared_ptr<Memory> written;
  if (!write.conversation_id.empty() || write.response) {
    Result<std::vector<ItemRow>> saved = co_await shared_.writer.Save(context_.store, write);
    if (!saved.ok()) {
      if (!ctx.error) ctx.error = saved.error().code;
      if (turn.holds_slot) shared_.conversations.Evict(turn.fields.conversation);
    } else if (turn.holds_slot && !write.items.empty()) {
      std::shared_ptr<Memory> memory =
          Remembered(*turn.memory, write.items, turn.input_values, turn.agent->history_items);
      if (shared_.fleet != nullptr) {
        written = std::move(memory);
      } else {
        shared_.conversations.PutMemory(turn.fields.conversation, std::move(memory),
                                        SteadyClock::now());
      }
    }
  }
  if (turn.holds_slot && shared_.fleet != nullptr) {
    // A failed write bumps too: the store may hold what this replica does not.
    const bool wrote = !write.conversation_id.empty() && !write.items.empty();
    co_await EndClaim(turn.fields.conversation, response_id, wrote, std::move(written));
  } else if (turn.holds_slot) {
    shared_.conversations.Release(turn.fields.conversation);
  } else if (shared_.fleet != nullptr) {
    shared_.fleet->Disown(response_id);
  }
  shared_.turns.Remove(response_id);
  control.Stopped(body);

  // Only now the terminal event (to the client or the log), or the whole answer.
  if (turn.fields.stream || turn.fields.background) {
    co_await sink.Close();
    if (control.cancelled() && !client_left) ctx.status = 200;
  } else if (client_left) {
    ctx.status = 499;
  } else if (encoder.status() == responses::ResponseStatus::kFailed && encoder.error() != nullptr &&
             encoder.items().empty()) {
    // The encoder (the turn's) holds the error until the end; no copy on the frame.
    const Error& error = *encoder.error();
    co_await core_.RespondError(*exchange, ctx, error.code, RenderError(-1, error));
  } else {
    co_await core_.Respond(*exchange, ctx, 200, core::kJsonContentType, std::move(body));
  }
  if (client_left) ctx.status = 499;
  chain_.Complete(ctx);
  PublishEnd(turn);
  if (exchange != nullptr) {
    core_.Finish(*exchange, ctx);
  } else {
    core_.Finish(turn.answered->view(), ctx);
  }
}

}  // namespace turnpike::agents
