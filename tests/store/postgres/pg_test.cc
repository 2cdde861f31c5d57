// The PostgreSQL engine's parts that need no server: placeholder numbering, URL redaction,
// parameter encoding, and the spool (append, torn tail, bound, replay order and failures).
// The engine against a real server is tested end to end in tests/integration
// (governance.test.mjs on both engines, fleet_postgres.test.mjs).
#include "store/postgres/pg.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "store/postgres/spool.h"

namespace turnpike::store::postgres {
namespace {

TEST(NumberedTest, NumbersPlaceholdersOutsideLiterals) {
  EXPECT_EQ(Numbered("SELECT ? , '?' , ?"), "SELECT $1 , '?' , $2");
  EXPECT_EQ(Numbered("UPDATE t SET a = ? WHERE b = ? RETURNING b"),
            "UPDATE t SET a = $1 WHERE b = $2 RETURNING b");
}

TEST(RedactedTest, HidesOnlyThePassword) {
  EXPECT_EQ(Redacted("postgresql://u:pw@h:5432/db"), "postgresql://u:***@h:5432/db");
  EXPECT_EQ(Redacted("postgresql://u@h/db"), "postgresql://u@h/db");
  EXPECT_EQ(Redacted("postgresql://h/db"), "postgresql://h/db");
}

TEST(ParamsTest, TextNullAndBytea) {
  const unsigned char bytes[] = {0x00, 0xab, 0x7f};
  Params p;
  p.Add(int64_t{-5}).Add("x").AddNull().AddBytea(bytes, sizeof bytes);
  const std::vector<const char*> v = p.Pointers();
  ASSERT_EQ(v.size(), 4u);
  EXPECT_STREQ(v[0], "-5");
  EXPECT_STREQ(v[1], "x");
  EXPECT_EQ(v[2], nullptr);
  EXPECT_STREQ(v[3], "\\x00ab7f");
}

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("turnpike-spool-test-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                .string();
    std::filesystem::remove(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  static Params Batch(const std::string& marker) {
    Params p;
    p.Add(marker).AddNull().Add(int64_t{7});
    return p;
  }

  std::string path_;
};

TEST_F(SpoolTest, KeepsEntriesAcrossRestartsAndReplaysThemInOrder) {
  {
    Spool spool(path_, 1 << 20);
    EXPECT_TRUE(spool.empty());
    ASSERT_TRUE(spool.Append(Batch("a"), 3).ok());
    ASSERT_TRUE(spool.Append(Batch("b"), 2).ok());
    EXPECT_EQ(spool.rows(), 5u);
  }
  Spool reopened(path_, 1 << 20);  // a restart finds them
  EXPECT_EQ(reopened.rows(), 5u);
  std::vector<std::string> sent;
  Status replayed = reopened.Replay([&](const Params& p, size_t rows) -> Status {
    sent.push_back(*p.values()[0] + std::to_string(rows));
    EXPECT_FALSE(p.values()[1].has_value());
    return Ok{};
  });
  ASSERT_TRUE(replayed.ok());
  EXPECT_EQ(sent, (std::vector<std::string>{"a3", "b2"}));
  EXPECT_TRUE(reopened.empty());
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(SpoolTest, StopsAtUnavailableAndKeepsTheRestInOrder) {
  Spool spool(path_, 1 << 20);
  for (const char* m : {"a", "b", "c"}) ASSERT_TRUE(spool.Append(Batch(m), 1).ok());
  std::vector<std::string> sent;
  Status first = spool.Replay([&](const Params& p, size_t) -> Status {
    const std::string marker = *p.values()[0];
    if (marker == "b") return Error{ErrorCode::kUnavailable, "down", ""};
    sent.push_back(marker);
    return Ok{};
  });
  EXPECT_FALSE(first.ok());
  EXPECT_EQ(spool.rows(), 2u);
  Status second = spool.Replay([&](const Params& p, size_t) -> Status {
    sent.push_back(*p.values()[0]);
    return Ok{};
  });
  EXPECT_TRUE(second.ok());
  EXPECT_EQ(sent, (std::vector<std::string>{"a", "b", "c"}));
}

TEST_F(SpoolTest, DropsWhatTheServerRefusesAndCountsIt) {
  Spool spool(path_, 1 << 20);
  ASSERT_TRUE(spool.Append(Batch("bad"), 4).ok());
  ASSERT_TRUE(spool.Append(Batch("good"), 1).ok());
  int sent = 0;
  Status replayed = spool.Replay([&](const Params& p, size_t) -> Status {
    if (*p.values()[0] == "bad") return Error{ErrorCode::kInternal, "refused", ""};
    ++sent;
    return Ok{};
  });
  EXPECT_FALSE(replayed.ok());
  EXPECT_EQ(sent, 1);
  EXPECT_TRUE(spool.empty());
  EXPECT_EQ(spool.lost_rows(), 4u);
}

TEST_F(SpoolTest, IsBoundedAndIgnoresATornTail) {
  Spool spool(path_, 64);
  ASSERT_TRUE(spool.Append(Batch("a"), 1).ok());
  Status full = spool.Append(Batch(std::string(100, 'x')), 1);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().code, ErrorCode::kUnavailable);
  {
    std::ofstream torn(path_, std::ios::app | std::ios::binary);
    torn << "TPSP\x01";  // a crash mid-append
  }
  Spool reopened(path_, 64);
  EXPECT_EQ(reopened.rows(), 1u);
}

}  // namespace
}  // namespace turnpike::store::postgres
