// FakeEngine: an engine in memory, for tests of what speaks only the store's roles
// (store/engine.h). Its records are vectors that a test may change "behind the service's back"
// as another writer would, which the change feed then reports; its call log keeps every batch
// written; its spend and reconcile sums are whatever the test sets.
//
// Thread safety: every call takes the engine's one mutex, so a test may read it while the
// store thread runs.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "store/engine.h"

namespace turnpike::control {

class FakeRecords : public store::GovernanceRecords {
 public:
  explicit FakeRecords(std::mutex& mu) : mu_(mu) {}

  // Another writer changes the records: the next poll reports it.
  void ChangeBehindTheBack(const std::function<void(store::GovernanceRows&)>& change) {
    std::lock_guard lock(mu_);
    change(rows_);
    changed_ = true;
  }
  store::GovernanceRows rows() const {
    std::lock_guard lock(mu_);
    return rows_;
  }
  int writes() const {
    std::lock_guard lock(mu_);
    return writes_;
  }
  int polls() const {
    std::lock_guard lock(mu_);
    return polls_;
  }

  Result<store::GovernanceRows> LoadAll() override {
    std::lock_guard lock(mu_);
    return rows_;
  }
  Result<bool> PollChanges() override {
    std::lock_guard lock(mu_);
    ++polls_;
    return std::exchange(changed_, false);
  }
  Status UpsertPlan(const governance::Plan& plan) override {
    return Write([&](store::GovernanceRows& rows) -> Status {
      std::erase_if(rows.plans, [&](const governance::Plan& p) { return p.id == plan.id; });
      rows.plans.push_back(plan);
      return Ok{};
    });
  }
  Status InsertTenant(const governance::Tenant& tenant) override {
    return Write([&](store::GovernanceRows& rows) -> Status {
      for (const governance::Tenant& t : rows.tenants) {
        if (t.id == tenant.id) return Error{ErrorCode::kConflict, "duplicate tenant", ""};
      }
      rows.tenants.push_back(tenant);
      return Ok{};
    });
  }
  Status UpdateTenant(const governance::Tenant& tenant) override {
    return Write([&](store::GovernanceRows& rows) -> Status {
      for (governance::Tenant& t : rows.tenants) {
        if (t.id == tenant.id) {
          t = tenant;
          return Ok{};
        }
      }
      return Error{ErrorCode::kNotFound, "no tenant", ""};
    });
  }
  Status InsertKey(const governance::Key& key) override {
    return Write([&](store::GovernanceRows& rows) -> Status {
      for (const governance::Key& k : rows.keys) {
        if (k.public_id == key.public_id) return Error{ErrorCode::kConflict, "duplicate id", ""};
      }
      rows.keys.push_back(key);
      return Ok{};
    });
  }
  Status SetKeyStatus(std::string_view public_id, governance::KeyStatus status, int64_t) override {
    return Write([&](store::GovernanceRows& rows) -> Status {
      for (governance::Key& k : rows.keys) {
        if (k.public_id == public_id) {
          k.status = status;
          return Ok{};
        }
      }
      return Error{ErrorCode::kNotFound, "no key", ""};
    });
  }
  Status DeleteKey(std::string_view public_id) override {
    return Write([&](store::GovernanceRows& rows) -> Status {
      if (std::erase_if(rows.keys,
                        [&](const governance::Key& k) { return k.public_id == public_id; }) == 0) {
        return Error{ErrorCode::kNotFound, "no key", ""};
      }
      return Ok{};
    });
  }
  Status UpsertPrice(const store::PriceOverride& price) override {
    return Write([&](store::GovernanceRows& rows) -> Status {
      std::erase_if(rows.prices,
                    [&](const store::PriceOverride& p) { return p.model == price.model; });
      rows.prices.push_back(price);
      return Ok{};
    });
  }
  Status DeletePrice(std::string_view model) override {
    return Write([&](store::GovernanceRows& rows) -> Status {
      const size_t removed = std::erase_if(
          rows.prices, [&](const store::PriceOverride& p) { return p.model == model; });
      if (removed == 0) return Error{ErrorCode::kNotFound, "no price", ""};
      return Ok{};
    });
  }

 private:
  // The service's own writes: not reported by the feed (as the embedded engine's are not).
  Status Write(const std::function<Status(store::GovernanceRows&)>& write) {
    std::lock_guard lock(mu_);
    Status done = write(rows_);
    if (done.ok()) ++writes_;
    return done;
  }

  std::mutex& mu_;
  store::GovernanceRows rows_;
  bool changed_ = true;  // the first poll reports a change (store/records.h)
  int writes_ = 0;
  int polls_ = 0;
};

// One WriteCalls call, as the fake received it.
struct WrittenBatch {
  std::vector<store::CallRecord> records;
  bool log_rows = false;
};

class FakeCallLog : public store::CallLogStore {
 public:
  explicit FakeCallLog(std::mutex& mu) : mu_(mu) {}

  std::vector<WrittenBatch> batches() const {
    std::lock_guard lock(mu_);
    return batches_;
  }
  // What LoadSpend and SumCallLog answer, for every month asked.
  void SetAnswers(std::vector<store::SpendRow> persisted, std::vector<store::SpendRow> logged) {
    std::lock_guard lock(mu_);
    persisted_ = std::move(persisted);
    logged_ = std::move(logged);
  }
  std::vector<store::SpendRow> spend_added() const {
    std::lock_guard lock(mu_);
    return spend_added_;
  }

