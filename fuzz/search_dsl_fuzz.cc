// libFuzzer target: the search door's query DSL parser (doors/search/dsl.h) over one mapping
// with every field type. Any input must give a value or an ES error, never a crash, a hang or
// an unbounded allocation. Built by the clang fuzz harness; under GCC the seed runner
// (search_seed_main.cc) feeds it fuzz/corpus/search_dsl/ in ctest.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "doors/search/date_math.h"
#include "doors/search/dsl.h"
#include "doors/search/mapping.h"

namespace {

const turnpike::search::Mapping& FuzzMapping() {
  static const turnpike::search::Mapping mapping =
      *turnpike::search::ParseMapping(R"({"properties":{
    "title":{"type":"text"},"genre":{"type":"keyword"},"pages":{"type":"integer"},
    "price":{"type":"double"},"published":{"type":"date"},"in_stock":{"type":"boolean"},
    "author":{"properties":{"name":{"type":"keyword"}}},
    "vec":{"type":"dense_vector","dims":3,"similarity":"cosine"}}})");
  return mapping;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const turnpike::search::Mapping& mapping = FuzzMapping();
  turnpike::Result<turnpike::search::SearchRequest> request =
      turnpike::search::ParseSearch(body, mapping);
  if (request.ok()) {
    // The parser's guarantees (query.h) hold for every accepted request.
    if (request->sort.empty() ||
        request->sort.back().kind != turnpike::search::SortKey::Kind::kId ||
        (!request->search_after.empty() && request->search_after.size() != request->sort.size()) ||
        request->from + request->size > turnpike::search::kMaxResultWindow) {
      __builtin_trap();
    }
  }
  (void)turnpike::search::ParseCount(body, mapping);
  (void)turnpike::search::ParseMapping(body);
  (void)turnpike::search::ParseDateMillis(body);
  // Date math and time values on the raw input too, with `now` pinned (the parser never reads a
  // clock) and the bound's rounding taken from the input's length.
  constexpr int64_t kPinnedNow = 1'731'940'512'345;
  (void)turnpike::search::ResolveDateBound(body, kPinnedNow, (size & 1) != 0, 3'600'000);
  (void)turnpike::search::ParseTimeZone(body);
  (void)turnpike::search::ParseTimeValue(body, "timeout");
  (void)turnpike::search::ParseSearch(body, mapping, {}, kPinnedNow);
  return 0;
}
