// The store thread's lanes (store_thread.h) over an engine with several sessions: a control
// job that cannot finish holds back neither call-log batches nor reads; each kind of job runs
// on its lane's session; with one session everything runs in order on one thread, as before
// pools; CloseJobs waits for every lane; each tick runs on its lane.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "null_engine.h"
#include "store/store_thread.h"

namespace turnpike::store {
namespace {

// What ran, in order, and on which session; a test waits on it for a count.
struct Events {
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::string> log;
  std::vector<const Engine*> engines;
  bool released = false;

  void Add(std::string what, const Engine* engine = nullptr) {
    std::lock_guard lock(mu);
    log.push_back(std::move(what));
    engines.push_back(engine);
    changed.notify_all();
  }
  // Waits (at most 10 s, a bound for a broken build, never a timing assertion) until `what`
  // was logged; false if it never was.
  bool WaitFor(const std::string& what) {
    std::unique_lock lock(mu);
    return changed.wait_for(lock, std::chrono::seconds(10), [&] { return Index(what) >= 0; });
  }
  void Release() {
    std::lock_guard lock(mu);
    released = true;
    changed.notify_all();
  }
  // Bounded too, so that a failed assertion (no Release) ends the test instead of hanging it.
  void WaitReleased() {
    std::unique_lock lock(mu);
    changed.wait_for(lock, std::chrono::seconds(10), [&] { return released; });
  }
  int Index(const std::string& what) const {
    for (size_t i = 0; i < log.size(); ++i) {
      if (log[i] == what) return static_cast<int>(i);
    }
    return -1;
  }
  const Engine* EngineOf(const std::string& what) {
    std::lock_guard lock(mu);
    const int i = Index(what);
    return i < 0 ? nullptr : engines[static_cast<size_t>(i)];
  }
  int IndexOf(const std::string& what) {
    std::lock_guard lock(mu);
    return Index(what);
  }
};

// Logs "<name> start" and "<name> end" with the session it ran on; a blocking job waits for
// Release() in between.
class Job : public StoreJob {
 public:
  Job(Events& events, std::string name, bool blocks = false)
      : events_(events), name_(std::move(name)), blocks_(blocks) {}
  void Run(Engine& engine) override {
    events_.Add(name_ + " start", &engine);
    if (blocks_) events_.WaitReleased();
    events_.Add(name_ + " end", &engine);
  }
  void Refuse(const Error&) override { events_.Add(name_ + " refused"); }

