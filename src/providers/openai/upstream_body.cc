// BuildUpstreamChatBody: splices into the client's bytes instead of re-serializing them.
#include <algorithm>
#include <string>

#include "common/json_escape.h"
#include "providers/openai/chat_request.h"

namespace turnpike::providers::openai {
namespace {

constexpr std::string_view kWhitespace = " \t\r\n";
constexpr std::string_view kStreamOptionsMember = R"("stream_options":{"include_usage":true},)";
constexpr std::string_view kStreamOptionsValue = R"({"include_usage":true})";
constexpr std::string_view kIncludeUsageOnly = R"("include_usage":true)";
constexpr std::string_view kIncludeUsageFirst = R"("include_usage":true,)";
constexpr std::string_view kTrue = "true";

// Replace body[begin, end) with `text`, or with the upstream model token when `text` is empty.
struct Splice {
  size_t begin = 0, end = 0;
  std::string_view text;
};

Splice IncludeUsageSplice(std::string_view body, const ChatRequestInfo& info) {
  if (!info.has_stream_options) {
    const size_t after_brace = body.find('{') + 1;
    return Splice{after_brace, after_brace, kStreamOptionsMember};
  }
  if (body[info.stream_options_begin] != '{') {  // null
    return Splice{info.stream_options_begin, info.stream_options_end, kStreamOptionsValue};
  }
  if (info.include_usage_end != 0) {
    return Splice{info.include_usage_begin, info.include_usage_end, kTrue};
  }
  const size_t after_brace = info.stream_options_begin + 1;
  const size_t next = body.find_first_not_of(kWhitespace, after_brace);
  const bool empty = next != std::string_view::npos && body[next] == '}';
  return Splice{after_brace, after_brace, empty ? kIncludeUsageOnly : kIncludeUsageFirst};
}

}  // namespace

std::string BuildUpstreamChatBody(std::string_view body, const ChatRequestInfo& info,
                                  std::string_view upstream_model, bool force_include_usage) {
  Splice splices[2] = {Splice{info.model_begin, info.model_end, {}}};
  size_t count = 1;
  if (force_include_usage && info.stream && !info.include_usage) {
    splices[count++] = IncludeUsageSplice(body, info);
  }
  std::sort(splices, splices + count,
            [](const Splice& a, const Splice& b) { return a.begin < b.begin; });

  std::string out;
  out.reserve(body.size() + upstream_model.size() + kStreamOptionsMember.size());
  size_t pos = 0;
  for (size_t i = 0; i < count; ++i) {
    out.append(body, pos, splices[i].begin - pos);
    if (splices[i].text.empty()) {
      AppendJsonQuoted(out, upstream_model);
    } else {
      out.append(splices[i].text);
    }
    pos = splices[i].end;
  }
  out.append(body, pos);
  return out;
}

}  // namespace turnpike::providers::openai
