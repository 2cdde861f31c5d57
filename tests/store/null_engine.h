// Test fakes: an engine whose roles do nothing (the store thread hands its batches to the
// write function it was started with, and the tests' jobs ask nothing of the engine), and one
// with several sessions (store/engine.h), each a NullEngine of its own, for the lanes.
#pragma once

#include <memory>
#include <vector>

#include "store/engine.h"

namespace turnpike::store {

class NullRecords : public GovernanceRecords {
 public:
  Result<GovernanceRows> LoadAll() override { return GovernanceRows{}; }
  Result<bool> PollChanges() override { return false; }
  int ChangeFd() const override { return change_fd; }
  Status UpsertPlan(const governance::Plan&) override { return Ok{}; }
  Status InsertTenant(const governance::Tenant&) override { return Ok{}; }
  Status UpdateTenant(const governance::Tenant&) override { return Ok{}; }
  Status InsertKey(const governance::Key&) override { return Ok{}; }
  Status SetKeyStatus(std::string_view, governance::KeyStatus, int64_t) override { return Ok{}; }
  Status DeleteKey(std::string_view) override { return Ok{}; }
  Status UpsertPrice(const PriceOverride&) override { return Ok{}; }
  Status DeletePrice(std::string_view) override { return Ok{}; }

  int change_fd = -1;  // what ChangeFd names (a test's pipe)
};

class NullCallLog : public CallLogStore {
 public:
  Status WriteCalls(CallBatchParts, bool, std::span<const SpendRow>) override { return Ok{}; }
  Result<std::vector<CallRow>> QueryCalls(const CallQuery&) override {
    return std::vector<CallRow>{};
  }
  Result<std::vector<SpendRow>> LoadSpend(std::span<const std::string>) override {
    return std::vector<SpendRow>{};
  }
  Result<std::vector<SpendRow>> SumCallLog(const std::string&) override {
    return std::vector<SpendRow>{};
  }
  Result<std::vector<SpendRow>> ReconcileSpend(std::span<const std::string>) override {
    return std::vector<SpendRow>{};
  }
};

class NullEngine : public Engine {
 public:
  Status Migrate() override { return Ok{}; }
  int SchemaVersion() override { return 1; }
  GovernanceRecords& records() override { return records_; }
  CallLogStore& call_log() override { return call_log_; }
  const StatementCounts& statements() const override { return counts_; }
  NullRecords& null_records() { return records_; }

 private:
  NullRecords records_;
  NullCallLog call_log_;
  StatementCounts counts_;
};

// `sessions` sessions: session(0) is this engine, the others NullEngines of their own.
class PooledNullEngine : public NullEngine {
 public:
  explicit PooledNullEngine(size_t sessions) {
    for (size_t i = 1; i < sessions; ++i) more_.push_back(std::make_unique<NullEngine>());
  }
  size_t sessions() const override { return 1 + more_.size(); }
  Engine& session(size_t i) override { return i == 0 ? *this : *more_.at(i - 1); }

 private:
  std::vector<std::unique_ptr<NullEngine>> more_;
};

}  // namespace turnpike::store
