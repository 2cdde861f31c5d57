// Helpers every dialect uses while translating a request: the client errors, worded the same
// in every dialect (kInvalidRequest with `param` naming the client's field), and small readers
// over a boost::json request with field paths for those errors.
//
// Pure functions; thread-safe.
#pragma once

#include <boost/json/object.hpp>
#include <cstddef>
#include <string>
#include <string_view>

#include "common/error.h"

namespace turnpike::providers::request {

// A 400 (kInvalidRequest) about the client's field `param`.
Error Invalid(std::string message, std::string param);
// "'<param>' is not supported by this model's provider (<provider>)."
Error UnsupportedBy(const std::string& param, std::string_view provider);
// "Invalid type for '<param>': expected <expected>."
Error WrongType(const std::string& param, std::string_view expected);

// Whether `key` is in `object` with a value other than null.
bool Present(const boost::json::object& object, std::string_view key);

// "<base>[<index>]", the OpenAI way of naming an array element in `param`.
std::string At(const std::string& base, size_t index);

}  // namespace turnpike::providers::request
