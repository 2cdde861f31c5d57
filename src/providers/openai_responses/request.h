// OpenAI Responses API request bodies (POST /v1/responses, the stateless form) -> the pivot (an
// OpenAI chat completions request), and the request fields a Responses answer echoes back.
// Internal to providers/openai_responses/; README.md in this folder has the field mapping and
// the list of what is refused.
//
// Stateless; thread-safe. Errors: kInvalidRequest with `param` naming the client's field in
// OpenAI's style ("input[2].content[0].image_url", "tools[1].type", "store").
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/storage_ptr.hpp>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "providers/provider.h"

namespace turnpike::providers::openai_responses {

// The whole request, validated and translated. The pivot always has `model` and `messages`;
// `stream` requests also get stream_options.include_usage (a Responses stream always ends with
// its usage).
Result<boost::json::object> ParseResponsesRequest(std::string_view body);
// The same from a body already parsed (Provider::ParseRequestDocument). The pivot lives in `sp`
// (an agent turn's arena, freed at once with the turn).
Result<boost::json::object> ParseResponsesDocument(const boost::json::object& document,
                                                   boost::json::storage_ptr sp = {});

// The members a response object echoes from the request, rendered once per request as JSON
// object members without the braces and without a trailing comma:
//   "instructions":..,"max_output_tokens":..,"metadata":..,"parallel_tool_calls":..,
//   "previous_response_id":null,"reasoning":..,"store":false,"temperature":..,"text":..,
//   "tool_choice":..,"tools":..,"top_p":..,"truncation":"disabled","user":..
// with the API's defaults for fields the request left out. A body that does not parse (it was
// already validated, so only in tests) gives the defaults. Cost: a second DOM parse of the
// body, once per request (not per chunk); the pivot does not keep these fields.
std::string EchoFields(std::string_view body);
// The members an answer to `options`' request echoes: options.echo when set, else those of
// options.client_document when set, else of options.client_body.
std::string EchoFieldsOf(const EncoderOptions& options);
// A member a caller echoes in place of the request's (an agent turn: its instructions, metadata,
// store, previous_response_id, conversation): its key, and its value as JSON text.
struct EchoMember {
  std::string_view key;
  std::string_view json;
};
// The same members from a request already parsed, with each of `own` replacing the member of
// its key, or added after the others in the order given (a key not echoed above).
std::string EchoFields(const boost::json::object& request, std::span<const EchoMember> own);

// A pivot field name in an error (from an upstream dialect refusing the pivot, or an upstream
// error) -> the Responses field the client wrote: max_completion_tokens -> max_output_tokens,
// response_format... -> text.format..., tools[i].function.x -> tools[i].x, messages... -> input,
// reasoning_effort -> reasoning.effort, verbosity -> text.verbosity. Others are unchanged.
std::string ClientParam(std::string_view pivot_param);

}  // namespace turnpike::providers::openai_responses
