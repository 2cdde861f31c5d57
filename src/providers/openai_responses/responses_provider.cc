#include "providers/openai_responses/responses_provider.h"

#include "providers/json_text.h"
#include "providers/openai/stream_codec.h"
#include "providers/openai_responses/identity_body.h"
#include "providers/openai_responses/render.h"
#include "providers/openai_responses/request.h"
#include "providers/openai_responses/stream_decoder.h"
#include "providers/openai_responses/stream_encoder.h"
#include "providers/openai_responses/upstream_answer.h"
#include "providers/openai_responses/upstream_request.h"
#include "providers/reasoning.h"

namespace turnpike::providers::openai_responses {
namespace {

std::string Escaped(std::string_view text) {
  std::string out;
  AppendJsonEscaped(out, text);
  return out;
}

}  // namespace

UpstreamEndpoint ResponsesProvider::Endpoint(const EndpointParams& params) const {
  UpstreamEndpoint endpoint;
  endpoint.path = std::string(params.base_path) + "/responses";
  endpoint.stream_path = endpoint.path;
  if (!params.api_key.empty()) endpoint.authorization = "Bearer " + std::string(params.api_key);
  return endpoint;
}

Result<std::string> ResponsesProvider::BuildRequest(const boost::json::object& chat,
                                                    const UpstreamRequestOptions& options) const {
  return BuildResponsesRequest(chat, options);
}

std::unique_ptr<StreamDecoder> ResponsesProvider::NewDecoder() const {
  return std::make_unique<ResponsesStreamDecoder>();
}

Result<Response> ResponsesProvider::ParseResponse(std::string_view body) const {
  return ParseResponseBody(body);
}

Error ResponsesProvider::ParseError(int status, std::string_view body) const {
  return openai::ParseErrorEnvelope(status, body);
}

Result<std::string> ResponsesProvider::IdentityBody(std::string_view body,
                                                    std::string_view upstream_model) const {
  return ForwardResponsesBody(body, upstream_model);
}

Result<boost::json::object> ResponsesProvider::ParseRequest(std::string_view body) const {
  return ParseResponsesRequest(body);
}

Result<boost::json::object> ResponsesProvider::ParseRequestDocument(
    const boost::json::object& document) const {
  return ParseResponsesDocument(document);
}

std::unique_ptr<StreamEncoder> ResponsesProvider::NewEncoder(const EncoderOptions& options) const {
  return std::make_unique<ResponsesStreamEncoder>(options);
}

std::string ResponsesProvider::RenderResponse(const Response& response, int64_t created) const {
  EncoderOptions options;
  options.created = created;
  return RenderWholeResponse(response, options);
}

std::string ResponsesProvider::RenderWholeResponse(const Response& response,
                                                   const EncoderOptions& options) const {
  const std::string id = "resp_" + Escaped(response.id);
  const std::string model = Escaped(response.model);
  const std::string echo = EchoFieldsOf(options);
  std::vector<OutputItem> items;
  if (!response.reasoning.empty()) {
    OutputItem reasoning;
    reasoning.is_reasoning = true;
    reasoning.id = "rs_" + Escaped(response.id);
    reasoning.text = Escaped(response.reasoning);
    if (!response.reasoning_signature.empty()) {
      reasoning.encrypted =
          std::string(reasoning::kStreamIssuer) + ":" + Escaped(response.reasoning_signature);
    }
    items.push_back(std::move(reasoning));
  }
  if (!response.text.empty()) {
    OutputItem message;
    message.id = "msg_" + Escaped(response.id);
    message.text = Escaped(response.text);
    items.push_back(std::move(message));
  }
  for (const ToolCall& call : response.tool_calls) {
    OutputItem item;
    item.is_call = true;
    item.call_id = Escaped(call.id);
    item.id = "fc_" + item.call_id;
    item.name = Escaped(call.name);
    item.text = Escaped(call.arguments);
    items.push_back(std::move(item));
  }
  std::string out;
  const ResponseHead head{id, model, options.created, echo};
  AppendResponse(out, head, StatusFor(response.finish), response.finish, items, &response.usage,
                 nullptr);
  return out;
}

ErrorReply ResponsesProvider::RenderError(const Error& error) const {
  Error named = error;
  if (!named.param.empty()) {
    named.param = ClientParam(error.param);
    // A message quoting the pivot's name quotes the client's instead.
    const size_t at = named.message.find(error.param);
    if (at != std::string::npos) named.message.replace(at, error.param.size(), named.param);
  }
  std::string body = R"({"error":)" + openai::ErrorObject(named) + "}";
  return ErrorReply{HttpStatus(error.code), std::move(body)};
}

}  // namespace turnpike::providers::openai_responses
