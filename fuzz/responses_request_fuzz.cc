// An OpenAI Responses request body (input items, instructions, tools, reasoning, text.format...)
// as a client sends it, read into the pivot both from the bytes and from a parsed document (the
// hand-off path), then built for every upstream dialect; its model and store:false spliced as the
// identity path does; and, for a body the door accepts, the request fields a response echoes.
// Checks the pivot's string `model`.
#include <boost/json/parse.hpp>

#include "fuzz_support.h"
#include "providers/openai_responses/request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const turnpike::providers::openai_responses::ResponsesProvider kResponses;
  const std::string_view body = turnpike::fuzz::AsText(data, size);
  boost::system::error_code ec;
  boost::json::value document = boost::json::parse(body, ec);
  if (!ec && document.is_object()) {
    turnpike::Result<boost::json::object> pivot =
        kResponses.ParseRequestDocument(document.as_object());
    const boost::json::value* model = pivot.ok() ? pivot.value().if_contains("model") : nullptr;
    if (pivot.ok() && (model == nullptr || !model->is_string())) __builtin_trap();
  }
  // EchoFields expects a body ParseRequest accepted (it reads `text` as an object).
  if (turnpike::fuzz::ClientRequestToEveryUpstream(kResponses, body)) {
    (void)turnpike::providers::openai_responses::EchoFields(body);
  }
  return 0;
}
