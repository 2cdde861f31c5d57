#include "probe_door.h"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/openai_errors.h"
#include "model_call/pivot_source.h"
#include "model_call/recorder.h"
#include "model_call/recording.h"
#include "model_call/route_table.h"
#include "probe_store.h"
#include "providers/events.h"

namespace turnpike::probe {
namespace net = boost::asio;

namespace {

constexpr std::string_view kPrefix = "probe:";
constexpr std::string_view kJson = "application/json";
constexpr size_t kRecordingBytes = 1 << 20;

std::string Quoted(std::string_view text) {
  return boost::json::serialize(boost::json::string(text));
}

// The door's own sink: the consumer that serves this client (the call reads on for it), keeping
// the answer's text as the pivot events carry it (JSON-escaped).
class TextSink final : public model_call::AnswerSink {
 public:
  void OnStart(const model_call::AnswerStart& start) override { streamed_ = start.stream; }
  void OnEvent(const providers::StreamEvent& event) override {
    if (event.kind == providers::EventKind::kTextDelta) text_.append(event.text);
  }
  void OnEnd(const Error* error) override {
    if (error != nullptr) error_ = *error;
  }

  const std::string& text() const { return text_; }
  bool streamed() const { return streamed_; }
  const std::optional<Error>& error() const { return error_; }

