// The query DSL (query.h) as Qdrant filters: the one translation every read of the Qdrant
// backend goes through. Pure functions over the typed AST; safe on any thread.
//
// Mapping (payload keys per layout.h):
//   bool            must + filter -> must, must_not -> must_not, should -> should when
//                   minimum_should_match is 1, min_should {conditions, min_count} when > 1,
//                   dropped when 0 (should then only scores: no filter effect, as in ES)
//   term            keyword/long/date/boolean: match.value; double: range gte = lte (Qdrant's
//                   match takes no floats); text: match.text (the word must be present)
//   terms           strings and integers: match.any; doubles and booleans: should of terms
//   range           range (dates as epoch ms); a keyword range is refused (Qdrant ranges are
//                   numeric)
//   exists          must_not is_empty (is_empty: missing, null or [])
//   ids             has_id of the derived point ids (layout.h PointId)
//   match           keyword: match.value; text, operator and: match.text (every word of the
//                   query is a word of the field, via the text index); operator or: should of
//                   one match.text per word. A filter, never a score: Qdrant has no BM25.
//   multi_match     should over the fields' match
//   match_phrase    text: match.phrase (the words adjacent, in order; text index with
//                   phrase_matching); keyword: match.value
//   prefix          keyword: match.prefix (byte-wise, case-sensitive); text: refused
//   match_all/none  nothing / has_id [] (matches no point)
// Errors: 400 illegal_argument_exception "<feature> is not supported by the qdrant backend".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "doors/search/backend.h"
#include "doors/search/query.h"

namespace turnpike::search::qdrant {

// One Qdrant Condition for `query`; "" for a query that keeps every point (match_all).
// `mapping` (optional) types multi_match's fields; without it they are matched as text.
Result<std::string> ToCondition(const Query& query, std::string_view tenant, std::string_view index,
                                const Mapping* mapping = nullptr);

// The Filter object of a read: {"must":[<tenant condition>, <query>, <extra>...]}. `query`
// may be null (no query); `extra` are Condition objects already rendered.
Result<std::string> ScopedFilter(Scope scope, const Query* query,
                                 const std::vector<std::string>& extra = {},
                                 const Mapping* mapping = nullptr);

// The words of `text` as the match filter uses them: ASCII lower-cased, split on bytes that
// are not ASCII letters or digits (bytes >= 0x80 are kept, so UTF-8 letters stay in words).
std::vector<std::string> Words(std::string_view text);

// The "not supported" error the backend returns for `feature`.
Error Unsupported(std::string_view feature);

}  // namespace turnpike::search::qdrant
