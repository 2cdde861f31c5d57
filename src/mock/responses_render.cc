#include "mock/responses_render.h"

#include "providers/openai_responses/responses_provider.h"

namespace turnpike::mock {
namespace {

using providers::EventKind;
using providers::StreamEvent;

// The Responses dialect, immutable and stateless: one for the process is enough.
const providers::openai_responses::ResponsesProvider& Dialect() {
  static const providers::openai_responses::ResponsesProvider dialect;
  return dialect;
}

providers::FinishReason Finish(std::string_view reason) {
  if (reason == "length") return providers::FinishReason::kLength;
  if (reason == "tool_calls") return providers::FinishReason::kToolCalls;
  return providers::FinishReason::kStop;
}

providers::TokenUsage Counts(const Usage& usage) {
  providers::TokenUsage counts;
  counts.prompt_tokens = static_cast<int64_t>(usage.prompt_tokens);
  counts.completion_tokens = static_cast<int64_t>(usage.completion_tokens);
  counts.cached_tokens = static_cast<int64_t>(usage.cached_tokens);
  return counts;
}

providers::EncoderOptions Options(const ReplyIdentity& identity, std::string_view request_body) {
  providers::EncoderOptions options;
  options.created = identity.created;
  options.client_body = request_body;
  return options;
}

}  // namespace

std::string RenderResponsesReply(const ReplyIdentity& identity, std::string_view request_body,
                                 int tokens, std::string_view tool, std::string_view finish_reason,
                                 const Usage& usage) {
  providers::Response response;
  response.id = identity.id;
  response.model = std::string(identity.model);
  if (tool.empty()) {
    for (int i = 0; i < tokens; ++i) AppendTokenText(response.text, identity, i);
  } else {
    response.tool_calls.push_back({identity.call_id, std::string(tool), R"({"location":"Paris"})"});
  }
  response.finish = Finish(finish_reason);
  response.usage = Counts(usage);
  return Dialect().RenderWholeResponse(response, Options(identity, request_body));
}

ResponsesStreamRenderer::ResponsesStreamRenderer(const ReplyIdentity& identity,
                                                 std::string_view request_body)
    : identity_(identity), encoder_(Dialect().NewEncoder(Options(identity, request_body))) {
  encoder_->set_output(buffer_);
}

std::string_view ResponsesStreamRenderer::Feed(const StreamEvent& event) {
  encoder_->OnEvent(event);
  return buffer_;
}

std::string_view ResponsesStreamRenderer::Opening(std::string_view tool) {
  buffer_.clear();
  StreamEvent start;
  start.kind = EventKind::kStart;
  start.id = identity_.id;
  start.model = identity_.model;
  Feed(start);
  if (tool.empty()) return buffer_;
  StreamEvent call;
  call.kind = EventKind::kToolCallStart;
  call.id = identity_.call_id;
  call.name = tool;
  return Feed(call);
}

std::string_view ResponsesStreamRenderer::Token(int index) {
  buffer_.clear();
  text_.clear();
  AppendTokenText(text_, identity_, index);
  StreamEvent delta;
  delta.kind = EventKind::kTextDelta;
  delta.text = text_;
  return Feed(delta);
}

std::string_view ResponsesStreamRenderer::ToolFragment(int index) {
  buffer_.clear();
  StreamEvent delta;
  delta.kind = EventKind::kToolArgsDelta;
  delta.text = kToolArgumentFragments[static_cast<size_t>(index) % kToolArgumentFragments.size()];
  return Feed(delta);
}

std::string_view ResponsesStreamRenderer::Closing(std::string_view finish_reason,
                                                  const Usage& usage) {
  buffer_.clear();
  StreamEvent finish;
  finish.kind = EventKind::kFinish;
  finish.finish = Finish(finish_reason);
  Feed(finish);
  StreamEvent counts;
  counts.kind = EventKind::kUsage;
  counts.usage = Counts(usage);
  Feed(counts);
  StreamEvent end;
  end.kind = EventKind::kEnd;
  return Feed(end);
}

}  // namespace turnpike::mock
