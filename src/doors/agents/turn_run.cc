// A turn's answer, call and end (agent_door.h, turn.h):
//
//   the answer's start with the minted id (a stream's response.created, before the upstream
//   call); the call; the end: completed, incomplete, failed, or cancelled (the cancel route, a
//   deleted conversation, a foreground client leaving); the turn's input and output items and
//   its response are stored in one transaction, the memory updated, and only then the terminal
//   event sent (or logged).
//
// A background turn answers its client with the response object (in_progress) once its row is
// stored, and runs the rest detached: co_spawn on this worker, the coroutine owning the turn.
// Its request is accounted once, at the turn's end (WorkerCore::Finish from the record of the
// exchange kept when it was answered), so the call log has one row for it with the model call's
// usage and cost, its status the quick answer's (200) and its error the turn's. A stop does not
// wait for it: its frame is destroyed with the worker's io_context, before the door
// (http/worker.h), its row stays in_progress, and the next start fails it (agent_door.cc).
// Why it is kept on this replica: docs/adr/0002-background-turns-one-replica.md.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "common/clock.h"
#include "doors/agents/turn.h"
#include "model_call/pivot_source.h"
#include "providers/openai_responses/render.h"
#include "providers/openai_responses/request.h"

namespace turnpike::agents {
namespace net = boost::asio;
namespace json = boost::json;
namespace responses = providers::openai_responses;

void AgentDoor::Turn::ReportGuard() {
  if (report.replacements == 0) return;
  json::object metadata =
      echo["metadata"].is_object() ? echo["metadata"].as_object() : json::object{};
  std::string hosts;
  for (const std::string& host : report.hosts) hosts += (hosts.empty() ? "" : ",") + host;
  metadata["turnpike_guard_replacements"] = std::to_string(report.replacements);
  metadata["turnpike_guard_hosts"] = hosts;
  echo["metadata"] = std::move(metadata);
  encoder->set_echo(responses::EchoMembers(echo));
}

net::awaitable<bool> AgentDoor::OpenTurn(Turn& turn, http::Exchange* exchange) {
  const Agent& agent = *turn.agent;
  // The answer's start, with what it echoes.
  turn.echo = responses::EchoObject(turn.request);
  json::object& echo = turn.echo;
  echo["instructions"] = nullptr;
  echo["metadata"] = turn.fields.metadata;
  echo["store"] = turn.fields.store;
  echo["previous_response_id"] = turn.fields.previous_response_id.empty()
                                     ? json::value(nullptr)
                                     : json::value(turn.fields.previous_response_id);
  echo["conversation"] = turn.fields.conversation.empty()
                             ? json::value(nullptr)
                             : json::value(json::object{{"id", turn.fields.conversation}});
  providers::EncoderOptions options;
  options.created = UnixSeconds();
  const std::string echo_text = responses::EchoMembers(echo);  // the options borrow it
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
    turn.context_hosts.AddHostsIn(json::serialize(turn.request["input"]),
                                  guard::TextForm::kEscaped);
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
  json::array input_items;
  for (const NewItem& item : turn.input) input_items.push_back(json::parse(item.json));
  row.input_items = json::serialize(input_items);
  json::array context = turn.context;
  for (json::value& item : input_items) context.push_back(std::move(item));
  row.context = json::serialize(context);
  row.previous_response_id = turn.fields.previous_response_id;
  row.created_at = UnixSeconds();
  std::string body = row.body;
  TurnWrite write;
  write.response = std::move(row);
  write.now = UnixSeconds();
  auto save = [write](AgentStore& s) { return s.SaveTurn(write); };
  Result<std::vector<ItemRow>> saved = co_await WithAgentStore<std::vector<ItemRow>>(
      context_.store, std::move(save), store::JobLane::kControl);
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
  co_await core_.Respond(exchange, ctx, 200, core::kJsonContentType, std::move(body));
  // The client has its answer; the request is accounted when the turn ends (RunTurn).
  turn.answered = core::OwnedExchangeRecord::Own(exchange);
  // The context's views of the exchange go with it: its id is the turn's copy now, and its
  // credentials were needed only for admission.
  ctx.request_id = turn.answered->request_id;
  ctx.authorization = {};
  ctx.x_api_key = {};
  ctx.response_headers = nullptr;
  net::any_io_executor executor = co_await net::this_coro::executor;
  net::co_spawn(executor, RunTurn(std::move(owned), nullptr), net::detached);
}

net::awaitable<void> AgentDoor::RunTurn(std::unique_ptr<Turn> owned, http::Exchange* exchange) {
  Turn& turn = *owned;
  core::RequestContext& ctx = turn.ctx;
  responses::ResponsesStreamEncoder& encoder = *turn.encoder;
  TurnSink& sink = *turn.sink;
  TurnControl& control = *turn.control;
  const std::string& response_id = turn.response_id;
  bool client_left = turn.client_left;

  // The call.
  model_call::PivotSource source(turn.pivot, ctx);
  const model_call::AttemptPlan plan =
      model_call::PlanAttempts(*turn.entry, context_.config.routing.max_attempts, rng_);
  model_call::CallRequest call_request;
  call_request.model = turn.entry;
  call_request.plan = &plan;
  call_request.source = &source;
  call_request.stream = true;
  model_call::ModelCall call(call_deps_, ctx);
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
    end = co_await call.Run(call_request);
    if (exchange != nullptr) exchange->StopWatching();
    control.SetAbandon(nullptr);
  }
  client_left = client_left || sink.client_left();
  const bool cancelled = control.cancelled() || client_left;
  if (cancelled && !encoder.done()) {
    turn.ReportGuard();
    encoder.Cancel();
  } else if (end == model_call::CallEnd::kFailed && !encoder.done()) {
    const model_call::CallFailure& failure = call.failure();
    const Error error =
        failure.error ? *failure.error
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
  std::string body;
  encoder.AppendResponseObject(body);
  TurnWrite write;
  write.now = UnixSeconds();
  write.conversation_id = turn.fields.conversation;
  const bool keeps = encoder.status() != responses::ResponseStatus::kFailed;
  json::array output;
  if (keeps) {
    write.items = turn.input;
    for (const responses::OutputItem& item : encoder.items()) {
      std::string text;
      const bool cut = encoder.status() != responses::ResponseStatus::kCompleted && !item.is_call &&
                       !item.is_reasoning;
      responses::AppendItem(text, item, cut ? "incomplete" : "completed");
      write.items.push_back({std::string(item.id), text});
      output.push_back(json::parse(text));
    }
  } else {
    write.conversation_id.clear();
  }
  if (turn.fields.store) {
    ResponseRow row;
    row.id = response_id;
    row.tenant = turn.tenant;
    row.conversation_id = turn.fields.conversation;
    row.agent_id = turn.agent->id;
    row.agent_version = turn.agent->version;
    row.status = std::string(responses::StatusName(encoder.status()));
    row.body = body;
    json::array input_items;
    for (const NewItem& item : turn.input) input_items.push_back(json::parse(item.json));
    row.input_items = json::serialize(input_items);
    json::array context = turn.context;
    for (json::value& item : input_items) context.push_back(std::move(item));
    for (const json::value& item : output) context.push_back(item);
    row.context = json::serialize(context);
    row.previous_response_id = turn.fields.previous_response_id;
    row.created_at = write.now;
    // A background turn's whole stream: what is logged, and the held terminal events.
    if (turn.log) {
      row.events = turn.log->Text();
      if (!row.events.empty()) row.events += sink.held();  // empty: overflowed, not kept
    }
    write.response = std::move(row);
    write.update_response = turn.fields.background;
  }
  // Fleet mode: the memory after the turn, cached once its new version is known (EndClaim).
  std::shared_ptr<Memory> written;
  if (!write.conversation_id.empty() || write.response) {
    auto save = [write](AgentStore& s) { return s.SaveTurn(write); };
    Result<std::vector<ItemRow>> saved = co_await WithAgentStore<std::vector<ItemRow>>(
        context_.store, std::move(save), store::JobLane::kControl);
    if (!saved.ok()) {
      if (!ctx.error) ctx.error = saved.error().code;
      if (turn.holds_slot) shared_.conversations.Evict(turn.fields.conversation);
    } else if (turn.holds_slot && !write.items.empty()) {
      auto memory = std::make_shared<Memory>(*turn.memory);
      for (const NewItem& item : write.items) memory->items.push_back(json::parse(item.json));
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
    const Error error = *encoder.error();
    co_await core_.RespondError(*exchange, ctx, error.code, RenderError(-1, error));
  } else {
    co_await core_.Respond(*exchange, ctx, 200, core::kJsonContentType, std::move(body));
  }
  if (client_left) ctx.status = 499;
  chain_.Complete(ctx);
  if (exchange != nullptr) {
    core_.Finish(*exchange, ctx);
  } else {
    core_.Finish(turn.answered->view(), ctx);
  }
}

}  // namespace turnpike::agents
