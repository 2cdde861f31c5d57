// The Gemini client role's request side (internal to providers/gemini/): a
// GenerateContentRequest body, as @google/genai sends it to
// POST /v1beta/models/{model}:generateContent, read into the pivot (an OpenAI chat request,
// provider.h). See README.md ("Client role") for the field mapping and what is refused.
//
// The model and streaming are in the URL, not the body: the pivot gets `model` "" and no
// `stream`; the LLM door splices both in from the path (doors/llm/chat_flow_dialects.cc).
//
// Stateless; thread-safe. Errors: kInvalidRequest naming the client's field in `param`, in
// Gemini's camelCase ("contents[1].parts[0].fileData").
#pragma once

#include <boost/json/object.hpp>
#include <string_view>

#include "common/result.h"

namespace turnpike::providers::gemini {

Result<boost::json::object> ParseGenerateContentRequest(std::string_view body);

}  // namespace turnpike::providers::gemini
