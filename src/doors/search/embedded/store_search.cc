// The embedded store's search legs: text clauses through FTS5 (BM25), the rest in memory.
#include "doors/search/embedded/store.h"
#include "doors/search/es_error.h"

namespace turnpike::search::embedded {
namespace {

using store::StoreOp;
using store::sqlite::Statement;

// Lowercased ASCII-alphanumeric (and any non-ASCII byte) runs, as FTS5's unicode61 tokenizer
// splits ASCII; each token is quoted in the MATCH expression, so no query syntax leaks in.
std::vector<std::string> Tokens(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80 || std::isalnum(u)) {
      current += static_cast<char>(u < 0x80 ? std::tolower(u) : u);
    } else if (!current.empty()) {
      out.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

std::string Joined(const std::vector<std::string>& tokens, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) out += separator;
    out += '"' + tokens[i] + '"';
  }
  return out;
}

}  // namespace

Result<std::vector<float>> Store::TextScores(const Index& index, const Query& q) {
  std::vector<float> scores(index.slots(), -1.0F);
  const Mapping& m = index.mapping();
  // FTS5 column of each text field.
  auto column = [&](std::string_view path) -> int {
    int n = 0;
    for (const FieldMapping& f : m.fields) {
      if (f.path == path) return f.type == FieldType::kText ? n : -1;
      if (f.type == FieldType::kText) ++n;
    }
    return -1;
  };
  std::string columns;
  std::vector<std::string_view> keyword_fields;
  const std::vector<std::string> single{q.field};
  for (const std::string& field : q.kind == QueryKind::kMultiMatch ? q.fields : single) {
    const int c = column(field);
    if (c < 0) {
      keyword_fields.push_back(field);
      continue;
    }
    columns += (columns.empty() ? "t" : " t") + std::to_string(c);
  }
  std::string match;
  std::vector<std::string> tokens;
  if (q.kind == QueryKind::kTerms) {
    for (const Value& v : q.values) {
      for (std::string& t : Tokens(std::get<std::string>(v))) tokens.push_back(std::move(t));
    }
  } else {
    tokens = Tokens(q.kind == QueryKind::kTerm ? std::get<std::string>(q.values[0]) : q.text);
  }
  if (!tokens.empty() && !columns.empty()) {
    if (q.kind == QueryKind::kMatchPhrase || q.kind == QueryKind::kTerm) {
      match = Joined(tokens, " + ");
    } else if (q.kind == QueryKind::kPrefix) {
      match = Joined(tokens, " + ") + " *";
    } else {
      match = Joined(tokens, q.op == MatchOperator::kAnd ? " AND " : " OR ");
    }
    match = "{" + columns + "} : (" + match + ")";
    const std::string table = "s_fts_" + std::to_string(index.id());
    Result<Statement> stmt = db_->Prepare(
        "SELECT rowid, -bm25(" + table + ") FROM " + table + " WHERE " + table + " MATCH ?",
        StoreOp::kAdminRead);
    if (!stmt.ok()) return stmt.error();
    stmt->BindView(1, match);
    for (;;) {
      Result<bool> row = stmt->Step();
      if (!row.ok()) return row.error();
      if (!*row) break;
      const int64_t slot = index.SlotOfRowid(stmt->Int(0));
      if (slot < 0) continue;
      // bm25() as a double, through its text form: the wrapper reads integers and text only.
      scores[static_cast<size_t>(slot)] = std::max(0.0F, std::stof(stmt->Text(1)));
    }
  }
  // multi_match over keyword fields: an exact match of the whole text scores 1.
  for (std::string_view field : keyword_fields) {
    Query term;
    term.kind = QueryKind::kTerm;
    term.field = std::string(field);
    term.values.emplace_back(q.text);
    Result<std::vector<float>> exact = index.Evaluate(term, {});
    if (!exact.ok()) return exact;
    for (size_t s = 0; s < scores.size(); ++s) {
      if ((*exact)[s] >= 0) scores[s] = std::max(scores[s], 1.0F);
    }
  }
  return scores;
}

Result<std::vector<float>> Store::Scores(Index& index, const Query& query, const search::Knn* knn,
                                         uint64_t request) {
  if (request != 0 && last_.request == request && last_.index == index.id() &&
      last_.writes == writes_ && last_.query == &query && last_.knn == knn) {
    return last_.scores;
  }
  Result<std::vector<float>> scores = Evaluate(index, query, knn);
  if (scores.ok() && request != 0) last_ = {request, index.id(), writes_, &query, knn, *scores};
  return scores;
}

Result<std::vector<float>> Store::Evaluate(Index& index, const Query& query,
                                           const search::Knn* knn) {
  const TextMatcher text = [this, &index](const Query& clause) {
    return TextScores(index, clause);
  };
  Result<std::vector<float>> scores = index.Evaluate(query, text);
  if (!scores.ok() || knn == nullptr) return scores;
  if (knn->filter) {
    Result<std::vector<float>> filter = index.Evaluate(*knn->filter, text);
    if (!filter.ok()) return filter;
    for (size_t s = 0; s < scores->size(); ++s) {
      if ((*filter)[s] < 0) (*scores)[s] = -1.0F;
    }
  }
  index.Knn(*knn, *scores);
  return scores;
}

Result<Page> Store::Search(std::string_view tenant, std::string_view name, const SearchRequest& r,
                           uint64_t request) {
  Result<Index*> index = Find(tenant, name);
  if (!index.ok()) return index.error();
  Result<std::vector<float>> scores = Scores(**index, r.query, r.knn ? &*r.knn : nullptr, request);
  if (!scores.ok()) return scores.error();
  return (*index)->PageOf(r, std::move(*scores));
}

Result<Total> Store::Count(std::string_view tenant, std::string_view name, const Query& query,
                           const search::Knn* knn, int64_t up_to, uint64_t request) {
  Result<Index*> index = Find(tenant, name);
  if (!index.ok()) return index.error();
  Result<std::vector<float>> scores = Scores(**index, query, knn, request);
  if (!scores.ok()) return scores.error();
  return (*index)->CountOf(*scores, up_to);
}

Result<std::vector<AggResult>> Store::Aggregate(std::string_view tenant, std::string_view name,
                                                const Query& query,
                                                const std::vector<Aggregation>& aggs,
                                                uint64_t request) {
  Result<Index*> index = Find(tenant, name);
  if (!index.ok()) return index.error();
  Result<std::vector<float>> scores = Scores(**index, query, nullptr, request);
  if (!scores.ok()) return scores.error();
  return (*index)->Aggregate(aggs, *scores);
}

}  // namespace turnpike::search::embedded
