#include "common/small_blocks.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace turnpike {
namespace {

// The cache a test owns (the executable's operator new keeps one per thread).
struct Cache {
  Cache() { std::memset(&blocks, 0, sizeof(blocks)); }
  ~Cache() { blocks.Close(); }
  SmallBlocks blocks;
};

TEST(SmallBlocksTest, ClassesAreSixtyFourBytesUpToOneKibibyte) {
  EXPECT_EQ(SmallBlocks::ClassOf(0), 1u);
  EXPECT_EQ(SmallBlocks::ClassOf(1), 1u);
  EXPECT_EQ(SmallBlocks::ClassOf(64), 1u);
  EXPECT_EQ(SmallBlocks::ClassOf(65), 2u);
  EXPECT_EQ(SmallBlocks::ClassOf(1024), 16u);
  EXPECT_EQ(SmallBlocks::MallocSize(100), 128u);
  EXPECT_EQ(SmallBlocks::MallocSize(1024), 1024u);
}

TEST(SmallBlocksTest, AKeptBlockServesItsClassAndNoLarger) {
  Cache c;
  EXPECT_EQ(c.blocks.Take(100), nullptr);  // nothing kept yet
  void* p = std::malloc(SmallBlocks::MallocSize(100));
  ASSERT_TRUE(c.blocks.Keep(p));
  EXPECT_EQ(c.blocks.Take(129), nullptr);  // the next class
  EXPECT_EQ(c.blocks.Take(64), nullptr);   // the class below
  EXPECT_EQ(c.blocks.Take(128), p);
  EXPECT_EQ(c.blocks.Take(128), nullptr);  // taken once
  std::free(p);
}

// The class is the one the block's usable size fills, not the size a delete names: a block
// always holds its class's size.
TEST(SmallBlocksTest, ABlockIsKeptByItsUsableSize) {
  Cache c;
  void* p = std::malloc(200);
  const size_t usable = malloc_usable_size(p);
  ASSERT_GE(usable, 200u);
  ASSERT_TRUE(c.blocks.Keep(p));
  const size_t holds = usable / SmallBlocks::kGrain * SmallBlocks::kGrain;
  EXPECT_EQ(c.blocks.Take(holds + 1), nullptr);
  EXPECT_EQ(c.blocks.Take(holds), p);
  std::memset(p, 0xab, holds);  // it holds that much (ASan checks, where it runs)
  std::free(p);
}

TEST(SmallBlocksTest, BlocksOutsideTheClassesAreNotKept) {
  Cache c;
  void* tiny = std::malloc(8);  // usable size under one grain
  void* large = std::malloc(4096);
  EXPECT_FALSE(c.blocks.Keep(tiny));
  EXPECT_FALSE(c.blocks.Keep(large));
  std::free(tiny);
  std::free(large);
}

TEST(SmallBlocksTest, AClassKeepsAtMostItsLimit) {
  Cache c;
  std::vector<void*> refused;
  for (unsigned i = 0; i < SmallBlocks::kKeepPerClass + 3; ++i) {
    void* p = std::malloc(SmallBlocks::MallocSize(300));
    if (!c.blocks.Keep(p)) refused.push_back(p);
  }
  EXPECT_EQ(refused.size(), 3u);
  EXPECT_EQ(c.blocks.kept[SmallBlocks::ClassOf(300)], SmallBlocks::kKeepPerClass);
  for (void* p : refused) std::free(p);
}

TEST(SmallBlocksTest, CloseFreesTheKeptBlocksAndKeepsNoMore) {
  Cache c;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(c.blocks.Keep(std::malloc(SmallBlocks::MallocSize(512))));
  c.blocks.Close();  // frees them (ASan's leak check, where it runs, would say otherwise)
  EXPECT_EQ(c.blocks.kept[SmallBlocks::ClassOf(512)], 0u);
  EXPECT_EQ(c.blocks.Take(512), nullptr);
  void* p = std::malloc(512);
  EXPECT_FALSE(c.blocks.Keep(p));
  std::free(p);
}

}  // namespace
}  // namespace turnpike
