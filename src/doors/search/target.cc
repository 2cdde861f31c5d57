#include "doors/search/target.h"

#include <charconv>

#include "doors/search/es_error.h"

namespace turnpike::search {
namespace {

using Verb = boost::beast::http::verb;

std::optional<std::string> PercentDecode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] != '%') {
      out += in[i];
    } else {
      if (i + 2 >= in.size()) return std::nullopt;
      int value = 0;
      auto [end, ec] = std::from_chars(in.data() + i + 1, in.data() + i + 3, value, 16);
      if (ec != std::errc() || end != in.data() + i + 3) return std::nullopt;
      out += static_cast<char>(value);
      i += 2;
    }
  }
  return out;
}

Error MethodError(Verb method, std::string_view path) {
  return EsError(kIllegalArgument,
                 "Incorrect HTTP method for uri [/" + std::string(path) + "] and method [" +
                     std::string(boost::beast::http::to_string(method)) + "]",
                 ErrorCode::kMethodNotAllowed);
}

bool Is(Verb m, std::initializer_list<Verb> allowed) {
  for (Verb v : allowed) {
    if (m == v) return true;
  }
  return false;
}

std::optional<bool> Flag(std::string_view v) {
  if (v.empty() || v == "true") return true;
  if (v == "false") return false;
  return std::nullopt;
}

Status ApplyParam(std::string_view key, const std::string& value, Target& t) {
  auto number = [&](std::optional<int64_t>& into) -> Status {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || n < 0) {
      return EsError(kIllegalArgument, "[" + std::string(key) + "] must be a non-negative integer");
    }
    into = n;
    return Ok{};
  };
  auto flag = [&](auto&& set) -> Status {
    std::optional<bool> f = Flag(value);
    if (!f) return EsError(kIllegalArgument, "[" + std::string(key) + "] must be true or false");
    set(*f);
    return Ok{};
  };
  if (key == "size") return number(t.url.size);
  if (key == "from") return number(t.url.from);
  if (key == "track_total_hits") {
    t.url.track_total_hits = value;
    return Ok{};
  }
  if (key == "rest_total_hits_as_int")
    return flag([&](bool f) { t.url.rest_total_hits_as_int = f; });
  if (key == "request_cache") return flag([&](bool f) { t.url.request_cache = f; });
  if (key == "allow_partial_search_results" && (t.op == Op::kSearch || t.op == Op::kMsearch)) {
    return flag([&](bool f) { t.url.allow_partial_search_results = f; });
  }
  if (key == "timeout") {  // a search's leg deadline (checked by ParseSearch); else harmless
    t.url.timeout = value;
    return Ok{};
  }
  if (key == "pretty") return flag([&](bool f) { t.pretty = f; });
  if (key == "refresh") {
    if (value == "wait_for") {
      t.refresh = true;
      return Ok{};
    }
    return flag([&](bool f) { t.refresh = f; });
  }
  if (key == "op_type") {
    if (value != "create" && value != "index") {
      return EsError(kIllegalArgument, "[op_type] must be create or index");
    }
    t.op_create = value == "create";
    return Ok{};
  }
  // Accepted and without effect on a single-node, single-shard index.
  constexpr std::string_view kHarmless[] = {"human",
                                            "error_trace",
                                            "master_timeout",
                                            "wait_for_active_shards",
                                            "ignore_unavailable",
                                            "allow_no_indices",
                                            "expand_wildcards",
                                            "routing"};
  for (std::string_view h : kHarmless) {
    if (key == h) return Ok{};
  }
  return EsError(kIllegalArgument,
                 "request contains unrecognized parameter: [" + std::string(key) + "]");
}

}  // namespace

std::string_view OpLabel(Op op) {
  constexpr std::string_view kLabels[] = {"es_info", "es_index",  "es_mapping", "es_refresh",
                                          "es_doc",  "es_doc",    "es_doc",     "es_doc",
                                          "es_bulk", "es_search", "es_count",   "es_msearch"};
  return kLabels[static_cast<size_t>(op)];
}

