// The bulk NDJSON reader: `POST /_bulk` and `/{index}/_bulk` bodies into actions, without
// typing the documents (that needs each target index's mapping: document.h).
//
//   {"index":{"_index":"books","_id":"1"}}\n{...source...}\n
//   {"create":{...}}\n{...}\n   {"delete":{"_id":"2"}}\n   {"update":{"_id":"3"}}\n{"doc":{...}}\n
//
// A malformed action line, an unknown action, a missing source line, an update without `doc`
// (scripts and upserts are not implemented) or a missing index fails the whole body with 400
// illegal_argument_exception / parsing_exception naming the line, as ES does; the last line
// may lack its '\n'. Blank lines are skipped.
//
// Pure, no I/O, thread-safe; also the libFuzzer entry point's target (fuzz/search_bulk_fuzz.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "doors/search/document.h"

namespace turnpike::search {

inline constexpr size_t kMaxBulkActions = 100'000;

struct BulkAction {
  WriteOp::Kind kind = WriteOp::Kind::kIndex;
  std::string index;   // the action's _index, or the URL's
  std::string id;      // empty: the backend assigns one (index only)
  std::string source;  // index/create: the document; update: the `doc` object; delete: empty
};

Result<std::vector<BulkAction>> ReadBulk(std::string_view body, std::string_view default_index);

}  // namespace turnpike::search