  Status WriteCalls(store::CallBatchParts parts, bool log_rows,
                    std::span<const store::SpendRow>) override {
    std::lock_guard lock(mu_);
    WrittenBatch& batch = batches_.emplace_back();
    batch.log_rows = log_rows;
    for (const store::CallBatchPart& part : parts) {
      for (size_t i = part.begin; i < part.end; ++i) {
        batch.records.push_back(store::RecordOf(part.batch->record(i)));
      }
    }
    return Ok{};
  }
  Result<std::vector<store::CallRow>> QueryCalls(const store::CallQuery&) override {
    std::lock_guard lock(mu_);
    std::vector<store::CallRow> out;
    for (const WrittenBatch& batch : batches_) {
      for (const store::CallRecord& r : batch.records) {
        out.push_back({static_cast<int64_t>(out.size()) + 1, r});
      }
    }
    return out;
  }
  Result<std::vector<store::SpendRow>> LoadSpend(std::span<const std::string> months) override {
    std::lock_guard lock(mu_);
    return ForMonths(persisted_, months);
  }
  Result<std::vector<store::SpendRow>> SumCallLog(const std::string& month) override {
    std::lock_guard lock(mu_);
    const std::string months[] = {month};
    return ForMonths(logged_, months);
  }
  // The differences between each month's answers, added to the persisted rows (and kept in
  // spend_added()); every call counted in reconcile_calls().
  Result<std::vector<store::SpendRow>> ReconcileSpend(
      std::span<const std::string> months) override {
    std::lock_guard lock(mu_);
    ++reconcile_calls_;
    std::vector<store::SpendRow> out;
    for (const std::string& month : months) {
      const std::string one[] = {month};
      std::map<std::pair<store::SpendScope, std::string>, int64_t> drift;
      for (const store::SpendRow& r : ForMonths(logged_, one)) {
        drift[{r.scope, r.scope_id}] += r.spent_micros;
      }
      for (const store::SpendRow& r : ForMonths(persisted_, one)) {
        drift[{r.scope, r.scope_id}] -= r.spent_micros;
      }
      for (const auto& [scope, micros] : drift) {
        if (micros != 0) out.push_back({scope.first, scope.second, month, micros});
      }
    }
    spend_added_.insert(spend_added_.end(), out.begin(), out.end());
    return out;
  }
  int reconcile_calls() const {
    std::lock_guard lock(mu_);
    return reconcile_calls_;
  }

 private:
  static std::vector<store::SpendRow> ForMonths(const std::vector<store::SpendRow>& rows,
                                                std::span<const std::string> months) {
    std::vector<store::SpendRow> out;
    for (const std::string& month : months) {
      for (store::SpendRow row : rows) {
        row.month = month;
        out.push_back(std::move(row));
      }
    }
    return out;
  }

  std::mutex& mu_;
  std::vector<WrittenBatch> batches_;
  std::vector<store::SpendRow> persisted_;
  std::vector<store::SpendRow> logged_;
  std::vector<store::SpendRow> spend_added_;
  int reconcile_calls_ = 0;
};

class FakeEngine : public store::Engine {
 public:
  Status Migrate() override {
    std::lock_guard lock(mu_);
    schema_version_ = 1;
    return Ok{};
  }
  int SchemaVersion() override {
    std::lock_guard lock(mu_);
    return schema_version_;
  }
  store::GovernanceRecords& records() override { return records_; }
  store::CallLogStore& call_log() override { return call_log_; }
  const store::StatementCounts& statements() const override { return counts_; }

  FakeRecords& fake_records() { return records_; }
  FakeCallLog& fake_call_log() { return call_log_; }

 private:
  mutable std::mutex mu_;
  int schema_version_ = 0;
  FakeRecords records_{mu_};
  FakeCallLog call_log_{mu_};
  store::StatementCounts counts_;
};

// A FakeEngine with `sessions` sessions (store/engine.h): session 0 is the engine, the others
// views of the same records and call log. Every session counts how often a role was asked of
// it, so a test sees which lane did what.
class PooledFakeEngine : public FakeEngine {
 public:
  explicit PooledFakeEngine(size_t sessions) : uses_(sessions) {
    for (size_t i = 1; i < sessions; ++i) views_.push_back(std::make_unique<View>(*this, i));
  }
  size_t sessions() const override { return uses_.size(); }
  store::Engine& session(size_t i) override {
    if (i == 0) return *this;
    return *views_.at(i - 1);
  }
  store::GovernanceRecords& records() override { return Use(0, FakeEngine::records()); }
  store::CallLogStore& call_log() override { return Use(0, FakeEngine::call_log()); }
  uint64_t uses(size_t session) const { return uses_.at(session).load(); }

 private:
  class View : public store::Engine {
   public:
    View(PooledFakeEngine& owner, size_t index) : owner_(owner), index_(index) {}
    Status Migrate() override { return Error{ErrorCode::kInternal, "not on a session", ""}; }
    int SchemaVersion() override { return owner_.SchemaVersion(); }
    store::GovernanceRecords& records() override {
      return owner_.Use(index_, owner_.fake_records());
    }
    store::CallLogStore& call_log() override { return owner_.Use(index_, owner_.fake_call_log()); }
    const store::StatementCounts& statements() const override { return owner_.statements(); }

   private:
    PooledFakeEngine& owner_;
    const size_t index_;
  };

  template <typename Role>
  Role& Use(size_t session, Role& role) {
    uses_.at(session).fetch_add(1);
    return role;
  }

  std::vector<std::atomic<uint64_t>> uses_;
  std::vector<std::unique_ptr<View>> views_;
};

}  // namespace turnpike::control
