#include "mock/chat_reply.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>
#include <string>

#include "mock/anthropic_render.h"
#include "mock/cohere_render.h"
#include "mock/gemini_render.h"
#include "mock/ollama_render.h"
#include "mock/responses_render.h"

namespace turnpike::mock {
namespace {

namespace net = boost::asio;
constexpr auto kTuple = net::as_tuple(net::use_awaitable);
constexpr std::string_view kJson = "application/json";
constexpr std::string_view kEventStream = "text/event-stream";
constexpr unsigned kOk = 200;

Error FaultError(FaultKind kind, int retry_after_s) {
  switch (kind) {
    case FaultKind::kHttp503:
      return Error{ErrorCode::kUnavailable,
                   "The engine is currently overloaded, please try again later. (mock fault)", ""};
    case FaultKind::kHttp429:
      return Error{ErrorCode::kRateLimited,
                   "Rate limit reached. Please try again in " + std::to_string(retry_after_s) +
                       "s. (mock fault)",
                   ""};
    default:
      return Error{ErrorCode::kInternal,
                   "The server had an error while processing your request. (mock fault)", ""};
  }
}

bool IsStatusFault(FaultKind kind) {
  return kind == FaultKind::kHttp500 || kind == FaultKind::kHttp503 || kind == FaultKind::kHttp429;
}

}  // namespace

ChatReply::ChatReply(http::Exchange& exchange, const MockOptions& options, const ChatRequest& chat,
                     const ChatPlan& plan, const ReplyIdentity& identity, WorkerStats& stats,
                     net::io_context& context, std::string prepared)
    : exchange_(exchange),
      options_(options),
      chat_(chat),
      plan_(plan),
      identity_(identity),
      stats_(stats),
      timer_(context),
      prepared_(std::move(prepared)) {}

ChatReply::~ChatReply() {
  if (watching_) exchange_.StopWatching();
}

void ChatReply::OnClientGone() {
  gone_ = true;
  timer_.cancel();
}

net::awaitable<bool> ChatReply::Pause(Millis delay) {
  if (gone_ || delay <= Millis(0)) co_return !gone_;
  if (!watching_) {
    // One watch for the whole reply: a watch per delay would stack socket reads.
    watching_ = true;
    exchange_.WatchClient([this] { OnClientGone(); });
    // WatchClient calls back at once when the client is already known to be gone.
    if (gone_) co_return false;
  }
  timer_.expires_after(delay);
  co_await timer_.async_wait(kTuple);  // cancelled when the client leaves
  co_return !gone_;
}

std::string_view ChatReply::FinishReason() const {
  if (plan_.tool_call) return "tool_calls";
  return plan_.truncated ? "length" : "stop";
}

Usage ChatReply::MakeUsage() const {
  // Cache reads, then cache writes, take what the prompt has.
  const uint64_t cached = std::min<uint64_t>(options_.cached_tokens, chat_.prompt_tokens);
  const uint64_t written =
      std::min<uint64_t>(options_.cache_write_tokens, chat_.prompt_tokens - cached);
  // Reasoning is rendered only by the wires the mock has a form for (OpenAI chat's
  // reasoning_content, Anthropic's thinking blocks, Gemini's thought parts, Ollama's and
  // Cohere's thinking).
  const bool reasons =
      chat_.reasoning &&
      (chat_.wire == Wire::kOpenAi || chat_.wire == Wire::kAnthropic ||
       chat_.wire == Wire::kGemini || chat_.wire == Wire::kOllama || chat_.wire == Wire::kCohere);
  const uint64_t reasoning = reasons ? kMockReasoningTokens : 0;
  return Usage{chat_.prompt_tokens, static_cast<uint64_t>(plan_.tokens) + reasoning, cached,
               written, reasoning};
}

net::awaitable<void> ChatReply::Run() {
  if (plan_.slow_headers > Millis(0)) {
    stats_.AddFault(FaultKind::kSlowHeaders);
    const bool present = co_await Pause(plan_.slow_headers);
    if (!present) {
      stats_.Add(Counter::kClientDisconnects);
      exchange_.Abort();
      co_return;
    }
  }
  const bool reset_now = plan_.fault == FaultKind::kResetBeforeHead ||
                         (plan_.fault == FaultKind::kReset && !chat_.stream);
  if (reset_now) {
    stats_.AddFault(plan_.fault);
    exchange_.Abort();
    co_return;
  }
  if (IsStatusFault(plan_.fault)) {
    co_await RespondFault();
    co_return;
  }
  if (chat_.stream) {
    co_await RunStream();
  } else {
    co_await RunSingle();
  }
}

net::awaitable<void> ChatReply::RespondFault() {
  stats_.AddFault(plan_.fault);
  const Error error = FaultError(plan_.fault, options_.retry_after_s);
  if (plan_.fault == FaultKind::kHttp429) {
    exchange_.response_headers().Add("Retry-After", int64_t{options_.retry_after_s});
  }
  if (chat_.wire == Wire::kOllama) {
    std::string body = RenderOllamaError(error);
    co_await exchange_.Respond(OllamaStatus(error.code), kJson, std::move(body));
    co_return;
  }
  const bool anthropic = chat_.wire == Wire::kAnthropic;
  std::string body = anthropic ? RenderAnthropicError(error) : RenderErrorBody(error);
  unsigned status =
      anthropic ? AnthropicStatus(error.code) : static_cast<unsigned>(HttpStatus(error.code));
  if (chat_.wire == Wire::kCohere) {
    body = RenderCohereError(error);
    status = CohereStatus(error.code);
  } else if (chat_.wire == Wire::kGemini) {
    body = RenderGeminiError(error);
    status = GeminiStatus(error.code);
  }
  co_await exchange_.Respond(status, kJson, std::move(body));
}

net::awaitable<void> ChatReply::RunSingle() {
  // A single reply takes as long as the stream it stands for would.
  const Millis generation =
      plan_.first_token_delay + plan_.inter_token * std::max(0, plan_.tokens - 1);
  const bool present = co_await Pause(generation);
  if (!present) {
    stats_.Add(Counter::kClientDisconnects);
    exchange_.Abort();
    co_return;
  }
  const std::string_view tool = plan_.tool_call ? std::string_view(chat_.first_tool) : "";
  std::string body;
  if (!prepared_.empty()) {
    body = std::move(prepared_);
  } else if (chat_.wire == Wire::kAnthropic) {
    body = RenderMessage(identity_, plan_.tokens, tool, FinishReason(), MakeUsage());
  } else if (chat_.wire == Wire::kOllama) {
    body = RenderOllamaChat(identity_, plan_.tokens, tool, FinishReason(), MakeUsage());
  } else if (chat_.wire == Wire::kCohere) {
    body = RenderCohereChat(identity_, plan_.tokens, tool, FinishReason(), MakeUsage());
  } else if (chat_.wire == Wire::kGemini) {
    body = RenderGenerateContent(identity_, plan_.tokens, tool, FinishReason(), MakeUsage());
  } else if (chat_.wire == Wire::kResponses) {
    body = RenderResponsesReply(identity_, exchange_.request().body(), plan_.tokens, tool,
                                FinishReason(), MakeUsage());
  } else {
    body = RenderCompletion(identity_, plan_.tokens, tool, FinishReason(), MakeUsage());
  }
  stats_.Add(Counter::kCompletionTokens, static_cast<uint64_t>(plan_.tokens));
  co_await exchange_.Respond(kOk, kJson, std::move(body));
}

net::awaitable<void> ChatReply::RunStream() {
  stats_.Add(Counter::kStreamsStarted);
  // Each lives in the coroutine frame; only the one for the request's API is built.
  std::optional<ChunkRenderer> chunks;
  std::optional<MessageStreamRenderer> events;
  std::optional<OllamaStreamRenderer> lines;
  std::optional<CohereStreamRenderer> cohere_events;
  std::optional<GeminiStreamRenderer> gemini;
  std::optional<ResponsesStreamRenderer> responses;
  StreamRenderer* renderer = nullptr;
  if (chat_.wire == Wire::kResponses) {
    renderer = &responses.emplace(identity_, exchange_.request().body());
  } else if (chat_.wire == Wire::kGemini) {
    renderer = &gemini.emplace(identity_, MakeUsage());
  } else if (chat_.wire == Wire::kAnthropic) {
    renderer = &events.emplace(identity_, MakeUsage());
  } else if (chat_.wire == Wire::kOllama) {
    renderer = &lines.emplace(identity_, static_cast<int>(MakeUsage().reasoning_tokens));
  } else if (chat_.wire == Wire::kCohere) {
    renderer = &cohere_events.emplace(identity_, static_cast<int>(MakeUsage().reasoning_tokens));
  } else {
    renderer = &chunks.emplace(identity_, chat_.include_usage,
                               static_cast<int>(MakeUsage().reasoning_tokens));
  }
  const bool body_sent = co_await StreamBody(*renderer);
  if (!body_sent) {
    if (gone_) stats_.Add(Counter::kClientDisconnects);
    co_return;
  }
  if (plan_.fault == FaultKind::kCloseWithoutDone) {
    stats_.AddFault(plan_.fault);
    co_await exchange_.EndStream();
    co_return;
  }
  const std::string_view closing = renderer->Closing(FinishReason(), MakeUsage());
  bool closed = co_await exchange_.Write(closing);
  if (closed) closed = co_await exchange_.EndStream();
  if (!closed) {
    gone_ = true;
    stats_.Add(Counter::kClientDisconnects);
    co_return;
  }
  stats_.Add(Counter::kStreamsCompleted);
}

net::awaitable<bool> ChatReply::StreamBody(StreamRenderer& renderer) {
  const std::string_view content_type =
      chat_.wire == Wire::kOllama ? kNdjsonContentType : kEventStream;
  const bool head_sent = co_await exchange_.StartStream(kOk, content_type);
  gone_ = gone_ || !head_sent;
  const bool present = co_await Pause(plan_.first_token_delay);
  if (!present) co_return false;
  const std::string_view tool = plan_.tool_call ? std::string_view(chat_.first_tool) : "";
  const std::string_view opening = renderer.Opening(tool);
  const bool opened = co_await exchange_.Write(opening);
  if (!opened) {
    gone_ = true;
    co_return false;
  }
  const int reset_at = plan_.fault == FaultKind::kReset ? plan_.tokens / 2 : -1;
  for (int i = 0; i < plan_.tokens; ++i) {
    if (i == reset_at) break;
    if (i > 0) {
      const bool present = co_await Pause(plan_.inter_token);
      if (!present) co_return false;
    }
    const std::string_view chunk = plan_.tool_call ? renderer.ToolFragment(i) : renderer.Token(i);
    const bool written = co_await exchange_.Write(chunk);
    if (!written) {
      gone_ = true;
      co_return false;
    }
    stats_.Add(Counter::kCompletionTokens);
  }
  if (reset_at >= 0) {
    stats_.AddFault(FaultKind::kReset);
    exchange_.Abort();
    co_return false;
  }
  co_return true;
}

}  // namespace turnpike::mock
