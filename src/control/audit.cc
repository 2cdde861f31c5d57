// The admin audit log's two sides on the store thread (governance_service.h): a row queued per
// admin write, and its pages.
#include <cstdio>
#include <utility>

#include "control/governance_service.h"

namespace turnpike::control {
namespace {

// The row's job: written on the control lane, in the order the writes were answered.
class AuditJob final : public store::StoreJob {
 public:
  AuditJob(AuditRow row, std::atomic<uint64_t>& dropped)
      : row_(std::move(row)), dropped_(dropped) {}
  void Run(store::Engine& engine) override {
    SecurityStore* security = engine.role<SecurityStore>();
    if (security == nullptr) return;
    Status written = security->AppendAudit({row_});
    if (!written.ok()) {
      dropped_.fetch_add(1);
      std::fprintf(stderr, "turnpike: admin audit row not written: %s\n",
                   written.error().message.c_str());
    }
  }
  void Refuse(const Error&) override { dropped_.fetch_add(1); }

 private:
  AuditRow row_;
  std::atomic<uint64_t>& dropped_;
};

}  // namespace

void GovernanceService::RecordAudit(AuditRow row) {
  thread_.Post(std::make_unique<AuditJob>(std::move(row), audit_dropped_),
               store::JobLane::kControl);
}

boost::asio::awaitable<Result<std::vector<AuditRow>>> GovernanceService::Audit(AuditQuery query) {
  auto job = [query = std::move(query)](store::Engine& engine) -> Result<std::vector<AuditRow>> {
    SecurityStore* security = engine.role<SecurityStore>();
    if (security == nullptr) return std::vector<AuditRow>{};
    return security->Audit(query);
  };
  Result<std::vector<AuditRow>> rows =
      co_await thread_.Call<std::vector<AuditRow>>(std::move(job), store::JobLane::kRead);
  co_return rows;
}

}  // namespace turnpike::control
