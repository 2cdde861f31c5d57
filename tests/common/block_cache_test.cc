// BlockCache: a freed block serves the next allocation that fits, on the thread that freed it;
// at most kSlots blocks are kept per thread, the rest go back to operator new and delete
// (counted with the test's counting operator new).
#include "common/block_cache.h"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <thread>
#include <vector>

#include "counting_new.h"

namespace turnpike {
namespace {

using testing::StartCountingAllocations;
using testing::StopCountingAllocations;

// Empties the calling thread's slots (so that each test starts from none kept): takes every
// block a request of one byte could get, then deletes them past the cache.
void DrainThisThread() {
  std::vector<void*> taken;
  StartCountingAllocations();
  for (;;) {
    void* block = BlockCache::Allocate(1);
    taken.push_back(block);
    if (StopCountingAllocations() > 0) break;  // a new one: none was kept
    StartCountingAllocations();
  }
  for (void* block : taken) ::operator delete(block);
}

TEST(BlockCache, AFreedBlockServesTheNextAllocationThatFits) {
  DrainThisThread();
  StartCountingAllocations();
  void* first = BlockCache::Allocate(6000);
  BlockCache::Free(first, 6000);
  void* again = BlockCache::Allocate(6000);
  void* smaller = BlockCache::Allocate(100);  // the only kept block is taken: a new one
  EXPECT_EQ(StopCountingAllocations(), 2u);
  EXPECT_EQ(again, first);
  EXPECT_NE(smaller, first);
  BlockCache::Free(again, 6000);
  BlockCache::Free(smaller, 100);
}

TEST(BlockCache, ABlockTooSmallIsNotTaken) {
  DrainThisThread();
  void* small = BlockCache::Allocate(512);
  BlockCache::Free(small, 512);
  StartCountingAllocations();
  void* large = BlockCache::Allocate(4096);
  EXPECT_EQ(StopCountingAllocations(), 1u);
  EXPECT_NE(large, small);
  // The small one is still kept, and served to a request it fits.
  StartCountingAllocations();
  void* fits = BlockCache::Allocate(300);
  EXPECT_EQ(StopCountingAllocations(), 0u);
  EXPECT_EQ(fits, small);
  BlockCache::Free(large, 4096);
  BlockCache::Free(fits, 300);
}

TEST(BlockCache, KeepsAtMostKSlotsBlocks) {
  DrainThisThread();
  constexpr size_t kMore = BlockCache::kSlots + 3;
  std::array<void*, kMore> blocks{};
  for (void*& block : blocks) block = BlockCache::Allocate(2048);
  for (void* block : blocks) BlockCache::Free(block, 2048);  // kSlots kept, 3 deleted
  StartCountingAllocations();
  for (void*& block : blocks) block = BlockCache::Allocate(2048);
  EXPECT_EQ(StopCountingAllocations(), kMore - BlockCache::kSlots);
  for (void* block : blocks) BlockCache::Free(block, 2048);
}

TEST(BlockCache, ABlockFreedOnAnotherThreadJoinsThatThreadsSlots) {
  void* block = BlockCache::Allocate(5000);
  void* reused = nullptr;
  size_t allocations = 99;
  std::thread other([&] {
    DrainThisThread();
    BlockCache::Free(block, 5000);
    StartCountingAllocations();
    reused = BlockCache::Allocate(5000);
    allocations = StopCountingAllocations();
    BlockCache::Free(reused, 5000);
  });
  other.join();  // its slots, and the block, are released with the thread
  EXPECT_EQ(reused, block);
  EXPECT_EQ(allocations, 0u);
}

struct State final : CachedBlock {
  std::array<char, 7000> bytes{};
};

TEST(BlockCache, ACachedBlockStructIsAllocatedThroughTheCache) {
  DrainThisThread();
  auto first = std::make_unique<State>();
  State* address = first.get();
  first.reset();
  StartCountingAllocations();
  auto second = std::make_unique<State>();
  EXPECT_EQ(StopCountingAllocations(), 0u);
  EXPECT_EQ(second.get(), address);
}

}  // namespace
}  // namespace turnpike