 private:
  Events& events_;
  std::string name_;
  bool blocks_;
};

StoreThread::WriteFn LogWrites(Events& events) {
  return [&events](CallLogStore&, CallBatchParts) { events.Add("write"); };
}

void SubmitOneRecord(StoreThread& thread) {
  CallRecord r;
  r.tenant_id = "t";
  r.key_id = "k";
  CallBatch batch;
  batch.Add(ViewOf(r));
  ASSERT_EQ(thread.SubmitRecords(batch), SubmitResult::kAccepted);
}

TEST(StoreLanesTest, ABlockedControlJobHoldsBackNeitherBatchesNorReads) {
  PooledNullEngine engine(4);
  Events events;
  StoreThread thread(engine, {});
  thread.Start(LogWrites(events), nullptr);
  EXPECT_EQ(thread.lanes(), 4u);
  thread.Post(std::make_unique<Job>(events, "control", /*blocks=*/true), JobLane::kControl);
  ASSERT_TRUE(events.WaitFor("control start"));
  SubmitOneRecord(thread);
  thread.Post(std::make_unique<Job>(events, "read"), JobLane::kRead);
  thread.Post(std::make_unique<Job>(events, "reconcile"), JobLane::kLog);
  // All three finish while the control job is still running.
  ASSERT_TRUE(events.WaitFor("write"));
  ASSERT_TRUE(events.WaitFor("read end"));
  ASSERT_TRUE(events.WaitFor("reconcile end"));
  EXPECT_EQ(events.IndexOf("control end"), -1);
  events.Release();
  ASSERT_TRUE(events.WaitFor("control end"));
  EXPECT_EQ(events.EngineOf("control start"), &engine.session(1));
  const Engine* read_on = events.EngineOf("read start");
  EXPECT_TRUE(read_on == &engine.session(2) || read_on == &engine.session(3));
  EXPECT_EQ(events.EngineOf("reconcile start"), &engine);
  EXPECT_EQ(&thread.lane_engine(JobLane::kControl), &engine.session(1));
  EXPECT_EQ(&thread.lane_engine(JobLane::kRead), &engine.session(2));
  EXPECT_EQ(&thread.lane_engine(JobLane::kLog), &engine);
  thread.Stop();
}

TEST(StoreLanesTest, ReadLanesRunReadsInParallel) {
  PooledNullEngine engine(4);  // two read lanes
  Events events;
  StoreThread thread(engine, {});
  thread.Start(LogWrites(events), nullptr);
  thread.Post(std::make_unique<Job>(events, "slow read", /*blocks=*/true), JobLane::kRead);
  ASSERT_TRUE(events.WaitFor("slow read start"));
  thread.Post(std::make_unique<Job>(events, "read"), JobLane::kRead);
  ASSERT_TRUE(events.WaitFor("read end"));
  EXPECT_NE(events.EngineOf("read start"), events.EngineOf("slow read start"));
  events.Release();
  thread.Stop();
  EXPECT_GE(events.IndexOf("slow read end"), 0);
}

TEST(StoreLanesTest, TwoSessionsShareTheControlLaneBetweenControlAndReads) {
  PooledNullEngine engine(2);
  Events events;
  StoreThread thread(engine, {});
  thread.Start(LogWrites(events), nullptr);
  thread.Post(std::make_unique<Job>(events, "control", /*blocks=*/true), JobLane::kControl);
  ASSERT_TRUE(events.WaitFor("control start"));
  thread.Post(std::make_unique<Job>(events, "read"), JobLane::kRead);
  SubmitOneRecord(thread);
  ASSERT_TRUE(events.WaitFor("write"));  // the log lane is apart
  events.Release();
  ASSERT_TRUE(events.WaitFor("read end"));
  // The read waited for the control job: one lane, in order.
  EXPECT_LT(events.IndexOf("control end"), events.IndexOf("read start"));
  EXPECT_EQ(events.EngineOf("read start"), &engine.session(1));
  thread.Stop();
}

TEST(StoreLanesTest, OneSessionRunsEverythingInOrderOnOneThread) {
  PooledNullEngine engine(1);
  Events events;
  StoreThread thread(engine, {});
  thread.Start(LogWrites(events), nullptr);
  EXPECT_EQ(thread.lanes(), 1u);
  thread.Post(std::make_unique<Job>(events, "control", /*blocks=*/true), JobLane::kControl);
  ASSERT_TRUE(events.WaitFor("control start"));
  SubmitOneRecord(thread);
  thread.Post(std::make_unique<Job>(events, "read"), JobLane::kRead);
  EXPECT_EQ(thread.queued_records(), 1u);  // nobody else can take it
  events.Release();
  ASSERT_TRUE(events.WaitFor("write"));
  ASSERT_TRUE(events.WaitFor("read end"));
  EXPECT_LT(events.IndexOf("control end"), events.IndexOf("write"));
  EXPECT_LT(events.IndexOf("control end"), events.IndexOf("read start"));
  EXPECT_EQ(events.EngineOf("read start"), &engine);
  thread.Stop();
}

TEST(StoreLanesTest, CloseJobsWaitsForEveryLaneThenRefuses) {
  PooledNullEngine engine(3);
  Events events;
  StoreThread thread(engine, {});
  thread.Start(LogWrites(events), nullptr);
  thread.Post(std::make_unique<Job>(events, "control", /*blocks=*/true), JobLane::kControl);
  thread.Post(std::make_unique<Job>(events, "read"), JobLane::kRead);
  thread.Post(std::make_unique<Job>(events, "log"), JobLane::kLog);
  ASSERT_TRUE(events.WaitFor("control start"));
  std::thread closer([&] {
    thread.CloseJobs();
    events.Add("closed");
  });
  ASSERT_TRUE(events.WaitFor("read end"));
  ASSERT_TRUE(events.WaitFor("log end"));
  events.Release();
  ASSERT_TRUE(events.WaitFor("closed"));
  closer.join();
  EXPECT_LT(events.IndexOf("control end"), events.IndexOf("closed"));
  thread.Post(std::make_unique<Job>(events, "late"), JobLane::kRead);
  EXPECT_GE(events.IndexOf("late refused"), 0);
  thread.Stop();
}

TEST(StoreLanesTest, EachTickRunsOnItsLanesSession) {
  for (size_t sessions : {1, 3}) {
    PooledNullEngine engine(sessions);
    Events events;
    StoreThreadOptions options;
    options.tick = std::chrono::milliseconds(5);
    StoreThread thread(engine, options);
    thread.Start(
        LogWrites(events), [&events](Engine& e) { events.Add("tick", &e); },
        [&events](Engine& e) { events.Add("control tick", &e); });
    ASSERT_TRUE(events.WaitFor("tick"));
    ASSERT_TRUE(events.WaitFor("control tick"));
    thread.Stop();
    EXPECT_EQ(events.EngineOf("tick"), &engine);
    EXPECT_EQ(events.EngineOf("control tick"), &engine.session(sessions == 1 ? 0 : 1));
  }
}

}  // namespace
}  // namespace turnpike::store
