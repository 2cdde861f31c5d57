// A Responses request's `instructions` and `input` items -> the pivot's `messages`, and the
// field checks that request.cc and request_input.cc share. Internal to the request translation
// of providers/openai_responses/ (request.h is its entry point; README.md in this folder has the
// field mapping).
//
// Pure functions; thread-safe. Errors: kInvalidRequest with `param` naming the client's field in
// OpenAI's style ("input[2].content[0].image_url").
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/storage_ptr.hpp>
#include <boost/json/string.hpp>
#include <initializer_list>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/result.h"

namespace turnpike::providers::openai_responses {

// "'<param>' is not supported here: <why>", naming `param`.
Error Unsupported(const std::string& param, std::string_view why);

// Every member of `object` that is not null is named in `known`, or is one that changes nothing
// for the model (type, id, status); else Unsupported naming "<param>.<key>".
Status CheckFields(const boost::json::object& object, std::initializer_list<std::string_view> known,
                   const std::string& param);

// `object[key]`, which must be a string (else WrongType naming "<param>.<key>"): a view of it.
Result<boost::json::string_view> StringField(const boost::json::object& object,
                                             std::string_view key, const std::string& param);

// The pivot's messages: `instructions` as a system message, then `input` (a string is one user
// message; an array holds message, function_call and function_call_output items). Consecutive
// function calls, with the assistant text just before them, become one assistant turn. Errors:
// `input` missing, empty or of the wrong type, or an item or field the pivot cannot carry. The
// messages live in `sp` (an agent turn's arena: request.h).
Result<boost::json::array> TranslateMessages(const boost::json::object& request,
                                             boost::json::storage_ptr sp = {});
// The same for a request whose `input` is the one item `item` and that has no instructions,
// without building that request (an agent turn translates each item it remembers alone), its
// messages in `sp`.
Result<boost::json::array> TranslateItem(const boost::json::value& item,
                                         boost::json::storage_ptr sp = {});

}  // namespace turnpike::providers::openai_responses
