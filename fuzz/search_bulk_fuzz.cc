// libFuzzer target: the bulk NDJSON reader (doors/search/bulk.h), then each action's document
// through extraction, merge and _source filtering (document.h), as the door does. Built by the
// clang fuzz harness; under GCC the seed runner (search_seed_main.cc) feeds it
// fuzz/corpus/search_bulk/ in ctest.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "doors/search/bulk.h"
#include "doors/search/document.h"
#include "doors/search/mapping.h"

namespace {

const turnpike::search::Mapping& FuzzMapping() {
  static const turnpike::search::Mapping mapping =
      *turnpike::search::ParseMapping(R"({"properties":{
    "title":{"type":"text"},"genre":{"type":"keyword"},"pages":{"type":"long"},
    "published":{"type":"date"},"o":{"properties":{"b":{"type":"boolean"}}},
    "vec":{"type":"dense_vector","dims":2}}})");
  return mapping;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  turnpike::Result<std::vector<turnpike::search::BulkAction>> actions =
      turnpike::search::ReadBulk(body, "fuzz");
  if (!actions.ok()) return 0;
  turnpike::search::SourceFilter filter;
  filter.includes = {"o.*", "title"};
  filter.excludes = {"vec"};
  for (turnpike::search::BulkAction& action : *actions) {
    if (action.index.empty()) __builtin_trap();
    (void)turnpike::search::MergeSource(action.source, action.source);
    (void)turnpike::search::FilterSource(action.source, filter);
    (void)turnpike::search::ExtractDocument(FuzzMapping(), action.id, std::move(action.source));
  }
  return 0;
}