 private:
  std::string text_;
  bool streamed_ = false;
  std::optional<Error> error_;
};

// The text a recording holds, replayed from its events.
struct TextOfEvents final : providers::EventSink {
  void OnEvent(const providers::StreamEvent& event) override {
    ++events;
    if (event.kind == providers::EventKind::kTextDelta) text.append(event.text);
  }
  std::string text;
  int64_t events = 0;
};

// The admin route's handler body (a coroutine function: no captures, GCC 12).
net::awaitable<Result<core::AdminAnswer>> ListAnswers(store::StoreThread* store) {
  if (store == nullptr) co_return Error{ErrorCode::kUnavailable, "the store is not open", ""};
  auto list = [](store::Engine& engine) -> Result<std::vector<ProbeAnswer>> {
    ProbeStore* probe = engine.role<ProbeStore>();
    if (probe == nullptr) {
      return Error{ErrorCode::kInternal, "the probe role is not registered", ""};
    }
    return probe->List();
  };
  Result<std::vector<ProbeAnswer>> answers =
      co_await store->Call<std::vector<ProbeAnswer>>(std::move(list));
  if (!answers.ok()) co_return answers.error();
  std::string body = "{\"data\":[";
  for (size_t i = 0; i < answers->size(); ++i) {
    const ProbeAnswer& a = (*answers)[i];
    if (i > 0) body += ',';
    body += "{\"id\":" + std::to_string(a.id) + ",\"model\":" + Quoted(a.model) + ",\"text\":\"" +
            a.text + "\",\"events\":" + std::to_string(a.events) + "}";
  }
  body += "]}";
  co_return core::AdminAnswer{200, std::move(body)};
}

}  // namespace

ProbeDoor::ProbeDoor(const app::FeatureContext& context, int worker, core::WorkerCore& core)
    : context_(context),
      core_(core),
      call_options_(model_call::CallOptionsFrom(context.config.upstream)),
      rng_(static_cast<uint32_t>(worker + 1)),
      call_deps_{core.pool(),
                 call_options_,
                 context.config.routing,
                 std::chrono::milliseconds{0},
                 context.config.upstream.max_response_bytes,
                 core.probe().retries,
                 rng_} {
  if (std::unique_ptr<core::Filter> governance = core.MakeGovernanceFilter()) {
    chain_.Add(std::move(governance));
  }
}

net::awaitable<void> ProbeDoor::Handle(http::Exchange& exchange, core::RouteMatch match) {
  // The door declares no routes of its own: it is only ever handed requests.
  core::RequestContext ctx;
  core_.Start(exchange, match, ctx);
  const Error not_found{ErrorCode::kNotFound, "Not found.", ""};
  co_await Refuse(exchange, ctx, not_found, false);
}

core::ErrorReply ProbeDoor::RenderError(int, const Error& error) const {
  return {HttpStatus(error.code), core::OpenAiErrorBody(error)};
}

net::awaitable<void> ProbeDoor::Refuse(http::Exchange& exchange, core::RequestContext& ctx,
                                       const Error& error, bool chain_ran) {
  co_await core_.RespondError(exchange, ctx, error.code, RenderError(-1, error));
  if (chain_ran) chain_.Complete(ctx);
  core_.Finish(exchange, ctx);
}

net::awaitable<void> ProbeDoor::Receive(http::Exchange& exchange, core::RouteMatch match,
                                        core::HandedRequest handed) {
  core::RequestContext ctx;
  core_.Start(exchange, match, ctx);
  core::WorkerCore::ReadCredentials(exchange, ctx);
  ctx.model = handed.key;
  const std::string model = handed.key.substr(kPrefix.size());
  const boost::json::object* body = handed.document.if_object();
  const boost::json::value* input = body != nullptr ? body->if_contains("input") : nullptr;
  const model_call::ModelEntry* entry = context_.routes.Find(model);
  // Errors are named before the co_await (GCC 12 mishandles temporaries across it).
  std::optional<Error> refusal;
  if (input == nullptr || !input->is_string()) {
    refusal = Error{ErrorCode::kInvalidRequest, "`input` must be a string.", "input"};
  } else if (entry == nullptr) {
    refusal = Error{ErrorCode::kNotFound, "The model `" + model + "` does not exist.", "model"};
  }
  if (refusal) {
    co_await Refuse(exchange, ctx, *refusal, false);
    co_return;
  }
  ctx.model_slot = entry->index;
  ctx.billing.model = model;
  ctx.billing.prompt_bytes = static_cast<int64_t>(exchange.request().body().size());
  core::FilterStatus status = chain_.Run(ctx);
  if (status == core::FilterStatus::kSuspend) status = co_await chain_.Resume(ctx);
  if (status == core::FilterStatus::kRespond) {
    const core::RenderError render = [this](const Error& error) { return RenderError(-1, error); };
    co_await core_.AnswerFromChain(exchange, ctx, render);
    chain_.Complete(ctx);
    core_.Finish(exchange, ctx);
    co_return;
  }
  ctx.phases.admitted = core::Clock::now();

  // The pivot request, streamed: the answer reaches both sinks as pivot events.
  const boost::json::object pivot{
      {"model", model},
      {"messages", boost::json::array{boost::json::object{{"role", "user"}, {"content", *input}}}},
      {"stream", true},
      {"stream_options", boost::json::object{{"include_usage", true}}}};
  model_call::PivotSource source(pivot, ctx);
  const model_call::AttemptPlan plan =
      model_call::PlanAttempts(*entry, context_.config.routing.max_attempts, rng_);
  model_call::CallRequest request;
  request.model = entry;
  request.plan = &plan;
  request.source = &source;
  request.stream = true;
  model_call::ModelCall call(call_deps_, ctx);
  TextSink client;
  model_call::Recording recording(kRecordingBytes);
  model_call::Recorder recorder(recording);
  call.AddSink(client);  // the leader: the consumer this client is
  call.AddSink(recorder);
  exchange.WatchClient([&call] { call.Abandon(); });
  const model_call::CallEnd end = co_await call.Run(request);
  exchange.StopWatching();
  if (end == model_call::CallEnd::kAbandoned) {
    chain_.Complete(ctx);
    core_.Finish(exchange, ctx);
    co_return;
  }
  if (end == model_call::CallEnd::kFailed || client.error()) {
    const model_call::CallFailure& failure = call.failure();
    const Error error =
        client.error() ? *client.error()
        : failure.error
            ? *failure.error
            : Error{ErrorCode::kUpstreamBadResponse,
                    "The upstream provider answered HTTP " +
                        std::to_string(failure.answer ? failure.answer->status : 0) + ".",
                    ""};
    co_await Refuse(exchange, ctx, error, true);
    co_return;
  }

  // What the recorder kept, into the role's table on the store thread.
  TextOfEvents recorded;
  recording.Replay(recorded);
  int64_t id = 0;
  if (context_.store != nullptr) {
    const int64_t events = recorded.events;
    // Named before the co_await (GCC 12 mishandles a capturing temporary across it).
    auto add = [model, text = recorded.text, events](store::Engine& engine) -> Result<int64_t> {
      ProbeStore* probe = engine.role<ProbeStore>();
      if (probe == nullptr) {
        return Error{ErrorCode::kInternal, "the probe role is not registered", ""};
      }
      return probe->Add(model, text, events);
    };
    Result<int64_t> added = co_await context_.store->Call<int64_t>(std::move(add));
    if (!added.ok()) {
      co_await Refuse(exchange, ctx, added.error(), true);
      co_return;
    }
    id = added.value();
  }
  std::string answer = "{\"object\":\"probe.answer\",\"id\":" + std::to_string(id) +
                       ",\"model\":" + Quoted(model) + ",\"text\":\"" + client.text() +
                       "\",\"events\":" + std::to_string(recorded.events) +
                       ",\"streamed\":" + (client.streamed() ? "true" : "false") + "}";
  co_await core_.Respond(exchange, ctx, 200, kJson, std::move(answer));
  chain_.Complete(ctx);
  core_.Finish(exchange, ctx);
}

app::Feature ProbeFeature() {
  app::Feature feature;
  feature.role = [](const config::Config&) -> std::optional<store::RoleSpec> {
    return ProbeRole();
  };
  feature.door = [](const app::FeatureContext& context) -> std::optional<core::DoorSpec> {
    core::DoorSpec spec;
    spec.make = [context](int worker, net::io_context&, core::WorkerCore& core) {
      return std::make_unique<ProbeDoor>(context, worker, core);
    };
    spec.model_prefixes = {std::string(kPrefix)};
    return spec;
  };
  feature.admin_routes = [](const app::FeatureContext& context) {
    store::StoreThread* store = context.store;
    std::vector<core::AdminRoute> routes;
    routes.push_back({"/admin/v1/probe/answers",
                      {core::Verb::get},
                      core::TenantFrom::None(),
                      [store](const core::AdminCall&) { return ListAnswers(store); }});
    return routes;
  };
  return feature;
}

}  // namespace turnpike::probe
