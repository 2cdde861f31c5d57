#include "doors/search/bulk.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "doors/search/es_error.h"

namespace turnpike::search {
namespace {

namespace json = boost::json;

Error LineError(size_t line, std::string why) {
  return EsError(kIllegalArgument, "bulk line " + std::to_string(line) + ": " + std::move(why));
}

// The next non-blank line of `body` from `pos`; false at the end.
bool NextLine(std::string_view body, size_t& pos, size_t& line_no, std::string_view& line) {
  while (pos < body.size()) {
    size_t end = body.find('\n', pos);
    if (end == std::string_view::npos) end = body.size();
    line = body.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

Result<std::vector<BulkAction>> ReadBulk(std::string_view body, std::string_view default_index) {
  std::vector<BulkAction> actions;
  size_t pos = 0;
  size_t line_no = 0;
  std::string_view line;
  while (NextLine(body, pos, line_no, line)) {
    if (actions.size() >= kMaxBulkActions) {
      return LineError(line_no, "more than " + std::to_string(kMaxBulkActions) + " actions");
    }
    boost::system::error_code ec;
    json::value action = json::parse(line, ec);
    const json::object* o = action.if_object();
    if (ec || o == nullptr || o->size() != 1 || !o->begin()->value().is_object()) {
      return LineError(line_no, "an action must be {\"<action>\": {...metadata...}}");
    }
    BulkAction out;
    const std::string_view verb = o->begin()->key();
    if (verb == "index") {
      out.kind = WriteOp::Kind::kIndex;
    } else if (verb == "create") {
      out.kind = WriteOp::Kind::kCreate;
    } else if (verb == "delete") {
      out.kind = WriteOp::Kind::kDelete;
    } else if (verb == "update") {
      out.kind = WriteOp::Kind::kUpdate;
    } else {
      return LineError(line_no, "unknown action [" + std::string(verb) + "]");
    }
    for (const auto& [key, value] : o->begin()->value().as_object()) {
      if (key == "_index" && value.is_string()) {
        out.index = std::string(value.as_string());
      } else if (key == "_id" && (value.is_string() || value.is_number())) {
        out.id = value.is_string() ? std::string(value.as_string()) : json::serialize(value);
      } else if (key != "routing" && key != "_source") {
        return LineError(line_no, "unsupported action parameter [" + std::string(key) + "]");
      }
    }
    if (out.index.empty()) out.index = std::string(default_index);
    if (out.index.empty()) return LineError(line_no, "no index given for the action");
    if (out.id.empty() && out.kind != WriteOp::Kind::kIndex) {
      return LineError(line_no, "[" + std::string(verb) + "] needs an [_id]");
    }
    if (out.kind != WriteOp::Kind::kDelete) {
      if (!NextLine(body, pos, line_no, line)) {
        return LineError(line_no, "the action has no source line");
      }
      if (out.kind == WriteOp::Kind::kUpdate) {
        json::value source = json::parse(line, ec);
        const json::object* u = source.if_object();
        const json::value* doc = u != nullptr ? u->if_contains("doc") : nullptr;
        if (ec || doc == nullptr || !doc->is_object() || u->size() != 1) {
          return LineError(line_no,
                           "an update takes exactly {\"doc\": {...}} (scripts and "
                           "upserts are not implemented)");
        }
        out.source = json::serialize(*doc);
      } else {
        // The document is parsed once, when it is typed against its index's mapping
        // (ExtractDocument): a malformed one fails its own item there, as in ES.
        const size_t first = line.find_first_not_of(" \t");
        if (line[first] != '{') return LineError(line_no, "the source must be a JSON object");
        out.source = std::string(line);
      }
    }
    actions.push_back(std::move(out));
  }
  return actions;
}

}  // namespace turnpike::search
