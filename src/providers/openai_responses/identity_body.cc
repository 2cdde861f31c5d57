#include "providers/openai_responses/identity_body.h"

#include <algorithm>

#include "common/json_escape.h"
#include "providers/request_fields.h"
#include "stream/padded_json.h"

namespace turnpike::providers::openai_responses {
namespace {

namespace od = simdjson::ondemand;

constexpr std::string_view kWhitespace = " \t\r\n";
constexpr std::string_view kStoreMember = R"("store":false,)";
constexpr std::string_view kFalse = "false";

struct Range {
  size_t begin = 0, end = 0;
  bool found = false;
};

Error Unreadable() {
  return request::Invalid("We could not parse the JSON body of your request.", "");
}

}  // namespace

Result<std::string> ForwardResponsesBody(std::string_view body, std::string_view upstream_model) {
  stream::PaddedJsonParser parser;
  od::document doc;
  od::object root;
  if (parser.Iterate(body).get(doc) || doc.get_object().get(root)) return Unreadable();
  Range model, store;
  for (auto field : root) {
    std::string_view key;
    od::value value;
    if (field.unescaped_key().get(key) || field.value().get(value)) return Unreadable();
    Range* range = key == "model" ? &model : key == "store" ? &store : nullptr;
    if (range == nullptr) continue;
    if (range->found) {
      return request::Invalid("'" + std::string(key) + "' must not be given twice.",
                              std::string(key));
    }
    std::string_view token = value.raw_json_token();
    token = token.substr(0, token.find_last_not_of(kWhitespace) + 1);
    range->begin = static_cast<size_t>(token.data() - parser.data());
    range->end = range->begin + token.size();
    range->found = true;
    if (key == "store" && token != "false" && token != "null") {
      return request::Invalid("'store' must be false: this gateway stores no responses.", "store");
    }
  }
  if (!model.found) return request::WrongType("model", "a non-empty string");
  struct Splice {
    size_t begin, end;
    bool model;  // else the store splice
  };
  Splice splices[2] = {{model.begin, model.end, true}};
  size_t count = 1;
  if (!store.found) {
    const size_t after_brace = body.find('{') + 1;
    splices[count++] = {after_brace, after_brace, false};
  } else if (body.substr(store.begin, store.end - store.begin) == "null") {
    splices[count++] = {store.begin, store.end, false};
  }
  std::sort(splices, splices + count,
            [](const Splice& a, const Splice& b) { return a.begin < b.begin; });
  std::string out;
  out.reserve(body.size() + upstream_model.size() + kStoreMember.size());
  size_t pos = 0;
  for (size_t i = 0; i < count; ++i) {
    out.append(body, pos, splices[i].begin - pos);
    if (splices[i].model) {
      AppendJsonQuoted(out, upstream_model);
    } else {
      out.append(splices[i].begin == splices[i].end ? kStoreMember : kFalse);
    }
    pos = splices[i].end;
  }
  out.append(body, pos);
  return out;
}

}  // namespace turnpike::providers::openai_responses
