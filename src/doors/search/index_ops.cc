// The search door's index, mapping, document and bulk operations.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <map>

#include "common/json_escape.h"
#include "doors/search/bulk.h"
#include "doors/search/es_error.h"
#include "doors/search/render.h"
#include "doors/search/search_door.h"

namespace turnpike::search {
namespace {

namespace json = boost::json;
using Verb = boost::beast::http::verb;
using Reply = SearchDoor::Reply;

constexpr std::string_view kAcknowledged = R"({"acknowledged":true})";

int64_t ElapsedMs(Clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
}

// PUT /{index} body: {"mappings": {...}, "settings": {...}}.
Result<Mapping> CreateBody(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return Mapping{};
  boost::system::error_code ec;
  json::value root = json::parse(body, ec);
  if (ec || !root.is_object()) return EsError(kParsingException, "the body must be a JSON object");
  Mapping mapping;
  for (const auto& [key, value] : root.as_object()) {
    if (key == "mappings") {
      Result<Mapping> m = ParseMapping(json::serialize(value));
      if (!m.ok()) return m.error();
      mapping = std::move(*m);
    } else if (key == "settings") {
      // A single-shard index on one node: shard and replica counts and the refresh interval
      // are accepted (they change nothing here); other settings are refused.
      const json::object* s = value.if_object();
      if (s == nullptr) return EsError(kIllegalArgument, "[settings] must be an object");
      const json::object* index =
          s->contains("index") && s->at("index").is_object() ? &s->at("index").as_object() : s;
      for (const auto& [k, v] : *index) {
        std::string_view name = k;
        if (name.starts_with("index.")) name.remove_prefix(6);
        if (name != "number_of_shards" && name != "number_of_replicas" &&
            name != "refresh_interval") {
          return EsError(kIllegalArgument, "index setting [" + std::string(k) +
                                               "] is not supported by this endpoint");
        }
      }
    } else if (key != "aliases" || !value.is_object() || !value.as_object().empty()) {
      return EsError(kParsingException,
                     "unsupported key [" + std::string(key) + "] in the create-index body");
    }
  }
  return mapping;
}

std::string ItemBody(std::string_view index, const WriteResult& r) {
  std::string item = RenderWrite(index, r);
  if (r.outcome != WriteResult::Outcome::kFailed) {
    item.pop_back();
    item += R"(,"status":)" + std::to_string(WriteStatus(r)) + "}";
  }
  return item;
}

std::string_view VerbName(WriteOp::Kind kind) {
  switch (kind) {
    case WriteOp::Kind::kIndex:
      return "index";
    case WriteOp::Kind::kCreate:
      return "create";
    case WriteOp::Kind::kDelete:
      return "delete";
    case WriteOp::Kind::kUpdate:
      return "update";
  }
  return "index";
}

}  // namespace

boost::asio::awaitable<Reply> SearchDoor::IndexOp(Call& call) {
  const Verb method = call.exchange.request().method();
  const std::string& name = call.target.index;
  if (method == Verb::put) {
    Result<Mapping> mapping = CreateBody(call.exchange.request().body());
    if (!mapping.ok()) co_return ErrorOf(mapping.error());
    Status s = co_await backend_->CreateIndex(call.scope, std::move(*mapping), call.deadline);
    if (!s.ok()) co_return ErrorOf(s.error());
    std::string body = R"({"acknowledged":true,"shards_acknowledged":true,"index":)";
    AppendJsonQuoted(body, name);
    co_return Reply{200, body + "}"};
  }
  if (method == Verb::delete_) {
    Status s = co_await backend_->DeleteIndex(call.scope, call.deadline);
    if (!s.ok()) co_return ErrorOf(s.error());
    co_return Reply{200, std::string(kAcknowledged)};
  }
  Result<IndexInfo> info = co_await backend_->GetIndex(call.scope, call.deadline);
  if (!info.ok()) co_return ErrorOf(info.error());
  std::string body = "{";
  AppendJsonQuoted(body, name);
  body +=
      R"(:{"aliases":{},"mappings":)" + RenderMapping(info->mapping) +
      R"(,"settings":{"index":{"number_of_shards":"1","number_of_replicas":"0","provided_name":)";
  AppendJsonQuoted(body, name);
  body += R"(,"creation_date":")" + std::to_string(info->created_ms) + R"("}}}})";
  co_return Reply{200, std::move(body)};
}

boost::asio::awaitable<Reply> SearchDoor::MappingOp(Call& call) {
  Result<IndexInfo> info = co_await backend_->GetIndex(call.scope, call.deadline);
  if (!info.ok()) co_return ErrorOf(info.error());
  if (call.exchange.request().method() == Verb::get) {
    std::string body = "{";
    AppendJsonQuoted(body, call.target.index);
    body += R"(:{"mappings":)" + RenderMapping(info->mapping) + "}}";
    co_return Reply{200, std::move(body)};
  }
  Result<Mapping> added = ParseMapping(call.exchange.request().body());
  if (!added.ok()) co_return ErrorOf(added.error());
  Result<Mapping> merged = MergeMapping(info->mapping, *added);
  if (!merged.ok()) co_return ErrorOf(merged.error());
  Status s = co_await backend_->PutMapping(call.scope, std::move(*merged), call.deadline);
  if (!s.ok()) co_return ErrorOf(s.error());
  co_return Reply{200, std::string(kAcknowledged)};
}

boost::asio::awaitable<Reply> SearchDoor::DocOp(Call& call) {
  const Verb method = call.exchange.request().method();
  const std::string_view body = call.exchange.request().body();
  const std::string& index = call.target.index;
  if (call.target.op == Op::kDoc && (method == Verb::get || method == Verb::head)) {
    Result<std::optional<StoredDocument>> doc =
        co_await backend_->Get(call.scope, call.target.id, call.deadline);
    if (!doc.ok()) co_return ErrorOf(doc.error());
    std::string out = R"({"_index":)";
    AppendJsonQuoted(out, index);
    out += R"(,"_id":)";
    AppendJsonQuoted(out, call.target.id);
    if (!doc->has_value()) co_return Reply{404, out + R"(,"found":false})"};
    out += R"(,"_version":)" + std::to_string((*doc)->version) + R"(,"_seq_no":)" +
           std::to_string((*doc)->seq_no) + R"(,"_primary_term":1,"found":true,"_source":)" +
           (*doc)->source + "}";
    co_return Reply{200, std::move(out)};
  }
  WriteOp op;
  op.doc.id = call.target.id;
  if (call.target.op == Op::kDoc && method == Verb::delete_) {
    op.kind = WriteOp::Kind::kDelete;
  } else if (call.target.op == Op::kUpdate) {
    op.kind = WriteOp::Kind::kUpdate;
    boost::system::error_code ec;
    json::value root = json::parse(body, ec);
    const json::object* o = root.if_object();
    if (ec || o == nullptr || o->size() != 1 || !o->contains("doc") || !o->at("doc").is_object()) {
      co_return ErrorOf(EsError(kIllegalArgument,
                                "an update takes exactly {\"doc\": {...}} "
                                "(scripts and upserts are not implemented)"));
    }
    op.doc.source = json::serialize(o->at("doc"));
  } else {
    op.kind = call.target.op == Op::kCreate || call.target.op_create ? WriteOp::Kind::kCreate
                                                                     : WriteOp::Kind::kIndex;
    Result<IndexInfo> info = co_await backend_->GetIndex(call.scope, call.deadline);
    if (!info.ok()) co_return ErrorOf(info.error());
    Result<Document> doc = ExtractDocument(info->mapping, call.target.id, std::string(body));
    if (!doc.ok()) co_return ErrorOf(doc.error());
    op.doc = std::move(*doc);
  }
  std::vector<WriteOp> ops;
  ops.push_back(std::move(op));
  Result<std::vector<WriteResult>> written =
      co_await backend_->Write(call.scope, std::move(ops), call.deadline);
  if (!written.ok()) co_return ErrorOf(written.error());
  const WriteResult& r = written->front();
  if (r.outcome == WriteResult::Outcome::kFailed) co_return ErrorOf(r.error);
  co_return Reply{WriteStatus(r), RenderWrite(index, r)};
}

boost::asio::awaitable<Reply> SearchDoor::BulkOp(Call& call) {
  const Clock::time_point start = Clock::now();
  Result<std::vector<BulkAction>> actions =
      ReadBulk(call.exchange.request().body(), call.target.index);
  if (!actions.ok()) co_return ErrorOf(actions.error());
  std::vector<std::string> items(actions->size());
  bool errors = false;
  std::map<std::string, Result<Mapping>> mappings;  // this request's lookups, by index
  for (size_t begin = 0; begin < actions->size();) {
    const std::string index = (*actions)[begin].index;
    size_t end = begin;
    while (end < actions->size() && (*actions)[end].index == index) ++end;
    Status valid = ValidIndexName(index);
    auto known = mappings.find(index);
    if (known == mappings.end() && valid.ok()) {
      Scope scope{call.scope.tenant, index};
      Result<IndexInfo> info = co_await backend_->GetIndex(scope, call.deadline);
      known = mappings
                  .emplace(index, info.ok() ? Result<Mapping>(std::move(info->mapping))
                                            : Result<Mapping>(info.error()))
                  .first;
    }
    const Error* index_error = !valid.ok()           ? &valid.error()
                               : !known->second.ok() ? &known->second.error()
                                                     : nullptr;
    std::vector<WriteOp> ops;
    std::vector<size_t> positions;
    for (size_t i = begin; i < end; ++i) {
      BulkAction& a = (*actions)[i];
      WriteResult failed{a.id, WriteResult::Outcome::kFailed};
      if (index_error != nullptr) {
        failed.error = *index_error;
      } else if (a.kind == WriteOp::Kind::kIndex || a.kind == WriteOp::Kind::kCreate) {
        Result<Document> doc = ExtractDocument(*known->second, a.id, std::move(a.source));
        if (doc.ok()) {
          ops.push_back(WriteOp{a.kind, std::move(*doc)});
          positions.push_back(i);
          continue;
        }
        failed.error = doc.error();
      } else {
        WriteOp op{a.kind, {}};
        op.doc.id = a.id;
        op.doc.source = std::move(a.source);
        ops.push_back(std::move(op));
        positions.push_back(i);
        continue;
      }
      errors = true;
      items[i] = "{\"" + std::string(VerbName(a.kind)) + "\":" + ItemBody(index, failed) + "}";
    }
    if (!ops.empty()) {
      if (call.written.empty() || call.written.back() != index) call.written.push_back(index);
      Scope scope{call.scope.tenant, index};
      Result<std::vector<WriteResult>> written =
          co_await backend_->Write(scope, std::move(ops), call.deadline);
      if (!written.ok()) co_return ErrorOf(written.error());
      for (size_t k = 0; k < written->size(); ++k) {
        const WriteResult& r = (*written)[k];
        const size_t i = positions[k];
        errors |= r.outcome == WriteResult::Outcome::kFailed;
        items[i] =
            "{\"" + std::string(VerbName((*actions)[i].kind)) + "\":" + ItemBody(index, r) + "}";
      }
    }
    begin = end;
  }
  std::string out = R"({"took":)" + std::to_string(ElapsedMs(start)) + R"(,"errors":)" +
                    (errors ? "true" : "false") + R"(,"items":[)";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += items[i];
  }
  out += "]}";
  co_return Reply{200, std::move(out)};
}

}  // namespace turnpike::search
