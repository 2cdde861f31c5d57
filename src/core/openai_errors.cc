#include "core/openai_errors.h"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace turnpike::core {
namespace {

boost::json::object ErrorObject(const Error& error, std::string_view code_name = {}) {
  std::string_view code = code_name.empty() ? ErrorCodeName(error.code) : code_name;
  if (error.code == ErrorCode::kNotFound && error.param == "model") code = "model_not_found";
  boost::json::object inner;
  inner["message"] = error.message;
  inner["type"] = OpenAiErrorType(error.code);
  if (error.param.empty()) {
    inner["param"] = nullptr;
  } else {
    inner["param"] = error.param;
  }
  inner["code"] = code;
  boost::json::object outer;
  outer["error"] = std::move(inner);
  return outer;
}

}  // namespace

std::string OpenAiErrorBody(const Error& error) {
  return boost::json::serialize(ErrorObject(error));
}

std::string OpenAiErrorBody(const Error& error, std::string_view code) {
  return boost::json::serialize(ErrorObject(error, code));
}

std::string OpenAiStreamErrorEvent(const Error& error) {
  return "data: " + boost::json::serialize(ErrorObject(error)) + "\n\n";
}

}  // namespace turnpike::core