Status ValidIndexName(std::string_view name) {
  auto bad = [&](std::string why) {
    return EsError("invalid_index_name_exception",
                   "Invalid index name [" + std::string(name) + "], " + why);
  };
  if (name.empty() || name.size() > 255) return bad("must be 1 to 255 bytes long");
  if (name == "." || name == "..") return bad("must not be '.' or '..'");
  if (name[0] == '_' || name[0] == '-' || name[0] == '+') {
    return bad("must not start with '_', '-', or '+'");
  }
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') return bad("must be lowercase");
    if (std::string_view("\\/*?\"<>| ,#:").find(c) != std::string_view::npos) {
      return bad("must not contain the character [" + std::string(1, c) + "]");
    }
  }
  return Ok{};
}

Result<Target> ParseTarget(Verb method, std::string_view rest, std::string_view query) {
  Target t;
  std::vector<std::string> segments;
  while (!rest.empty()) {
    const size_t slash = rest.find('/');
    std::optional<std::string> seg = PercentDecode(rest.substr(0, slash));
    if (!seg) return EsError(kIllegalArgument, "malformed percent-encoding in the path");
    if (!seg->empty()) segments.push_back(std::move(*seg));
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  const std::string path = [&] {
    std::string p;
    for (size_t i = 0; i < segments.size(); ++i) p += (i ? "/" : "") + segments[i];
    return p;
  }();
  auto unsupported = [&] {
    return EsError(kIllegalArgument, "no handler found for uri [/" + path + "] and method [" +
                                         std::string(boost::beast::http::to_string(method)) +
                                         "]: not implemented by this Elasticsearch-compatible "
                                         "endpoint");
  };
  const size_t n = segments.size();
  const auto seg = [&](size_t i) -> std::string_view { return segments[i]; };
  auto want = [&](Op op, std::initializer_list<Verb> verbs) -> Status {
    t.op = op;
    if (!Is(method, verbs)) return MethodError(method, path);
    return Ok{};
  };
  Status s = Ok{};
  if (n == 0) {
    s = want(Op::kInfo, {Verb::get, Verb::head});
  } else if (seg(0).starts_with('_')) {
    if (n == 1 && seg(0) == "_bulk") {
      s = want(Op::kBulk, {Verb::post, Verb::put});
    } else if (n == 1 && seg(0) == "_msearch") {
      s = want(Op::kMsearch, {Verb::post, Verb::get});
    } else {
      return unsupported();
    }
  } else {
    t.index = segments[0];
    if (n == 1) {
      s = want(Op::kIndex, {Verb::put, Verb::head, Verb::get, Verb::delete_});
    } else if (n == 2 && seg(1) == "_mapping") {
      s = want(Op::kMapping, {Verb::get, Verb::put, Verb::post});
    } else if (n == 2 && seg(1) == "_refresh") {
      s = want(Op::kRefresh, {Verb::post, Verb::get});
    } else if (n == 2 && seg(1) == "_doc") {
      s = want(Op::kDocNew, {Verb::post});
    } else if (n == 3 && seg(1) == "_doc") {
      s = want(Op::kDoc, {Verb::put, Verb::post, Verb::get, Verb::head, Verb::delete_});
      t.id = segments[2];
    } else if (n == 3 && seg(1) == "_create") {
      s = want(Op::kCreate, {Verb::put, Verb::post});
      t.id = segments[2];
    } else if (n == 3 && seg(1) == "_update") {
      s = want(Op::kUpdate, {Verb::post});
      t.id = segments[2];
    } else if (n == 2 && seg(1) == "_bulk") {
      s = want(Op::kBulk, {Verb::post, Verb::put});
    } else if (n == 2 && seg(1) == "_search") {
      s = want(Op::kSearch, {Verb::get, Verb::post});
    } else if (n == 2 && seg(1) == "_count") {
      s = want(Op::kCount, {Verb::get, Verb::post});
    } else if (n == 2 && seg(1) == "_msearch") {
      s = want(Op::kMsearch, {Verb::get, Verb::post});
    } else {
      return unsupported();
    }
    if (s.ok()) s = ValidIndexName(t.index);
  }
  if (!s.ok()) return s.error();
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    std::optional<std::string> key = PercentDecode(pair.substr(0, eq));
    std::optional<std::string> value =
        PercentDecode(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
    if (!key || !value) return EsError(kIllegalArgument, "malformed percent-encoding in the query");
    Status p = ApplyParam(*key, *value, t);
    if (!p.ok()) return p.error();
  }
  return t;
}

}  // namespace turnpike::search
