// The Cohere client role's request side (internal to providers/cohere/): a v2 Chat request, as
// the cohere-ai SDK sends it to POST /v2/chat, read into the pivot (an OpenAI chat request,
// provider.h); and the identity body for a cohere deployment. See README.md ("Client role").
//
// Stateless; thread-safe. Errors: kInvalidRequest naming the client's field in `param`
// ("messages[1].content[0].type").
#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "common/result.h"

namespace turnpike::providers::cohere {

Result<boost::json::object> ParseChatRequest(std::string_view body);

// The client's body with `model` replaced by `upstream_model`, the rest as sent.
Result<std::string> SpliceModel(std::string_view body, std::string_view upstream_model);

}  // namespace turnpike::providers::cohere
