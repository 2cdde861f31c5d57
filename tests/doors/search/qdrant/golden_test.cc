// Golden tests of the JSON the Qdrant backend sends: every tests/testdata/search/qdrant/*.json
// is one case
//   {"mapping": <ES mappings>, "tenant": "...", "index": "...",
//    "search": <an ES _search body>,     -> "filter": the read's Filter, or "error": a substring
//    "now_ms": <epoch ms> (optional: `now` for date math in the search),
//    "knn_body": <expected points/query body> (when the search has knn),
//    "documents": [{"_id", "_source"}],  -> "upsert": the points/upsert body
//    "create": <expected PUT /collections body>, "indexes": [<PUT .../index bodies>]}
// Bodies are compared as JSON values (key order free). TURNPIKE_UPDATE_GOLDEN=1 rewrites the
// expected parts from the output (then read the diff before committing it).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "doors/search/document.h"
#include "doors/search/dsl.h"
#include "doors/search/mapping.h"
#include "doors/search/qdrant/filter.h"
#include "doors/search/qdrant/requests.h"

namespace turnpike::search::qdrant {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class QdrantGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(QdrantGolden, BodiesMatch) {
  const fs::path file = fs::path(TESTDATA_DIR) / GetParam();
  json::object golden = json::parse(ReadFile(file)).as_object();
  const bool update = std::getenv("TURNPIKE_UPDATE_GOLDEN") != nullptr;
  auto mapping = ParseMapping(json::serialize(golden.at("mapping")));
  ASSERT_TRUE(mapping.ok()) << mapping.error().message;
  const std::string tenant(golden.at("tenant").as_string());
  const std::string index(golden.at("index").as_string());
  const Scope scope{tenant, index};
  auto expect = [&](std::string_view key, const std::string& actual) {
    json::value got = json::parse(actual);
    if (update) {
      golden[key] = got;
      return;
    }
    ASSERT_TRUE(golden.contains(key)) << "no \"" << key << "\" in " << file;
    EXPECT_EQ(golden.at(key), got) << key << " of " << file << "\nactual: " << actual;
  };
  if (golden.contains("search")) {
    // "now_ms" pins date math's `now` (the door passes the request's instant).
    const int64_t now_ms = golden.contains("now_ms") ? golden.at("now_ms").as_int64() : 0;
    auto request = ParseSearch(json::serialize(golden.at("search")), *mapping, {}, now_ms);
    ASSERT_TRUE(request.ok()) << request.error().message;
    auto filter = ScopedFilter(scope, &request->query, {}, &*mapping);
    if (golden.contains("error") && !update) {
      ASSERT_FALSE(filter.ok()) << *filter;
      EXPECT_NE(filter.error().message.find(std::string(golden.at("error").as_string())),
                std::string::npos)
          << filter.error().message;
    } else {
      ASSERT_TRUE(filter.ok()) << filter.error().message;
      expect("filter", *filter);
    }
    if (request->knn) {
      std::vector<std::string> extra;
      if (request->knn->filter) {
        auto c = ToCondition(*request->knn->filter, tenant, index);
        ASSERT_TRUE(c.ok());
        if (!c->empty()) extra.push_back(*c);
      }
      auto knn_filter = ScopedFilter(scope, &request->query, extra);
      ASSERT_TRUE(knn_filter.ok());
      expect("knn_body", NearestBody(*knn_filter, request->knn->field, request->knn->query_vector,
                                     request->knn->k, {"_id", "_src"}));
    }
  }
  if (golden.contains("create")) {
    expect("create", CreateCollectionBody(*mapping, "{}", 0));
    std::string indexes = "[";
    for (const std::string& body : IndexBodies(*mapping)) {
      if (indexes.size() > 1) indexes += ",";
      indexes += body;
    }
    expect("indexes", indexes + "]");
  }
  if (golden.contains("documents")) {
    std::vector<Document> docs;
    for (const auto& d : golden.at("documents").as_array()) {
      auto doc = ExtractDocument(*mapping, std::string(d.at("_id").as_string()),
                                 json::serialize(d.at("_source")));
      ASSERT_TRUE(doc.ok()) << doc.error().message;
      docs.push_back(std::move(*doc));
    }
    std::vector<PointWrite> writes;
    for (const Document& d : docs) writes.push_back({&d, 1});
    expect("upsert", UpsertBody(scope, *mapping, writes));
  }
  if (update) {
    std::ofstream(file) << json::serialize(golden) << "\n";
  }
}

std::vector<std::string> Cases() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(TESTDATA_DIR)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Cases, QdrantGolden, ::testing::ValuesIn(Cases()), [](const auto& info) {
  std::string name = info.param.substr(0, info.param.size() - 5);
  for (char& c : name) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
});

}  // namespace
}  // namespace turnpike::search::qdrant
