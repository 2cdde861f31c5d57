#include "core/router.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace turnpike::core {
namespace {

using Outcome = RouteMatch::Outcome;

// Door 0: the fallback (an LLM-like door); 1: conversations; 2: a search door under /es;
// 3: Gemini-style actions.
Router MakeRouter() {
  Router router(0);
  router.Add(0, {{"/v1/chat/completions", {Verb::post}, "chat_completions", 10},
                 {"/v1/models", {Verb::get, Verb::head}, "models", 11},
                 {"/v1/responses", {Verb::post}, "responses", 12}});
  router.Add(1, {{"/v1/conversations", {Verb::post}, "conversations", 20},
                 {"/v1/conversations/{id}", {Verb::get, Verb::head}, "conversations", 21},
                 {"/v1/conversations/{id}", {Verb::delete_}, "conversations", 22},
                 {"/v1/conversations/{id}/items/{item}", {Verb::get}, "conversation_items", 23}});
  router.Add(2, {{"/es/**", {}, "search", 30}});
  router.Add(3, {{"/v1beta/models/{model}:generateContent", {Verb::post}, "gemini", 40},
                 {"/v1beta/models/{model}:streamGenerateContent", {Verb::post}, "gemini", 41},
                 {"/v1beta/models/{model}", {Verb::get}, "gemini", 42}});
  return router;
}

TEST(RouterTest, ExactPathsGoToTheirDoorAndRoute) {
  const Router router = MakeRouter();
  RouteMatch m = router.Match(Verb::post, "/v1/chat/completions");
  EXPECT_EQ(m.outcome, Outcome::kFound);
  EXPECT_EQ(m.door, 0);
  EXPECT_EQ(m.route, 10);
  EXPECT_EQ(router.labels()[m.slot], "chat_completions");
  m = router.Match(Verb::head, "/v1/models");
  EXPECT_EQ(m.outcome, Outcome::kFound);
  EXPECT_EQ(m.route, 11);
}

TEST(RouterTest, PathParametersAreViewsIntoThePath) {
  const Router router = MakeRouter();
  const std::string path = "/v1/conversations/conv_123/items/msg_9";
  const RouteMatch m = router.Match(Verb::get, path);
  ASSERT_EQ(m.outcome, Outcome::kFound);
  EXPECT_EQ(m.door, 1);
  EXPECT_EQ(m.route, 23);
  EXPECT_EQ(m.Param("id"), "conv_123");
  EXPECT_EQ(m.Param("item"), "msg_9");
  EXPECT_EQ(m.Param("nope"), "");
  EXPECT_EQ(m.Param("id").data(), path.data() + 18) << "a view, not a copy";
}

TEST(RouterTest, MethodsPickAmongRoutesOfOnePattern) {
  const Router router = MakeRouter();
  EXPECT_EQ(router.Match(Verb::get, "/v1/conversations/c1").route, 21);
  EXPECT_EQ(router.Match(Verb::delete_, "/v1/conversations/c1").route, 22);
  const RouteMatch m = router.Match(Verb::put, "/v1/conversations/c1");
  EXPECT_EQ(m.outcome, Outcome::kMethodNotAllowed);
  EXPECT_EQ(m.door, 1);
  EXPECT_EQ(m.allow, "GET, DELETE") << "HEAD is implied by GET";
}

TEST(RouterTest, SuffixActionsSplitTheSegment) {
  const Router router = MakeRouter();
  RouteMatch m = router.Match(Verb::post, "/v1beta/models/gemini-2.5-flash:streamGenerateContent");
  ASSERT_EQ(m.outcome, Outcome::kFound);
  EXPECT_EQ(m.route, 41);
  EXPECT_EQ(m.Param("model"), "gemini-2.5-flash");
  m = router.Match(Verb::post, "/v1beta/models/gemini-2.5-flash:generateContent");
  EXPECT_EQ(m.route, 40);
  EXPECT_EQ(m.Param("model"), "gemini-2.5-flash");
  m = router.Match(Verb::get, "/v1beta/models/gemini-2.5-flash");
  EXPECT_EQ(m.route, 42);
  EXPECT_EQ(m.Param("model"), "gemini-2.5-flash");
  // The action alone is not a model name.
  EXPECT_EQ(router.Match(Verb::post, "/v1beta/models/:generateContent").outcome,
            Outcome::kMethodNotAllowed);
}

TEST(RouterTest, APrefixTakesAWholeDoorWithoutCollidingWithOtherPaths) {
  const Router router = MakeRouter();
  RouteMatch m = router.Match(Verb::post, "/es/v1/_search");
  ASSERT_EQ(m.outcome, Outcome::kFound);
  EXPECT_EQ(m.door, 2);
  EXPECT_EQ(m.rest, "v1/_search") << "an index named v1 stays the search door's";
  m = router.Match(Verb::get, "/es/");
  EXPECT_EQ(m.outcome, Outcome::kFound);
  EXPECT_EQ(m.rest, "");
  EXPECT_EQ(router.Match(Verb::get, "/es").outcome, Outcome::kNotFound);
  EXPECT_EQ(router.Match(Verb::post, "/v1/chat/completions").door, 0);
}

TEST(RouterTest, UnknownPathsGoToTheFallbackAsOther) {
  const Router router = MakeRouter();
  for (std::string_view path : {"/", "/v2/chat", "/v1/chat/completions/", "/v1/chat", "",
                                "v1/models", "/v1/conversations/c1/items"}) {
    const RouteMatch m = router.Match(Verb::get, path);
    EXPECT_EQ(m.outcome, Outcome::kNotFound) << path;
    EXPECT_EQ(m.door, 0) << path;
    EXPECT_EQ(m.route, -1) << path;
    EXPECT_EQ(router.labels()[m.slot], "other") << path;
  }
}

TEST(RouterTest, LiteralsWinAndBacktrackToParameters) {
  Router router(0);
  router.Add(0, {{"/v1/models", {Verb::get}, "models", 1},
                 {"/v1/{thing}/items", {Verb::get}, "items", 2}});
  EXPECT_EQ(router.Match(Verb::get, "/v1/models").route, 1);
  const RouteMatch m = router.Match(Verb::get, "/v1/models/items");
  EXPECT_EQ(m.route, 2) << "the literal branch fails deeper, the parameter takes it";
  EXPECT_EQ(m.Param("thing"), "models");
}

TEST(RouterTest, LabelsAreSharedAndOtherStaysLast) {
  const Router router = MakeRouter();
  const auto& labels = router.labels();
  EXPECT_EQ(labels.back(), "other");
  EXPECT_EQ(std::count(labels.begin(), labels.end(), "conversations"), 1);
  EXPECT_EQ(router.Match(Verb::get, "/v1/conversations/a").slot,
            router.Match(Verb::post, "/v1/conversations").slot);
}

TEST(RouterTest, MalformedTablesAreRefusedAtStartUp) {
  Router router(0);
  EXPECT_THROW(router.Add(0, {{"v1/x", {}, "x", 0}}), std::invalid_argument);
  EXPECT_THROW(router.Add(0, {{"/a/**/b", {}, "x", 0}}), std::invalid_argument);
  EXPECT_THROW(router.Add(0, {{"/a/{}", {}, "x", 0}}), std::invalid_argument);
  EXPECT_THROW(router.Add(0, {{"/a/b{c}", {}, "x", 0}}), std::invalid_argument);
  EXPECT_THROW(router.Add(0, {{"/{a}/{b}/{c}/{d}/{e}", {}, "x", 0}}), std::invalid_argument);
  router.Add(0, {{"/dup", {Verb::get}, "x", 0}});
  EXPECT_THROW(router.Add(0, {{"/dup", {Verb::get, Verb::post}, "x", 1}}), std::invalid_argument);
}

TEST(RouterTest, APrefixRestAfterAMethodMissKeepsTheAllowOfThePatternThatMatched) {
  // The admin door's shape: its routes plus "/admin/**" for what they do not take, so that the
  // door answers 404 and 405 itself (after its token check) from `allow`.
  Router router(0);
  router.Add(1, {{"/admin/v1/plans", {Verb::get}, "admin", 0},
                 {"/admin/v1/plans/{id}", {Verb::put}, "admin", 1},
                 {"/admin/**", {}, "admin", 2}});
  RouteMatch m = router.Match(Verb::delete_, "/admin/v1/plans/p1");
  EXPECT_EQ(m.outcome, Outcome::kFound);
  EXPECT_EQ(m.door, 1);
  EXPECT_EQ(m.route, 2);
  EXPECT_EQ(m.allow, "PUT");
  m = router.Match(Verb::get, "/admin/v1/nothing");
  EXPECT_EQ(m.route, 2);
  EXPECT_EQ(m.allow, "");
  m = router.Match(Verb::put, "/admin/v1/plans/p1");
  EXPECT_EQ(m.route, 1);
  EXPECT_EQ(m.Param("id"), "p1");
}

}  // namespace
}  // namespace turnpike::core
